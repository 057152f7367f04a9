"""__half and __nv_bfloat16: conversions bit-exact against numpy (float16) and a numpy model
of bfloat16 rounding, in every rounding mode; arithmetic correctly rounded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_runtime_support import BINARY_IO, build, run

HALF_PROGRAM = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <vector>

""" + BINARY_IO + r"""

int main() {
    std::vector<float> floats = load<float>("floats.bin");
    std::vector<double> doubles = load<double>("doubles.bin");
    std::vector<unsigned short> pairs = load<unsigned short>("pairs.bin");  // a0 b0 c0 a1 b1 c1 ...
    const size_t n = floats.size();

    // float -> 16 bit in four rounding modes, for half and bfloat16.
    std::vector<unsigned short> half_bits(4 * n), bf16_bits(4 * n);
    for (size_t i = 0; i < n; ++i) {
        half_bits[i] = __half_as_ushort(__float2half(floats[i]));
        half_bits[n + i] = __half_as_ushort(__float2half_rz(floats[i]));
        half_bits[2 * n + i] = __half_as_ushort(__float2half_rd(floats[i]));
        half_bits[3 * n + i] = __half_as_ushort(__float2half_ru(floats[i]));
        bf16_bits[i] = __bfloat16_as_ushort(__float2bfloat16(floats[i]));
        bf16_bits[n + i] = __bfloat16_as_ushort(__float2bfloat16_rz(floats[i]));
        bf16_bits[2 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rd(floats[i]));
        bf16_bits[3 * n + i] = __bfloat16_as_ushort(__float2bfloat16_ru(floats[i]));
    }
    save("half_from_float.bin", half_bits);
    save("bf16_from_float.bin", bf16_bits);

    std::vector<unsigned short> half_from_double(doubles.size()), bf16_from_double(doubles.size());
    for (size_t i = 0; i < doubles.size(); ++i) {
        half_from_double[i] = __half_as_ushort(__double2half(doubles[i]));
        bf16_from_double[i] = __bfloat16_as_ushort(__double2bfloat16(doubles[i]));
    }
    save("half_from_double.bin", half_from_double);
    save("bf16_from_double.bin", bf16_from_double);

    // Every 16-bit pattern back to float.
    std::vector<float> half_to_float(65536), bf16_to_float(65536);
    for (unsigned int bits = 0; bits < 65536; ++bits) {
        half_to_float[bits] = __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
        bf16_to_float[bits] = __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(bits)));
    }
    save("half_to_float.bin", half_to_float);
    save("bf16_to_float.bin", bf16_to_float);

    // Arithmetic on half triples (a, b, c): add, sub, mul, div, fma, operators, max, min.
    const size_t triples = pairs.size() / 3;
    std::vector<unsigned short> arithmetic(8 * triples);
    for (size_t i = 0; i < triples; ++i) {
        __half a = __ushort_as_half(pairs[3 * i]), b = __ushort_as_half(pairs[3 * i + 1]), c = __ushort_as_half(pairs[3 * i + 2]);
        arithmetic[8 * i + 0] = __half_as_ushort(__hadd(a, b));
        arithmetic[8 * i + 1] = __half_as_ushort(__hsub(a, b));
        arithmetic[8 * i + 2] = __half_as_ushort(__hmul(a, b));
        arithmetic[8 * i + 3] = __half_as_ushort(__hdiv(a, b));
        arithmetic[8 * i + 4] = __half_as_ushort(__hfma(a, b, c));
        arithmetic[8 * i + 5] = __half_as_ushort(a * b + c);
        arithmetic[8 * i + 6] = __half_as_ushort(__hmax(a, b));
        arithmetic[8 * i + 7] = __half_as_ushort(-__hmin(a, b));
    }
    save("arithmetic.bin", arithmetic);

    std::vector<unsigned short> bf16_pairs = load<unsigned short>("bf16_pairs.bin");
    const size_t bf16_triples = bf16_pairs.size() / 3;
    std::vector<unsigned short> bf16_arithmetic(5 * bf16_triples);
    for (size_t i = 0; i < bf16_triples; ++i) {
        __nv_bfloat16 a = __ushort_as_bfloat16(bf16_pairs[3 * i]), b = __ushort_as_bfloat16(bf16_pairs[3 * i + 1]),
                      c = __ushort_as_bfloat16(bf16_pairs[3 * i + 2]);
        bf16_arithmetic[5 * i + 0] = __bfloat16_as_ushort(__hadd(a, b));
        bf16_arithmetic[5 * i + 1] = __bfloat16_as_ushort(__hsub(a, b));
        bf16_arithmetic[5 * i + 2] = __bfloat16_as_ushort(__hmul(a, b));
        bf16_arithmetic[5 * i + 3] = __bfloat16_as_ushort(__hdiv(a, b));
        bf16_arithmetic[5 * i + 4] = __bfloat16_as_ushort(__hfma(a, b, c));
    }
    save("bf16_arithmetic.bin", bf16_arithmetic);

    // A few fixed checks: integer constructors, comparisons, half2, bfloat16 arithmetic.
    __half from_int = 2049;  // ties to even: 2048
    __half2 pair = __floats2half2_rn(1.5f, -2.0f);
    pair = __hmul2(pair, __float2half2_rn(3.0f));
    __nv_bfloat16 x = __float2bfloat16(1.0f), y = __float2bfloat16(0.00390625f);  // 2^-8: 1 + 2^-8 ties to 1
    printf("checks %g %g %g %d %d %d %g %g %d %g\n", __half2float(from_int), __low2float(pair), __high2float(pair),
           int(__float2half(1.0f) < __float2half(2.0f)), int(__heq(__float2half(0.0f), __float2half(-0.0f))),
           int(__hisnan(__float2half(NAN))), __bfloat162float(__hadd(x, y)), __bfloat162float(x * __float2bfloat16(3.0f)),
           __hisinf(__float2half(70000.0f)), __half2float(hsqrt(__float2half(2.0f))));
    return 0;
}
"""


def special_floats() -> np.ndarray:
    """Values around every binary16 boundary: ties, subnormals, overflow, signed zeros."""
    halves = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    midpoints = (halves[:-1] + halves[1:]) / 2  # exact in float32 (one more bit than half)
    extra = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e6, 2.0**-25, 2.0**-25 * 1.01, 2.0**-24 * 0.49, np.inf])
    values = np.concatenate([halves, midpoints, extra])
    return np.concatenate([values, -values]).astype(np.float32)


def random_floats(rng: np.random.Generator, count: int) -> np.ndarray:
    bits = rng.integers(0, 2**32, size=count, dtype=np.uint64).astype(np.uint32)
    values = bits.view(np.float32)
    return values[np.isfinite(values)]


def bfloat16_rne(values: np.ndarray) -> np.ndarray:
    """Round float32 to bfloat16 bits, nearest even, by bit arithmetic in numpy."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def neighbours(values: np.ndarray, nearest: np.ndarray, to_float, next_up, next_down):
    """(largest representable <= v, smallest representable >= v) from the nearest value."""
    nearest_f = to_float(nearest)
    below = np.where(nearest_f <= values, nearest, next_down(nearest))
    above = np.where(nearest_f >= values, nearest, next_up(nearest))
    return below, above


def cpu_has_f16c() -> bool:
    try:
        return " f16c" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


# Software conversions, and the F16C instructions that -march=native selects where present.
CONVERSION_FLAGS = [
    (),
    pytest.param(("-mf16c",), marks=pytest.mark.skipif(not cpu_has_f16c(), reason="this CPU has no F16C instructions")),
]


@pytest.fixture(scope="module", params=CONVERSION_FLAGS, ids=["soft", "f16c"])
def half_run(tmp_path_factory, request):
    workdir = tmp_path_factory.mktemp("half")
    rng = np.random.default_rng(7)
    floats = np.concatenate([special_floats(), random_floats(rng, 200_000), rng.normal(0, 100, 50_000).astype(np.float32)])
    doubles = np.concatenate(
        [rng.normal(0, 1000, 50_000), special_floats().astype(np.float64) * (1 + 2.0**-40), rng.uniform(-1e-5, 1e-5, 20_000)]
    )
    finite_halves = np.arange(0, 0x7C00, dtype=np.uint16)
    finite_halves = np.concatenate([finite_halves, finite_halves | 0x8000])
    pairs = rng.choice(finite_halves, size=3 * 60_000).astype(np.uint16)
    floats.tofile(workdir / "floats.bin")
    doubles.tofile(workdir / "doubles.bin")
    pairs.tofile(workdir / "pairs.bin")
    # Random finite bfloat16 values of moderate exponent (products and quotients stay finite).
    bf16 = (rng.normal(0, 1, 3 * 60_000) * np.exp2(rng.integers(-20, 20, 3 * 60_000))).astype(np.float32)
    (bf16.view(np.uint32) >> 16).astype(np.uint16).tofile(workdir / "bf16_pairs.bin")
    exe = build({"half.cpp": HALF_PROGRAM}, workdir, extra_flags=request.param)
    output = run(exe, threads=1)
    return workdir, floats, doubles, pairs, output


def test_float_to_half_matches_numpy_in_all_rounding_modes(half_run):
    workdir, floats, *_ = half_run
    n = floats.size
    got = np.fromfile(workdir / "half_from_float.bin", dtype=np.uint16).reshape(4, n)
    with np.errstate(over="ignore"):
        nearest = floats.astype(np.float16)
    assert np.array_equal(got[0], nearest.view(np.uint16))
    values = floats.astype(np.float64)
    with np.errstate(over="ignore"):
        below, above = neighbours(
            values, nearest, lambda h: h.astype(np.float64),
            lambda h: np.nextafter(h, np.float16(np.inf)), lambda h: np.nextafter(h, np.float16(-np.inf)),
        )
    toward_zero = np.where(values >= 0, below, above)
    for mode, expected in ((1, toward_zero), (2, below), (3, above)):
        mismatch = np.flatnonzero(got[mode] != expected.view(np.uint16))
        # -0.0 vs +0.0 for values that round to zero from below is the only freedom: none expected.
        assert mismatch.size == 0, (mode, floats[mismatch[:5]], got[mode][mismatch[:5]], expected.view(np.uint16)[mismatch[:5]])


def test_float_to_bfloat16_matches_bit_model(half_run):
    workdir, floats, *_ = half_run
    n = floats.size
    got = np.fromfile(workdir / "bf16_from_float.bin", dtype=np.uint16).reshape(4, n)
    nearest = bfloat16_rne(floats)
    assert np.array_equal(got[0], nearest)

    def to_float(b):
        return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

    def step(b, direction):
        f = (b.astype(np.uint32) << 16).view(np.float32)
        # Next bfloat16 in a direction: move by one unit in the last bfloat16 place via the bit pattern.
        sign_flip = (f == 0) & (direction < 0)
        moved = np.where((f > 0) == (direction > 0), b.astype(np.int32) + 1, b.astype(np.int32) - 1)
        moved = np.where(f == 0, np.where(direction > 0, 0x0001, 0x8001), moved)
        return np.where(sign_flip, 0x8001, moved).astype(np.uint16)

    values = floats.astype(np.float64)
    below, above = neighbours(values, nearest, to_float, lambda b: step(b, 1), lambda b: step(b, -1))
    toward_zero = np.where(values >= 0, below, above)
    truncated = (floats.view(np.uint32) >> 16).astype(np.uint16)
    assert np.array_equal(got[1], truncated)  # rz is truncation of the bits
    assert np.array_equal(to_float(got[1]), to_float(toward_zero))
    assert np.array_equal(to_float(got[2]), to_float(below))
    assert np.array_equal(to_float(got[3]), to_float(above))


def test_double_conversions_round_once(half_run):
    workdir, _, doubles, *_ = half_run
    got_half = np.fromfile(workdir / "half_from_double.bin", dtype=np.uint16)
    with np.errstate(over="ignore"):
        assert np.array_equal(got_half, doubles.astype(np.float16).view(np.uint16))
    got_bf16 = np.fromfile(workdir / "bf16_from_double.bin", dtype=np.uint16)
    # Model: round the double to 8 significant bits directly (ties to even), no float step.
    mantissa, exponent = np.frexp(doubles)
    exponent = np.maximum(exponent, -125)  # bfloat16 subnormal spacing 2^-133
    scale = np.ldexp(1.0, exponent - 8)
    expected = (np.rint(doubles / scale) * scale).astype(np.float32)
    assert np.array_equal((got_bf16.astype(np.uint32) << 16).view(np.float32), expected)


def test_every_16_bit_pattern_converts_back_exactly(half_run):
    workdir, *_ = half_run
    patterns = np.arange(65536, dtype=np.uint16)
    half = np.fromfile(workdir / "half_to_float.bin", dtype=np.float32)
    expected = patterns.view(np.float16).astype(np.float32)
    finite = np.isfinite(expected) | np.isinf(expected)
    assert np.array_equal(half[finite], expected[finite])
    assert np.all(np.isnan(half[~finite]))
    bf16 = np.fromfile(workdir / "bf16_to_float.bin", dtype=np.float32)
    assert np.array_equal(bf16.view(np.uint32), patterns.astype(np.uint32) << 16)


def test_half_arithmetic_is_correctly_rounded(half_run):
    workdir, _, _, pairs, _ = half_run
    got = np.fromfile(workdir / "arithmetic.bin", dtype=np.uint16).reshape(-1, 8)
    a, b, c = (pairs.reshape(-1, 3)[:, i].view(np.float16) for i in range(3))
    with np.errstate(all="ignore"):
        fma = (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float16)
        # The operators round the product, then the sum (no contraction into fma).
        expected = [a + b, a - b, a * b, a / b, fma, (a * b) + c, np.fmax(a, b), -np.fmin(a, b)]
    for column, values in enumerate(expected):
        got_values = got[:, column].view(np.float16)
        same = (got_values == values) | (np.isnan(got_values) & np.isnan(values))
        assert same.all(), (column, a[~same][:3], b[~same][:3], got_values[~same][:3], values[~same][:3])


def round_to_bfloat16(values: np.ndarray) -> np.ndarray:
    """float64 -> bfloat16 (as float32), one rounding to nearest even: the model of correct rounding."""
    _, exponent = np.frexp(values)
    scale = np.ldexp(1.0, np.maximum(exponent, -125) - 8)
    with np.errstate(invalid="ignore"):
        return (np.rint(values / scale) * scale).astype(np.float32)


def test_bfloat16_arithmetic_is_correctly_rounded(half_run):
    workdir = half_run[0]
    bits = np.fromfile(workdir / "bf16_pairs.bin", dtype=np.uint16).reshape(-1, 3)
    a, b, c = ((bits[:, i].astype(np.uint32) << 16).view(np.float32).astype(np.float64) for i in range(3))
    got = np.fromfile(workdir / "bf16_arithmetic.bin", dtype=np.uint16).reshape(-1, 5)
    expected = [a + b, a - b, a * b, a / b, a * b + c]  # exact in float64 but for the quotient and fma
    for column, values in enumerate(expected):
        got_values = (got[:, column].astype(np.uint32) << 16).view(np.float32)
        assert np.array_equal(got_values, round_to_bfloat16(values)), column


def test_fixed_half_and_bfloat16_checks(half_run):
    output = half_run[-1]
    assert output.split()[1:] == ["2048", "4.5", "-6", "1", "1", "1", "1", "3", "1", "1.41406"]


NO_OPERATORS_PROGRAM = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
// With CUDA's opt-out macros, code defines its own operators: ours must not collide.
__half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
__nv_bfloat16 operator*(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmul(a, b); }
int main() {
    __half h = __float2half(1.25f) + __float2half(2.0f);
    __nv_bfloat16 b = __float2bfloat16(1.5f) * __float2bfloat16(2.0f);
    printf("%g %g\n", __half2float(h), __bfloat162float(b));
    return 0;
}
"""


def test_cuda_opt_out_macros_remove_conversions_and_operators(tmp_path):
    flags = tuple(
        f"-D__CUDA_NO_{kind}__"
        for kind in ("HALF_CONVERSIONS", "HALF_OPERATORS", "HALF2_OPERATORS", "BFLOAT16_CONVERSIONS", "BFLOAT16_OPERATORS",
                     "BFLOAT162_OPERATORS")
    )
    exe = build({"no_operators.cpp": NO_OPERATORS_PROGRAM}, tmp_path, extra_flags=flags)
    assert run(exe).split() == ["3.25", "3"]


INTEGER_CASTS_PROGRAM = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cmath>
#include <cstdio>
// static_cast of a __half or __nv_bfloat16 to an integer type converts as CUDA's conversion
// operators do (__half2uchar_rz and its kin), not through float's undefined out-of-range cast.
template <class H> void casts(H h) {
    printf("%d %d %d %d %u %lld %llu %d\n", static_cast<signed char>(h), static_cast<unsigned char>(h),
           static_cast<short>(h), static_cast<int>(h), static_cast<unsigned>(h), static_cast<long long>(h),
           static_cast<unsigned long long>(h), static_cast<bool>(h));
}
int main() {
    const float values[] = {300.0f, -3.7f, 2.7f, -0.0f, INFINITY, -INFINITY, NAN};
    for (float v : values) casts(__float2half(v));
    for (float v : values) casts(__float2bfloat16(v));
    printf("%d %u %d %u\n", __half2char_rz(__float2half(-200.0f)), __half2uchar_rz(__float2half(-1.0f)),
           __bfloat162char_rz(__float2bfloat16(1000.0f)), __bfloat162uchar_rz(__float2bfloat16(255.9f)));
    return 0;
}
"""


def test_casts_to_integer_types_truncate_and_saturate_as_cuda_does(tmp_path):
    def row(v: float) -> str:
        def sat(lo: int, hi: int) -> int:
            return 0 if v != v else lo if v <= lo else hi if v >= hi else int(v)  # int(): toward zero
        return " ".join(str(x) for x in (sat(-128, 127), sat(0, 255), sat(-2**15, 2**15 - 1), sat(-2**31, 2**31 - 1),
                                         sat(0, 2**32 - 1), sat(-2**63, 2**63 - 1), sat(0, 2**64 - 1), int(v != 0)))
    values = [300.0, -3.7, 2.7, -0.0, float("inf"), float("-inf"), float("nan")]
    # bfloat16 rounds 300 to 300 and 2.7 to 2.703125, half 2.7 to 2.69921875: all truncate alike
    expected = [row(v) for v in values] * 2 + ["-128 0 127 255"]
    exe = build({"casts.cpp": INTEGER_CASTS_PROGRAM}, tmp_path)
    assert run(exe).splitlines() == expected


ROUND_TO_ODD_PROGRAM = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdio>
int main() {
    // A double a hair off a tie of two halves (1 + 2^-11, between 1 and 1 + 2^-10): the nearest float
    // is the tie itself, so rounding through a float to nearest would land on 1 (the even one).
    const double above = 1.0 + 0x1p-11 + 0x1p-40, below = 1.0 + 0x1p-11 - 0x1p-40;
    std::printf("%a %a %a %a\n", cuda_cpu::double_to_float_odd(above), cuda_cpu::double_to_float_odd(below),
                cuda_cpu::double_to_float_odd(-above), cuda_cpu::double_to_float_odd(1.5));
    std::printf("%a %a %a\n", cuda_cpu::double_to_float_odd(1e300), cuda_cpu::double_to_float_odd(-1e-300),
                cuda_cpu::double_to_float_odd(0.0));
    std::printf("%a %a %a %a\n", __half2float(__double2half(above)), __half2float(__double2half(below)),
                __half2float(__double2half(-above)), __half2float(__double2half(1e300)));
    const double bf_above = 1.0 + 0x1p-8 + 0x1p-40;  // a hair above the tie of 1 and 1 + 2^-7
    std::printf("%a %a\n", __bfloat162float(__double2bfloat16(bf_above)),
                __bfloat162float(__double2bfloat16(1.0 + 0x1p-8 - 0x1p-40)));
    // __hfma rounds once: 1 * (1 + 2^-10) + 2^-11 * (1 + 2^-10) lies just above a tie.
    __half one = __float2half(1.0f), c = __float2half(1.0f + 0x1p-10f), t = __float2half(0x1p-11f + 0x1p-21f);
    std::printf("%a\n", __half2float(__hfma(one, c, t)));
    return 0;
}
"""


@pytest.mark.parametrize("flags", CONVERSION_FLAGS, ids=["soft", "f16c"])
def test_doubles_round_to_nearest_through_a_float_rounded_to_odd(tmp_path, flags):
    """A double rounds to half and bfloat16 (to nearest even) through a float rounded to odd (toward
    zero, the last bit set where inexact), as fast as a float's conversion: such a float keeps which
    side of a tie the double lay on. The conversion went through ilogb, ldexp and nearbyint: __hfma
    on every element made a half-precision dot product (f16sp) several times slower than its float
    arithmetic."""
    exe = build({"odd.cpp": ROUND_TO_ODD_PROGRAM}, tmp_path, extra_flags=flags)
    lines = run(exe).splitlines()
    assert lines[0].split() == ["0x1.002002p+0", "0x1.001ffep+0", "-0x1.002002p+0", "0x1.8p+0"]
    assert lines[1].split() == ["0x1.fffffep+127", "-0x1p-149", "0x0p+0"]
    assert lines[2].split() == ["0x1.004p+0", "0x1p+0", "-0x1.004p+0", "inf"]
    assert lines[3].split() == ["0x1.02p+0", "0x1p+0"]
    assert lines[4] == "0x1.008p+0"
