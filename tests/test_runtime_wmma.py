"""nvcuda::wmma (<mma.h>) on the CPU: load/mma/store against a numpy matmul with the same
arithmetic (products exact in float, summed in float in order of k onto C), for every layout of
A, B, C and D with leading dimensions larger than the tile; the other element types (half
accumulator, bfloat16, tf32, int8, double) and satf; and wmma kernels lowered through the real
pipeline (one warp per tile, and fragments kept across barriers) run with real g++ and OpenMP."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tools.cuda import translate_file

from cuda_fixtures.build import build_and_run as build_and_run_lowered
from test_runtime_support import BINARY_IO, build, parse_lines, run

SHAPES = [(16, 16, 16), (32, 8, 16), (8, 32, 16)]
LAYOUTS = ["row", "col"]
PAD = 3  # every leading dimension is the tile's plus PAD: the loads and stores must skip it
SENTINEL = -7777.0

WMMA_PROGRAM = r"""
#include <mma.h>
#include <cstdio>
#include <string>
#include <vector>
using namespace nvcuda;

""" + BINARY_IO + r"""

// Where element (r, c) of a matrix lies in memory, by the definition of the two layouts.
static size_t at(bool row_major, int r, int c, int ld) {
    return row_major ? static_cast<size_t>(r) * static_cast<size_t>(ld) + static_cast<size_t>(c)
                     : static_cast<size_t>(c) * static_cast<size_t>(ld) + static_cast<size_t>(r);
}

// A logical rows x cols matrix (row-major, tight) laid out in memory with leading dimension ld.
template <class T>
static std::vector<T> lay_out(const std::vector<T>& logical, int rows, int cols, bool row_major, int ld, T filler) {
    std::vector<T> memory(static_cast<size_t>(ld) * static_cast<size_t>(row_major ? rows : cols), filler);
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) memory[at(row_major, r, c, ld)] = logical[static_cast<size_t>(r * cols + c)];
    return memory;
}

// D = A * B + C with half inputs and a float accumulator, in the layouts given; D is read back
// logically; `clobbered` counts the padding elements of D's memory that the store changed.
template <int M, int N, int K, class LayoutA, class LayoutB>
static void layout_case(bool c_row, bool d_row, const std::string& out, int& clobbered) {
    constexpr bool a_row = std::is_same<LayoutA, wmma::row_major>::value;
    constexpr bool b_row = std::is_same<LayoutB, wmma::row_major>::value;
    const int pad = PAD;
    std::vector<__half> a = load<__half>("a.bin"), b = load<__half>("b.bin");
    std::vector<float> c = load<float>("c.bin");
    a.resize(M * K); b.resize(K * N); c.resize(M * N);
    const int lda = (a_row ? K : M) + pad, ldb = (b_row ? N : K) + pad;
    const int ldc = (c_row ? N : M) + pad, ldd = (d_row ? N : M) + pad;
    std::vector<__half> a_memory = lay_out(a, M, K, a_row, lda, __float2half(0.0f));
    std::vector<__half> b_memory = lay_out(b, K, N, b_row, ldb, __float2half(0.0f));
    std::vector<float> c_memory = lay_out(c, M, N, c_row, ldc, 0.0f);
    std::vector<float> d_memory(static_cast<size_t>(ldd) * (d_row ? M : N), SENTINEL);

    wmma::fragment<wmma::matrix_a, M, N, K, half, LayoutA> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, half, LayoutB> fb;
    wmma::fragment<wmma::accumulator, M, N, K, float> fc, fd;
    wmma::load_matrix_sync(fa, a_memory.data(), static_cast<unsigned>(lda));
    wmma::load_matrix_sync(fb, b_memory.data(), static_cast<unsigned>(ldb));
    wmma::load_matrix_sync(fc, c_memory.data(), static_cast<unsigned>(ldc), c_row ? wmma::mem_row_major : wmma::mem_col_major);
    wmma::mma_sync(fd, fa, fb, fc);
    wmma::store_matrix_sync(d_memory.data(), fd, static_cast<unsigned>(ldd), d_row ? wmma::mem_row_major : wmma::mem_col_major);

    std::vector<float> d(M * N);
    std::vector<bool> in_tile(d_memory.size(), false);
    for (int r = 0; r < M; ++r)
        for (int col = 0; col < N; ++col) {
            d[static_cast<size_t>(r * N + col)] = d_memory[at(d_row, r, col, ldd)];
            in_tile[at(d_row, r, col, ldd)] = true;
        }
    for (size_t i = 0; i < d_memory.size(); ++i) clobbered += !in_tile[i] && d_memory[i] != SENTINEL;
    save(out, d);
}

template <int M, int N, int K>
static void shape_cases(int& clobbered) {
    const char* names[] = {"row", "col"};
    for (int la = 0; la < 2; ++la)
        for (int lb = 0; lb < 2; ++lb)
            for (int lc = 0; lc < 2; ++lc)
                for (int ld = 0; ld < 2; ++ld) {
                    std::string out = "d_" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + "_" +
                                      names[la] + "_" + names[lb] + "_" + names[lc] + "_" + names[ld] + ".bin";
                    if (la == 0 && lb == 0) layout_case<M, N, K, wmma::row_major, wmma::row_major>(lc == 0, ld == 0, out, clobbered);
                    if (la == 0 && lb == 1) layout_case<M, N, K, wmma::row_major, wmma::col_major>(lc == 0, ld == 0, out, clobbered);
                    if (la == 1 && lb == 0) layout_case<M, N, K, wmma::col_major, wmma::row_major>(lc == 0, ld == 0, out, clobbered);
                    if (la == 1 && lb == 1) layout_case<M, N, K, wmma::col_major, wmma::col_major>(lc == 0, ld == 0, out, clobbered);
                }
}

// One tile of another element type, all row-major and tight; D overwrites C (as kernels do).
template <class TIn, class TAcc, int M, int N, int K>
static void typed_case(const std::string& name, bool satf, bool round_a_to_tf32) {
    using FragA = wmma::fragment<wmma::matrix_a, M, N, K, TIn, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, M, N, K, TIn, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, M, N, K, TAcc>;
    using Stored = typename FragA::storage_element_type;
    std::vector<Stored> a = load<Stored>(name + "_a.bin"), b = load<Stored>(name + "_b.bin");
    std::vector<TAcc> c = load<TAcc>(name + "_c.bin"), d(M * N);
    FragA fa;
    FragB fb;
    FragC acc;
    wmma::load_matrix_sync(fa, a.data(), K);
    wmma::load_matrix_sync(fb, b.data(), N);
    wmma::load_matrix_sync(acc, c.data(), N, wmma::mem_row_major);
    if (round_a_to_tf32)
        for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    wmma::mma_sync(acc, fa, fb, acc, satf);
    wmma::store_matrix_sync(d.data(), acc, N, wmma::mem_row_major);
    save(name + "_d.bin", d);
}

int main() {
    int clobbered = 0;
    shape_cases<16, 16, 16>(clobbered);
    shape_cases<32, 8, 16>(clobbered);
    shape_cases<8, 32, 16>(clobbered);
    printf("clobbered %d\n", clobbered);

    typed_case<half, half, 16, 16, 16>("f16_f16", false, false);
    typed_case<half, half, 16, 16, 16>("f16_f16_satf", true, false);
    typed_case<half, float, 16, 16, 16>("f16_f32_satf", true, false);
    typed_case<__nv_bfloat16, float, 32, 8, 16>("bf16_f32", false, false);
    typed_case<wmma::precision::tf32, float, 16, 16, 8>("tf32_f32", false, true);
    typed_case<signed char, int, 16, 16, 16>("s8_s32", false, false);
    typed_case<signed char, int, 16, 16, 16>("s8_s32_satf", true, false);
    typed_case<unsigned char, int, 8, 32, 16>("u8_s32", false, false);
    typed_case<double, double, 8, 8, 4>("f64_f64", false, false);

    std::vector<float> tf32_in = load<float>("tf32_in.bin"), tf32_out(tf32_in.size());
    for (size_t i = 0; i < tf32_in.size(); ++i) tf32_out[i] = wmma::__float_to_tf32(tf32_in[i]);
    save("tf32_out.bin", tf32_out);

    using ATile = wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major>;
    using BTile = wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::col_major>;
    using CTile = wmma::fragment<wmma::accumulator, 8, 32, 16, float>;
    using Tf32Tile = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
    printf("num_elements %d %d %d %d\n", int(ATile::num_elements), int(BTile::num_elements), int(CTile::num_elements),
           int(Tf32Tile::num_elements));
    return 0;
}
""".replace("PAD", str(PAD)).replace("SENTINEL", f"{SENTINEL}f")


def tf32_round(values: np.ndarray) -> np.ndarray:
    """float32 to tf32 (10-bit mantissa), nearest with ties away from zero; inf and NaN kept."""
    bits = values.astype(np.float32).view(np.uint32).copy()
    finite = (bits & 0x7F800000) != 0x7F800000
    bits[finite] = ((bits[finite].astype(np.uint64) + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return bits.view(np.float32)


def tf32_truncate(values: np.ndarray) -> np.ndarray:
    return (values.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def float_mma(a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype=np.float32) -> np.ndarray:
    """C + A x B in float32 (or dtype), each product exact, summed onto C in order of k: what the
    runtime promises."""
    acc = c.astype(dtype).copy()
    for k in range(a.shape[1]):
        acc = (acc + a[:, k : k + 1].astype(dtype) * b[k : k + 1, :].astype(dtype)).astype(dtype)
    return acc


def saturate(values: np.ndarray, most: float) -> np.ndarray:
    return np.where(np.isnan(values), 0, np.clip(values, -most, most)).astype(values.dtype)


def bf16_from_float(values: np.ndarray) -> np.ndarray:
    """bfloat16 bits of values already representable in bfloat16."""
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.fixture(scope="module")
def wmma_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("wmma")
    rng = np.random.default_rng(11)
    inputs = {
        "a": rng.normal(0, 2, 32 * 16).astype(np.float16),
        "b": rng.normal(0, 2, 16 * 32).astype(np.float16),
        "c": rng.normal(0, 8, 32 * 32).astype(np.float32),
    }
    for name, values in inputs.items():
        values.tofile(workdir / f"{name}.bin")

    typed = {}  # name -> (a, b, c as the program reads them, expected d)

    def half_case(name, satf, accumulator):
        a = rng.normal(0, 4, (16, 16)).astype(np.float16)
        b = rng.normal(0, 4, (16, 16)).astype(np.float16)
        c = rng.normal(0, 16, (16, 16)).astype(accumulator)
        if satf:  # overflow in row 0, infinity and NaN in C's row 1
            a[0], b[:, :4], c[0, :4] = 200, 200, 65000 if accumulator == np.float16 else 3e38
            if accumulator == np.float32:
                c[1, 0], c[1, 1], c[1, 2] = np.inf, -np.inf, np.nan
        with np.errstate(over="ignore", invalid="ignore"):
            d = float_mma(a, b, c).astype(accumulator)
        if satf:
            d = saturate(d, float(np.finfo(accumulator).max))
        typed[name] = (a, b, c, d)

    half_case("f16_f16", False, np.float16)
    half_case("f16_f16_satf", True, np.float16)
    half_case("f16_f32_satf", True, np.float32)

    a = rng.normal(0, 3, (32, 16)).astype(np.float32)
    b = rng.normal(0, 3, (16, 8)).astype(np.float32)
    a, b = ((x.view(np.uint32) & 0xFFFF0000).view(np.float32) for x in (a, b))  # representable in bfloat16
    c = rng.normal(0, 8, (32, 8)).astype(np.float32)
    typed["bf16_f32"] = (bf16_from_float(a), bf16_from_float(b), c, float_mma(a, b, c))

    a = rng.normal(0, 3, (16, 8)).astype(np.float32)
    b = rng.normal(0, 3, (8, 16)).astype(np.float32)
    c = rng.normal(0, 8, (16, 16)).astype(np.float32)
    # A is rounded by the program (__float_to_tf32); B goes in as float: the multiplier drops its low bits.
    typed["tf32_f32"] = (a, b, c, float_mma(tf32_round(a), tf32_truncate(b), c))

    def int_case(name, low, high, dtype, shape, satf):
        m, n, k = shape
        a = rng.integers(low, high, (m, k)).astype(dtype)
        b = rng.integers(low, high, (k, n)).astype(dtype)
        c = rng.integers(-1000, 1000, (m, n)).astype(np.int32)
        c[0, :4] = [2**31 - 10, -(2**31) + 10, 2**31 - 1, -(2**31)]  # near the ends: wrap, or clamp with satf
        exact = c.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64)
        d = np.clip(exact, -(2**31), 2**31 - 1) if satf else (exact & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
        typed[name] = (a, b, c, d.astype(np.int32))

    int_case("s8_s32", -128, 128, np.int8, (16, 16, 16), False)
    int_case("s8_s32_satf", -128, 128, np.int8, (16, 16, 16), True)
    int_case("u8_s32", 0, 256, np.uint8, (8, 32, 16), False)

    a = rng.integers(-50, 50, (8, 4)).astype(np.float64)
    b = rng.integers(-50, 50, (4, 8)).astype(np.float64)
    c = rng.normal(0, 1, (8, 8))
    typed["f64_f64"] = (a, b, c, float_mma(a, b, c, np.float64))

    for name, (a, b, c, _) in typed.items():
        a.tofile(workdir / f"{name}_a.bin")
        b.tofile(workdir / f"{name}_b.bin")
        c.tofile(workdir / f"{name}_c.bin")

    tf32_in = np.concatenate([
        rng.normal(0, 100, 20000).astype(np.float32),
        np.array([1 + 2.0**-11, -(1 + 2.0**-11), 1 + 2.0**-11 + 2.0**-20, 1 + 2.0**-12, np.finfo(np.float32).max,
                  np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40], dtype=np.float32),
    ])
    tf32_in.tofile(workdir / "tf32_in.bin")

    exe = build({"wmma.cpp": WMMA_PROGRAM}, workdir)
    output = parse_lines(run(exe, threads=1))
    return workdir, inputs, typed, tf32_in, output


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_load_mma_store_match_a_matmul_in_every_layout(wmma_run, shape):
    workdir, inputs, *_ = wmma_run
    m, n, k = shape
    a = inputs["a"][: m * k].reshape(m, k)
    b = inputs["b"][: k * n].reshape(k, n)
    c = inputs["c"][: m * n].reshape(m, n)
    expected = float_mma(a, b, c)
    assert not np.array_equal(expected, float_mma(a, b.T.reshape(k, n), c))  # a transposed B would be caught
    for layouts in itertools.product(LAYOUTS, repeat=4):
        got = np.fromfile(workdir / f"d_{m}x{n}x{k}_{'_'.join(layouts)}.bin", dtype=np.float32).reshape(m, n)
        assert np.array_equal(got, expected), f"{shape} A {layouts[0]}, B {layouts[1]}, C {layouts[2]}, D {layouts[3]}"


def test_store_writes_nothing_between_the_tiles_rows(wmma_run):
    *_, output = wmma_run
    assert output["clobbered"] == ["0"]


@pytest.mark.parametrize("name", ["f16_f16", "f16_f16_satf", "f16_f32_satf", "bf16_f32", "tf32_f32", "s8_s32",
                                  "s8_s32_satf", "u8_s32", "f64_f64"])
def test_other_element_types_and_saturation(wmma_run, name):
    workdir, _, typed, *_ = wmma_run
    _, _, c, expected = typed[name]
    got = np.fromfile(workdir / f"{name}_d.bin", dtype=expected.dtype).reshape(expected.shape)
    assert np.array_equal(got, expected), name
    if name.endswith("satf"):
        assert np.isfinite(got.astype(np.float64)).all()


def test_float_to_tf32_rounds_to_nearest_ties_away(wmma_run):
    workdir, *_, tf32_in, _ = wmma_run
    got = np.fromfile(workdir / "tf32_out.bin", dtype=np.float32)
    expected = tf32_round(tf32_in)
    assert np.array_equal(got.view(np.uint32)[:-4], expected.view(np.uint32)[:-4])
    assert got[20000] == np.float32(1 + 2.0**-10) and got[20001] == np.float32(-(1 + 2.0**-10))  # ties away
    assert got[20003] == np.float32(1.0) and np.isnan(got[20007]) and got[20005] == np.inf


def test_every_lane_holds_the_whole_tile(wmma_run):
    *_, output = wmma_run
    assert output["num_elements"] == ["256", "128", "256", "128"]


# ---- through the lowering: kernels as applications write them -------------------------------

WMMA_KERNELS = r"""
#include <mma.h>
#include <cstdio>
using namespace nvcuda;
const int TILE = 16;

// One warp per 16x16 tile of D = alpha * A x B + beta * C; A row-major (M x K), B col-major (K x N).
__global__ void warp_per_tile(const half* a, const half* b, const float* c, float* d, int n, int k,
                              float alpha, float beta) {
  int tile_row = blockIdx.x * TILE, tile_col = blockIdx.y * TILE;
  wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float> acc, fc;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += TILE) {
    wmma::load_matrix_sync(fa, a + tile_row * k + kk, k);
    wmma::load_matrix_sync(fb, b + tile_col * k + kk, k);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::load_matrix_sync(fc, c + tile_row * n + tile_col, n, wmma::mem_row_major);
  for (int i = 0; i < fc.num_elements; ++i) fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
  wmma::store_matrix_sync(d + tile_row * n + tile_col, fc, n, wmma::mem_row_major);
}

// Two warps per block, one tile each, staging A's and B's panels in shared memory: the
// accumulators (declared with auto) live across the barriers, so each thread keeps its own.
__global__ void staged_in_shared(const half* a, const half* b, float* d, int n, int k) {
  __shared__ half a_panel[2 * TILE * TILE];
  __shared__ half b_panel[TILE * TILE];
  const int warp = threadIdx.x / 32;
  const int tile_row = (blockIdx.x * 2 + warp) * TILE, tile_col = blockIdx.y * TILE;
  auto acc = wmma::fragment<wmma::accumulator, TILE, TILE, TILE, float>();
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += TILE) {
    for (int i = threadIdx.x; i < 2 * TILE * TILE; i += blockDim.x)
      a_panel[i] = a[(blockIdx.x * 2 * TILE + i / TILE) * k + kk + i % TILE];
    for (int i = threadIdx.x; i < TILE * TILE; i += blockDim.x)
      b_panel[i] = b[(tile_col + i / TILE) * k + kk + i % TILE];
    __syncthreads();
    wmma::fragment<wmma::matrix_a, TILE, TILE, TILE, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, TILE, TILE, TILE, half, wmma::col_major> fb;
    wmma::load_matrix_sync(fa, a_panel + warp * TILE * TILE, TILE);
    wmma::load_matrix_sync(fb, b_panel, TILE);
    wmma::mma_sync(acc, fa, fb, acc);
    __syncthreads();
  }
  wmma::store_matrix_sync(d + tile_row * n + tile_col, acc, n, wmma::mem_row_major);
}

int main() {
  const int m = 64, n = 48, k = 80;
  half *a, *b; float *c, *d1, *d2;
  cudaMallocManaged(&a, m * k * sizeof(half)); cudaMallocManaged(&b, k * n * sizeof(half));
  cudaMallocManaged(&c, m * n * sizeof(float)); cudaMallocManaged(&d1, m * n * sizeof(float));
  cudaMallocManaged(&d2, m * n * sizeof(float));
  for (int i = 0; i < m * k; i++) a[i] = __float2half(float(i * 7 % 11) - 5.0f);
  for (int i = 0; i < k * n; i++) b[i] = __float2half(float(i * 5 % 13) - 6.0f);
  for (int i = 0; i < m * n; i++) c[i] = float(i % 9);
  warp_per_tile<<<dim3(m / TILE, n / TILE), 32>>>(a, b, c, d1, n, k, 0.5f, 2.0f);
  staged_in_shared<<<dim3(m / TILE / 2, n / TILE), 64>>>(a, b, d2, n, k);
  cudaDeviceSynchronize();
  int wrong1 = 0, wrong2 = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      float sum = 0.0f;  // small integers: exact in any order
      for (int h = 0; h < k; h++) sum += __half2float(a[i * k + h]) * __half2float(b[j * k + h]);
      wrong1 += d1[i * n + j] != 0.5f * sum + 2.0f * c[i * n + j];
      wrong2 += d2[i * n + j] != sum;
    }
  printf("wrong %d %d\n", wrong1, wrong2);
  printf("%s\n", wrong1 == 0 && wrong2 == 0 ? "PASS" : "FAIL");
}
"""


@pytest.mark.parametrize("threads", [1, 3])
def test_wmma_kernels_lowered_and_run(tmp_path, threads):
    lowered = translate_file(WMMA_KERNELS, "wmma_kernels.cu").cpp
    assert "PerThread<wmma::fragment<wmma::accumulator" in lowered  # the accumulator is kept per thread across barriers
    output = build_and_run_lowered(lowered, "", tmp_path, threads=threads)
    assert output.splitlines() == ["wrong 0 0", "PASS"]
