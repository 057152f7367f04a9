"""cuda_fp8.h: E4M3 and E5M2 conversions bit-exact against a numpy model of round-to-nearest-
even on the table of every fp8 value (saturation, NaN, subnormals, both formats), every code
back to half, float and bfloat16, and a kernel using fp8 parsed through the shim, lowered,
compiled and run."""

from __future__ import annotations

import numpy as np
import pytest

from cuda_fixtures.build import build_and_run as build_and_run_lowered
from test_runtime_support import BINARY_IO, build, parse_lines, run
from tools.cuda import translate_file

FP8_PROGRAM = r"""
#include <cuda_fp8.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

""" + BINARY_IO + r"""

static const __nv_fp8_interpretation_t FORMATS[2] = {__NV_E4M3, __NV_E5M2};
static const __nv_saturation_t MODES[2] = {__NV_NOSAT, __NV_SATFINITE};

int main() {
    std::vector<float> floats = load<float>("floats.bin");
    std::vector<double> doubles = load<double>("doubles.bin");
    // Rows: (format, saturation) in the order E4M3 nosat, E4M3 satfinite, E5M2 nosat, E5M2 satfinite.
    std::vector<unsigned char> from_float(4 * floats.size()), from_double(4 * doubles.size());
    for (int f = 0; f < 2; ++f)
        for (int s = 0; s < 2; ++s) {
            const size_t row = 2 * f + s;
            for (size_t i = 0; i < floats.size(); ++i)
                from_float[row * floats.size() + i] = __nv_cvt_float_to_fp8(floats[i], MODES[s], FORMATS[f]);
            for (size_t i = 0; i < doubles.size(); ++i)
                from_double[row * doubles.size() + i] = __nv_cvt_double_to_fp8(doubles[i], MODES[s], FORMATS[f]);
        }
    save("from_float.bin", from_float);
    save("from_double.bin", from_double);

    // Every code of both formats back to float, half bits and bfloat16 bits (rows: E4M3, E5M2),
    // and from each of those wider values back to fp8 (no saturation: infinities must survive).
    std::vector<float> to_float(512);
    std::vector<unsigned short> to_half(512), to_bf16(512);
    std::vector<unsigned char> round_trips(3 * 512);
    for (int f = 0; f < 2; ++f)
        for (unsigned code = 0; code < 256; ++code) {
            const size_t i = 256 * f + code;
            const __nv_fp8_storage_t bits = static_cast<__nv_fp8_storage_t>(code);
            const __half_raw half_raw = __nv_cvt_fp8_to_halfraw(bits, FORMATS[f]);
            __nv_bfloat16 bf16;
            if (f == 0) {
                __nv_fp8_e4m3 value;
                value.__x = bits;
                to_float[i] = static_cast<float>(value);
                bf16 = static_cast<__nv_bfloat16>(value);
            } else {
                __nv_fp8_e5m2 value;
                value.__x = bits;
                to_float[i] = static_cast<float>(value);
                bf16 = static_cast<__nv_bfloat16>(value);
            }
            to_half[i] = half_raw.x;
            to_bf16[i] = __bfloat16_as_ushort(bf16);
            round_trips[i] = __nv_cvt_float_to_fp8(to_float[i], __NV_NOSAT, FORMATS[f]);
            round_trips[512 + i] = __nv_cvt_halfraw_to_fp8(half_raw, __NV_NOSAT, FORMATS[f]);
            round_trips[1024 + i] = __nv_cvt_bfloat16raw_to_fp8(bf16, __NV_NOSAT, FORMATS[f]);
        }
    save("to_float.bin", to_float);
    save("to_half.bin", to_half);
    save("to_bf16.bin", to_bf16);
    save("round_trips.bin", round_trips);

    // Pairs and tetrads: element 0 in the low byte; the classes saturate.
    const __nv_fp8x2_storage_t pair = __nv_cvt_float2_to_fp8x2(make_float2(1.0f, 2.0f), __NV_SATFINITE, __NV_E4M3);
    const __half2_raw pair_halves = __nv_cvt_fp8x2_to_halfraw2(pair, __NV_E4M3);
    const __nv_fp8x4_e4m3 tetrad(make_float4(1.0f, 2.0f, -1.0f, 1000.0f));
    const float4 tetrad_back = static_cast<float4>(tetrad);
    const __nv_fp8x2_e5m2 half_pair(__floats2half2_rn(-3.0f, 0.25f));
    const float2 half_pair_back = static_cast<float2>(half_pair);
    printf("pair %x %x %x\n", pair, pair_halves.x, pair_halves.y);
    printf("double_pair %x\n", __nv_cvt_double2_to_fp8x2(make_double2(-1e-30, -448.0), __NV_NOSAT, __NV_E4M3));
    printf("tetrad %x %g %g %g %g\n", tetrad.__x, tetrad_back.x, tetrad_back.y, tetrad_back.z, tetrad_back.w);
    printf("half_pair %x %g %g\n", half_pair.__x, half_pair_back.x, half_pair_back.y);
    printf("bf16_pair %x\n", __nv_cvt_bfloat16raw2_to_fp8x2(__floats2bfloat162_rn(0.5f, 1e9f), __NV_NOSAT, __NV_E5M2));

    // Class conversions: constructors saturate; integers truncate and clamp, NaN gives 0.
    const __nv_fp8_e4m3 big(1000.0f), nan_e4m3(NAN), minus(-3.75f);
    const __nv_fp8_e5m2 huge(1e30), from_int(300), from_half(__float2half(-0.0f));
    printf("classes %x %x %x %x %x %x\n", big.__x, nan_e4m3.__x, minus.__x, huge.__x, from_int.__x, from_half.__x);
    printf("integers %d %d %d %d %d %d %d\n", static_cast<int>(minus), static_cast<int>(static_cast<unsigned char>(minus)),
           static_cast<int>(static_cast<short>(huge)), static_cast<int>(nan_e4m3), static_cast<int>(static_cast<signed char>(big)),
           static_cast<int>(static_cast<bool>(from_half)), static_cast<int>(static_cast<bool>(nan_e4m3)));
    printf("wider %g %g %g\n", __half2float(static_cast<__half>(minus)), static_cast<double>(huge),
           __bfloat162float(static_cast<__nv_bfloat16>(from_int)));
    return 0;
}
"""

# (format, saturation) rows as the program writes them.
ROWS = [("e4m3", False), ("e4m3", True), ("e5m2", False), ("e5m2", True)]
MANTISSA_BITS = {"e4m3": 3, "e5m2": 2}
BIAS = {"e4m3": 7, "e5m2": 15}
MAX_FINITE = {"e4m3": 448.0, "e5m2": 57344.0}


def code_value(code: int, fmt: str) -> float:
    """The value of a magnitude code (0..127) from the format's definition."""
    m, bias = MANTISSA_BITS[fmt], BIAS[fmt]
    exponent, fraction = code >> m, code & ((1 << m) - 1)
    if exponent == 0:
        return fraction * 2.0 ** (1 - bias - m)
    return (1 + fraction / 2**m) * 2.0 ** (exponent - bias)


def is_nan_code(code: int, fmt: str) -> bool:
    magnitude = code & 0x7F
    return magnitude == 0x7F if fmt == "e4m3" else magnitude > 0x7C


def decode(code: int, fmt: str) -> float:
    if is_nan_code(code, fmt):
        return float("nan")
    magnitude = code & 0x7F
    value = float("inf") if fmt == "e5m2" and magnitude == 0x7C else code_value(magnitude, fmt)
    return -value if code & 0x80 else value


def model_encode(values: np.ndarray, fmt: str, saturate: bool) -> np.ndarray:
    """Nearest value of the format, ties to the even code, on the table of finite magnitudes plus
    the first value past the largest (the code an unbounded exponent would give): rounding to it
    is overflow.  NaN keeps its sign."""
    first_beyond = 0x7F if fmt == "e4m3" else 0x7C  # 480 and 65536
    table = np.array([code_value(code, fmt) for code in range(first_beyond + 1)])
    magnitudes = np.abs(values)
    above = np.clip(np.searchsorted(table, magnitudes), 1, first_beyond)
    below = above - 1
    to_below = magnitudes - table[below]
    to_above = table[above] - magnitudes
    codes = np.where((to_below < to_above) | ((to_below == to_above) & (below % 2 == 0)), below, above)
    codes = np.where(magnitudes >= table[first_beyond], first_beyond, codes)  # inf, and what lies beyond
    max_code = 0x7E if fmt == "e4m3" else 0x7B
    overflow = 0x7F if fmt == "e4m3" else 0x7C  # NaN / inf
    codes = np.where(codes == first_beyond, max_code if saturate else overflow, codes)
    codes = np.where(np.isnan(values), 0x7F if fmt == "e4m3" else 0x7E, codes)
    return (codes | np.where(np.signbit(values), 0x80, 0)).astype(np.uint8)


def bfloat16_rne(values: np.ndarray) -> np.ndarray:
    """float32 -> the nearest bfloat16 (ties to even), as float64."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def interesting_values() -> np.ndarray:
    """Every fp8 value of both formats, the ties between neighbours and the float32 values just
    beside them, the overflow thresholds, subnormals, zeros, infinities and NaN, both signs."""
    values = []
    for fmt in ("e4m3", "e5m2"):
        table = np.array([code_value(code, fmt) for code in range(0x80)], dtype=np.float64)
        ties = (table[:-1] + table[1:]) / 2  # exact in float32
        values += [table, ties]
    values = np.concatenate(values).astype(np.float32)
    beside = np.concatenate([np.nextafter(values, np.float32(np.inf)), np.nextafter(values, np.float32(-np.inf))])
    special = np.array([464.0, 480.0, 500.0, 61440.0, 65536.0, 1e9, 3e38, 2.0**-10, 2.0**-17, 2.0**-18, 1e-40, 0.0,
                        np.inf, np.nan], dtype=np.float32)
    values = np.concatenate([values, beside, special])
    return np.concatenate([values, -values])


@pytest.fixture(scope="module")
def fp8_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("fp8")
    rng = np.random.default_rng(11)
    floats = np.concatenate([
        interesting_values(),
        (rng.normal(0, 1, 100_000) * np.exp2(rng.integers(-20, 18, 100_000))).astype(np.float32),
    ])
    # Values a hair off a tie, visible only in double: converting through float would create the
    # tie and round to even; a single rounding must not.
    ties = np.concatenate([interesting_values().astype(np.float64), rng.normal(0, 100, 20_000)])
    doubles = np.concatenate([ties * (1 + 2.0**-40), ties * (1 - 2.0**-40), ties])
    floats.tofile(workdir / "floats.bin")
    doubles.tofile(workdir / "doubles.bin")
    exe = build({"fp8.cpp": FP8_PROGRAM}, workdir)
    output = run(exe, threads=1)
    return workdir, floats, doubles, parse_lines(output)


def test_the_model_gives_the_hand_checked_encodings():
    """The model itself, on hand-checked codes: units, largest finite values, ties to even, overflow, subnormals."""
    cases = [
        (1.0, "e4m3", False, 0x38), (1.0, "e5m2", False, 0x3C), (448.0, "e4m3", False, 0x7E),
        (464.0, "e4m3", False, 0x7E),  # tie between 448 (even code) and 480 (odd, NaN): 448
        (464.1, "e4m3", False, 0x7F), (464.1, "e4m3", True, 0x7E), (1.0625, "e4m3", False, 0x38),
        (1.1875, "e4m3", False, 0x3A), (57344.0, "e5m2", False, 0x7B), (61440.0, "e5m2", False, 0x7C),
        (61440.0, "e5m2", True, 0x7B), (-1e9, "e5m2", False, 0xFC), (2.0**-9, "e4m3", False, 0x01),
        (2.0**-10, "e4m3", False, 0x00), (1.5 * 2.0**-10, "e4m3", False, 0x01), (2.0**-16, "e5m2", False, 0x01),
        (-0.0, "e4m3", False, 0x80), (float("inf"), "e4m3", True, 0x7E), (float("nan"), "e4m3", True, 0x7F),
    ]
    for value, fmt, saturate, expected in cases:
        assert model_encode(np.array([value]), fmt, saturate)[0] == expected, (value, fmt, saturate)


@pytest.mark.parametrize("source", ["float", "double"])
def test_conversions_to_fp8_match_the_model(fp8_run, source):
    workdir, floats, doubles, _ = fp8_run
    values = floats.astype(np.float64) if source == "float" else doubles
    got = np.fromfile(workdir / f"from_{source}.bin", dtype=np.uint8).reshape(4, values.size)
    for row, (fmt, saturate) in enumerate(ROWS):
        expected = model_encode(values, fmt, saturate)
        wrong = np.flatnonzero(got[row] != expected)
        assert wrong.size == 0, (fmt, saturate, values[wrong[:5]], got[row][wrong[:5]], expected[wrong[:5]])


def test_the_classic_fixed_codes_come_out_of_the_runtime(fp8_run):
    workdir, floats, *_ = fp8_run
    got = np.fromfile(workdir / "from_float.bin", dtype=np.uint8).reshape(4, floats.size)
    index = {float(v): i for i, v in enumerate(floats.tolist()) if not np.isnan(v)}
    assert got[0][index[1.0]] == 0x38 and got[2][index[1.0]] == 0x3C
    assert got[0][index[448.0]] == 0x7E and got[0][index[464.0]] == 0x7E  # tie to even
    assert got[0][index[500.0]] == 0x7F and got[1][index[500.0]] == 0x7E  # NaN / saturated
    assert got[2][index[1e9]] == 0x7C and got[3][index[1e9]] == 0x7B  # inf / saturated
    assert got[3][index[float("-inf")]] == 0xFB
    assert got[0][index[2.0**-10]] == 0x00 and got[2][index[2.0**-17]] == 0x00  # half the smallest subnormal: to zero
    nan_at = np.flatnonzero(np.isnan(floats))
    assert set(got[0][nan_at] & 0x7F) == {0x7F} and set(got[1][nan_at] & 0x7F) == {0x7F}
    assert all(is_nan_code(int(code), "e5m2") for code in got[3][nan_at])


def test_every_code_converts_back_exactly(fp8_run):
    workdir, *_ = fp8_run
    to_float = np.fromfile(workdir / "to_float.bin", dtype=np.float32).reshape(2, 256)
    to_half = np.fromfile(workdir / "to_half.bin", dtype=np.uint16).reshape(2, 256)
    to_bf16 = np.fromfile(workdir / "to_bf16.bin", dtype=np.uint16).reshape(2, 256)
    for row, fmt in enumerate(("e4m3", "e5m2")):
        expected = np.array([decode(code, fmt) for code in range(256)], dtype=np.float32)
        nan = np.isnan(expected)
        assert np.array_equal(to_float[row][~nan].view(np.uint32), expected[~nan].view(np.uint32))  # -0.0 too
        assert np.isnan(to_float[row][nan]).all()
        assert np.array_equal(to_half[row][~nan], expected[~nan].astype(np.float16).view(np.uint16))
        assert np.isnan(to_half[row].view(np.float16)[nan]).all()
        bf16_values = (to_bf16[row].astype(np.uint32) << 16).view(np.float32)
        assert np.array_equal(bf16_values[~nan].view(np.uint32), expected[~nan].view(np.uint32))
        assert np.isnan(bf16_values[nan]).all()
    # E5M2 is the top byte of a half (NaN payloads included); E4M3's NaN is the canonical half NaN.
    assert np.array_equal(to_half[1], np.arange(256, dtype=np.uint16) << 8)
    assert to_half[0][0x7F] == 0x7FFF and to_half[0][0xFF] == 0x7FFF


def test_every_code_round_trips_through_float_half_and_bfloat16(fp8_run):
    workdir, *_ = fp8_run
    round_trips = np.fromfile(workdir / "round_trips.bin", dtype=np.uint8).reshape(3, 2, 256)
    codes = np.arange(256, dtype=np.uint8)
    for row, fmt in enumerate(("e4m3", "e5m2")):
        nan = np.array([is_nan_code(int(code), fmt) for code in codes])
        for through in range(3):  # float, half, bfloat16
            assert np.array_equal(round_trips[through, row][~nan], codes[~nan]), (fmt, through)
            assert all(is_nan_code(int(code), fmt) for code in round_trips[through, row][nan])


def test_pairs_tetrads_and_class_conversions(fp8_run):
    results = fp8_run[-1]
    assert results["pair"] == ["4038", "3c00", "4000"]  # 1.0 low byte, 2.0 high byte
    assert results["double_pair"] == ["fe80"]  # -1e-30 underflows to -0 (low byte), -448 (high byte)
    assert results["tetrad"] == ["7eb84038", "1", "2", "-1", "448"]  # 1000 saturates in the class
    assert results["half_pair"] == ["34c2", "-3", "0.25"]
    assert results["bf16_pair"] == ["7c38"]  # 0.5, and 1e9 overflows to inf without saturation
    # 1000 and 1e30 saturate; -3.75 is exact (-1.111b x 2); 300 rounds to 320 (1.01b x 2^8); -0 keeps its sign.
    assert results["classes"] == ["7e", "7f", "c7", "7b", "5d", "80"]
    assert results["integers"] == ["-3", "0", "32767", "0", "127", "0", "1"]
    assert results["wider"] == ["-3.75", "57344", "320"]


SHIM_KERNEL = r"""
#include <cuda_fp8.h>
#include <cuda_bf16.h>
#include <cstdio>

// Quantize a block to E4M3 through shared memory (a barrier in between: each thread reads its
// neighbour's value), and to E5M2 pairs; read the E4M3 values back through the class.
__global__ void quantize(const float* in, __nv_fp8_storage_t* e4m3, __nv_fp8x2_storage_t* e5m2_pairs, float* back,
                         float inverse_scale, int n) {
  __shared__ __nv_fp8_e4m3 tile[64];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  __nv_fp8_e4m3 mine(0.0f);
  if (i < n) mine = __nv_fp8_e4m3(__float2bfloat16(in[i] * inverse_scale));
  tile[threadIdx.x] = mine;
  __syncthreads();
  if (i < n) {
    const __nv_fp8_e4m3 neighbour = tile[(threadIdx.x + 1) % blockDim.x];
    e4m3[i] = __nv_cvt_float_to_fp8(in[i] * inverse_scale, __NV_SATFINITE, __NV_E4M3);
    back[i] = static_cast<float>(neighbour) + __half2float(__half(__nv_cvt_fp8_to_halfraw(mine.__x, __NV_E4M3)));
    if (i % 2 == 0 && i + 1 < n)
      e5m2_pairs[i / 2] = __nv_cvt_float2_to_fp8x2(make_float2(in[i], in[i + 1]), __NV_NOSAT, __NV_E5M2);
  }
}

// A CPU reference calls the same conversion from host code, as real applications do.
static __nv_fp8_storage_t reference_e4m3(float value, float inverse_scale) {
  return __nv_cvt_float_to_fp8(value * inverse_scale, __NV_SATFINITE, __NV_E4M3);
}

int main() {
  const int n = 200, threads = 64;
  float *in, *back;
  __nv_fp8_storage_t* e4m3;
  __nv_fp8x2_storage_t* e5m2_pairs;
  cudaMallocManaged(&in, n * sizeof(float));
  cudaMallocManaged(&back, n * sizeof(float));
  cudaMallocManaged(&e4m3, n);
  cudaMallocManaged(&e5m2_pairs, n);
  for (int i = 0; i < n; ++i) in[i] = float(i - 100) * 37.25f / float(1 + i % 7);  // up to 465.6 scaled: saturates
  quantize<<<(n + threads - 1) / threads, threads>>>(in, e4m3, e5m2_pairs, back, 0.125f, n);
  cudaDeviceSynchronize();
  int reference_mismatches = 0;
  for (int i = 0; i < n; ++i) reference_mismatches += e4m3[i] != reference_e4m3(in[i], 0.125f);
  printf("e4m3");
  for (int i = 0; i < n; ++i) printf(" %d", e4m3[i]);
  printf("\ne5m2_pairs");
  for (int i = 0; i < n / 2; ++i) printf(" %d", e5m2_pairs[i]);
  printf("\nback");
  for (int i = 0; i < n; ++i) printf(" %a", back[i]);  // hexadecimal: exact
  printf("\n");
  printf("reference_mismatches %d\n", reference_mismatches);
}
"""


@pytest.mark.parametrize("threads", [1, 3])
def test_fp8_kernel_parses_through_the_shim_lowers_and_runs(tmp_path, threads):
    result = translate_file(SHIM_KERNEL, "quantize.cu")
    assert result.module.diagnostics == []  # the shim declares all of cuda_fp8.h that is used, host side too
    assert result.unsupported == [] and [kernel.lowered for kernel in result.kernels] == [True]
    output = build_and_run_lowered(result.cpp, "", tmp_path, threads=threads)
    results = parse_lines(output)
    assert results["reference_mismatches"] == ["0"]
    n = 200
    e4m3 = np.array(results["e4m3"], dtype=np.int64)
    e5m2_pairs = np.array(results["e5m2_pairs"], dtype=np.int64)
    back = np.array([float.fromhex(value) for value in results["back"]], dtype=np.float32)
    index = np.arange(n)
    inputs = (index - 100).astype(np.float32) * np.float32(37.25) / (1 + index % 7).astype(np.float32)
    scaled = inputs * np.float32(0.125)  # exact
    assert np.array_equal(e4m3, model_encode(scaled.astype(np.float64), "e4m3", True))
    e5m2 = model_encode(inputs.astype(np.float64), "e5m2", False).astype(np.uint16)
    assert np.array_equal(e5m2_pairs, e5m2[0::2] | (e5m2[1::2] << 8))
    # back[i] = its own E4M3 value (through bfloat16 first) + the next thread's in the block of 64.
    quantized = np.array([decode(int(code), "e4m3") for code in model_encode(bfloat16_rne(scaled), "e4m3", True)],
                         dtype=np.float32)
    neighbour = index - index % 64 + (index % 64 + 1) % 64
    neighbour_values = np.where(neighbour < n, quantized[np.minimum(neighbour, n - 1)], 0).astype(np.float32)
    assert np.array_equal(back, neighbour_values + quantized)
