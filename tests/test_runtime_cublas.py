"""The CPU cuBLAS subset against numpy, column-major like cuBLAS: gemm for every transpose
combination (float and double, padded leading dimensions), strided-batched gemm, geam,
gemv, and the level-1 routines."""

from __future__ import annotations

import numpy as np
import pytest

from test_runtime_support import build, run

M, N, K, PAD = 37, 29, 23, 3
BUFFER = 64 * 64

CUBLAS_PROGRAM = r"""
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

static std::vector<double> load(const char* path) {
    FILE* file = std::fopen(path, "rb");
    std::vector<double> data(64 * 64);
    if (std::fread(data.data(), sizeof(double), data.size(), file) != data.size()) std::abort();
    std::fclose(file);
    return data;
}

template <class T>
static void save(FILE* out, const std::vector<T>& data) { std::fwrite(data.data(), sizeof(T), data.size(), out); }

template <class T>
static std::vector<T> as(const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); }

#define CHECK(call) do { cublasStatus_t s_ = (call); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("fail %s %d\n", #call, s_); return 1; } } while (0)

template <class T, class Gemm, class Gemv, class Axpy, class Dot, class Scal, class Nrm2, class Asum, class Amax, class Batched, class Geam>
static int exercise(cublasHandle_t handle, FILE* out, Gemm gemm, Gemv gemv, Axpy axpy, Dot dot, Scal scal, Nrm2 nrm2, Asum asum,
                    Amax amax, Batched batched, Geam geam) {
    const int m = MM, n = NN, k = KK, pad = PAD;
    std::vector<T> a = as<T>(load("a.bin")), b = as<T>(load("b.bin")), c0 = as<T>(load("c.bin"));
    std::vector<T> x = as<T>(load("x.bin")), y0 = as<T>(load("y.bin"));
    const T alpha = T(1.5), beta = T(-0.5), zero = T(0);
    cublasOperation_t ops[2] = {CUBLAS_OP_N, CUBLAS_OP_T};
    for (cublasOperation_t op_a : ops)
        for (cublasOperation_t op_b : ops) {
            int lda = (op_a == CUBLAS_OP_N ? m : k) + pad, ldb = (op_b == CUBLAS_OP_N ? k : n) + pad, ldc = m + pad;
            std::vector<T> c = c0;
            CHECK(gemm(handle, op_a, op_b, m, n, k, &alpha, a.data(), lda, b.data(), ldb, &beta, c.data(), ldc));
            save(out, c);
        }
    // beta = 0 must ignore NaN in C.
    std::vector<T> c_nan(c0.size(), T(NAN));
    CHECK(gemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.data(), m, b.data(), k, &zero, c_nan.data(), m));
    save(out, c_nan);
    // Two batches of N x N products with strides.
    std::vector<T> c_batch = c0;
    long long stride_a = m * k, stride_b = k * n, stride_c = m * n;
    CHECK(batched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 16, 8, 4, &alpha, a.data(), 16, stride_a, b.data(), 4, stride_b, &beta,
                  c_batch.data(), 16, stride_c, 2));
    save(out, c_batch);
    std::vector<T> c_geam = c0;
    CHECK(geam(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, &alpha, a.data(), n, &beta, b.data(), m, c_geam.data(), m));
    save(out, c_geam);
    for (cublasOperation_t op : ops) {
        std::vector<T> y = y0;
        CHECK(gemv(handle, op, m, n, &alpha, a.data(), m + pad, x.data(), 2, &beta, y.data(), 1));
        save(out, y);
    }
    std::vector<T> y = y0;
    CHECK(axpy(handle, 50, &alpha, x.data(), 1, y.data(), 2));
    save(out, y);
    std::vector<T> scaled = x;
    CHECK(scal(handle, 40, &beta, scaled.data(), 3));
    save(out, scaled);
    T results[4];
    int index = 0;
    CHECK(dot(handle, 100, x.data(), 1, y0.data(), 1, &results[0]));
    CHECK(nrm2(handle, 100, x.data(), 1, &results[1]));
    CHECK(asum(handle, 50, x.data(), 2, &results[2]));
    CHECK(amax(handle, 100, x.data(), 1, &index));
    results[3] = T(index);
    save(out, std::vector<T>(results, results + 4));
    return 0;
}

int main() {
    cublasHandle_t handle;
    CHECK(cublasCreate(&handle));
    CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
    FILE* out = std::fopen("out_s.bin", "wb");
    if (exercise<float>(handle, out, cublasSgemm, cublasSgemv, cublasSaxpy, cublasSdot, cublasSscal, cublasSnrm2, cublasSasum,
                        cublasIsamax, cublasSgemmStridedBatched, cublasSgeam)) return 1;
    std::fclose(out);
    out = std::fopen("out_d.bin", "wb");
    if (exercise<double>(handle, out, cublasDgemm, cublasDgemv, cublasDaxpy, cublasDdot, cublasDscal, cublasDnrm2, cublasDasum,
                         cublasIdamax, cublasDgemmStridedBatched, cublasDgeam)) return 1;
    std::fclose(out);
    // Larger than one cache block in rows (256) and depth (128); small multiples of 1/4 keep
    // every sum exact, so the result is compared bit for bit.
    const int bm = 300, bn = 40, bk = 150;
    std::vector<float> big_a(bm * bk), big_b(bk * bn), big_c(bm * bn);
    for (int i = 0; i < bm * bk; ++i) big_a[i] = (i % 17) * 0.25f - 2.0f;
    for (int i = 0; i < bk * bn; ++i) big_b[i] = (i % 13) * 0.25f - 1.5f;
    FILE* big = std::fopen("out_big.bin", "wb");
    const float big_alpha = 1.0f, big_beta = 0.0f;
    for (cublasOperation_t op_a : {CUBLAS_OP_N, CUBLAS_OP_T}) {
        int lda = op_a == CUBLAS_OP_N ? bm : bk;
        CHECK(cublasSgemm(handle, op_a, CUBLAS_OP_T, bm, bn, bk, &big_alpha, big_a.data(), lda, big_b.data(), bn, &big_beta,
                          big_c.data(), bm));
        save(big, big_c);
    }
    std::fclose(big);
    // Matrix helpers: copy a 3 x 2 block between leading dimensions 5 and 3.
    float src[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, dst[6] = {0};
    CHECK(cublasSetMatrix(3, 2, sizeof(float), src, 5, dst, 3));
    printf("setmatrix %g %g %g %g %g %g\n", dst[0], dst[1], dst[2], dst[3], dst[4], dst[5]);
    float vec[3] = {0};
    CHECK(cublasGetVector(3, sizeof(float), src, 3, vec, 1));
    printf("getvector %g %g %g\n", vec[0], vec[1], vec[2]);
    float one = 1, zero_s = 0;
    printf("bad_lda %d\n", cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, src, 2, src, 4, &zero_s, dst, 4));
    CHECK(cublasDestroy(handle));
    return 0;
}
"""


def column_major(buffer: np.ndarray, rows: int, cols: int, ld: int) -> np.ndarray:
    return buffer[: ld * cols].reshape(cols, ld).T[:rows, :]


def expected_outputs(a, b, c0, x, y0) -> list[np.ndarray]:
    """What exercise() writes, computed with numpy in float64."""
    alpha, beta = 1.5, -0.5
    outputs = []
    for op_a in "NT":
        for op_b in "NT":
            lda = (M if op_a == "N" else K) + PAD
            ldb = (K if op_b == "N" else N) + PAD
            ldc = M + PAD
            A = column_major(a, M, K, lda) if op_a == "N" else column_major(a, K, M, lda).T
            B = column_major(b, K, N, ldb) if op_b == "N" else column_major(b, N, K, ldb).T
            c = c0.copy()
            view = c[: ldc * N].reshape(N, ldc).T
            view[:M, :] = alpha * A @ B + beta * view[:M, :]
            outputs.append(c)
    c = np.full_like(c0, np.nan)
    c[: M * N] = (alpha * column_major(a, M, K, M) @ column_major(b, K, N, K)).T.ravel()
    outputs.append(c)
    c = c0.copy()
    for batch in range(2):
        A = column_major(a[batch * M * K :], 16, 4, 16)
        B = column_major(b[batch * K * N :], 4, 8, 4)
        C = c[batch * M * N : batch * M * N + 16 * 8].reshape(8, 16).T
        c[batch * M * N : batch * M * N + 16 * 8] = (alpha * A @ B + beta * C).T.ravel()
    outputs.append(c)
    c = c0.copy()
    c[: M * N] = (alpha * column_major(a, N, M, N).T + beta * column_major(b, M, N, M)).T.ravel()
    outputs.append(c)
    A = column_major(a, M, N, M + PAD)
    for op in "NT":
        y = y0.copy()
        if op == "N":
            y[:M] = alpha * A @ x[: 2 * N : 2] + beta * y[:M]
        else:
            y[:N] = alpha * A.T @ x[: 2 * M : 2] + beta * y[:N]
        outputs.append(y)
    y = y0.copy()
    y[: 100 : 2] += alpha * x[:50]
    outputs.append(y)
    scaled = x.copy()
    scaled[: 120 : 3] *= beta
    outputs.append(scaled)
    scalars = np.array([x[:100] @ y0[:100], np.linalg.norm(x[:100]), np.abs(x[:100:2]).sum(), np.argmax(np.abs(x[:100])) + 1])
    outputs.append(scalars)
    return outputs


@pytest.fixture(scope="module")
def cublas_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("cublas")
    rng = np.random.default_rng(3)
    inputs = {name: rng.uniform(-1, 1, BUFFER) for name in ("a", "b", "c", "x", "y")}
    for name, values in inputs.items():
        values.tofile(workdir / f"{name}.bin")
    exe = build({"cublas.cpp": CUBLAS_PROGRAM}, workdir, extra_flags=(f"-DMM={M}", f"-DNN={N}", f"-DKK={K}", f"-DPAD={PAD}"))
    output = run(exe, threads=2)
    return workdir, inputs, output


@pytest.mark.parametrize("dtype, suffix, rtol", [(np.float32, "s", 2e-5), (np.float64, "d", 1e-12)])
def test_blas_routines_match_numpy(cublas_run, dtype, suffix, rtol):
    workdir, inputs, _ = cublas_run
    cast = {name: values.astype(dtype).astype(np.float64) for name, values in inputs.items()}
    expected = expected_outputs(cast["a"], cast["b"], cast["c"], cast["x"], cast["y"])
    got = np.fromfile(workdir / f"out_{suffix}.bin", dtype=dtype).astype(np.float64)
    names = ["gemm_NN", "gemm_NT", "gemm_TN", "gemm_TT", "gemm_beta0", "gemm_strided_batched", "geam", "gemv_N", "gemv_T",
             "axpy", "scal", "dot_nrm2_asum_amax"]
    offset = 0
    for name, want in zip(names, expected):
        part = got[offset : offset + want.size]
        offset += want.size
        assert np.allclose(part, want, rtol=rtol, atol=rtol, equal_nan=True), name
    assert offset == got.size


def test_gemm_across_cache_blocks_is_exact(cublas_run):
    workdir = cublas_run[0]
    bm, bn, bk = 300, 40, 150
    a = (np.arange(bm * bk) % 17) * 0.25 - 2.0
    b = (np.arange(bk * bn) % 13) * 0.25 - 1.5
    op_b = b.reshape(bk, bn)  # B is bn x bk column-major, so op(B) = B^T is this array
    got = np.fromfile(workdir / "out_big.bin", dtype=np.float32).reshape(2, bn, bm)
    expected_n = a.reshape(bk, bm).T @ op_b  # A column-major bm x bk
    expected_t = a.reshape(bm, bk) @ op_b  # A column-major bk x bm, transposed
    assert np.array_equal(got[0].T, expected_n)
    assert np.array_equal(got[1].T, expected_t)


def test_matrix_helpers_and_argument_checks(cublas_run):
    lines = cublas_run[2].splitlines()
    assert lines[0].split() == ["setmatrix", "0", "1", "2", "5", "6", "7"]
    assert lines[1].split() == ["getvector", "0", "3", "6"]
    assert lines[2].split() == ["bad_lda", "7"]  # CUBLAS_STATUS_INVALID_VALUE


GEMM_EX_PROGRAM = r"""
#include <cublas_v2.h>
#include <cstdio>
#include <vector>

int main() {
    const int m = 19, n = 7, k = 33;
    std::vector<float> a(m * k), b(k * n);
    for (int i = 0; i < m * k; ++i) a[i] = float((i * 37) % 101) / 50.0f - 1.0f;
    for (int i = 0; i < k * n; ++i) b[i] = float((i * 53) % 97) / 40.0f - 1.2f;
    std::vector<__half> a_half(a.size()), b_half(b.size()), c_half(m * n);
    std::vector<__nv_bfloat16> a_bf16(a.size()), b_bf16(b.size());
    for (size_t i = 0; i < a.size(); ++i) { a_half[i] = __float2half(a[i]); a_bf16[i] = __float2bfloat16(a[i]); }
    for (size_t i = 0; i < b.size(); ++i) { b_half[i] = __float2half(b[i]); b_bf16[i] = __float2bfloat16(b[i]); }
    cublasHandle_t handle;
    cublasCreate(&handle);
    const float alpha = 1.0f, beta = 0.0f;
    std::vector<float> c_from_half(m * n), c_from_bf16(m * n);
    cublasStatus_t s1 = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a_half.data(), CUDA_R_16F, m, b_half.data(),
                                     CUDA_R_16F, k, &beta, c_from_half.data(), CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    cublasStatus_t s2 = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a_bf16.data(), CUDA_R_16BF, m, b_bf16.data(),
                                     CUDA_R_16BF, k, &beta, c_from_bf16.data(), CUDA_R_32F, m, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    const __half one = __float2half(1.0f), zero = __float2half(0.0f);
    cublasStatus_t s3 = cublasHgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a_half.data(), m, b_half.data(), k, &zero,
                                    c_half.data(), m);
    cublasStatus_t s4 = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a_half.data(), CUDA_R_8I, m, b_half.data(),
                                     CUDA_R_16F, k, &beta, c_from_half.data(), CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    printf("status %d %d %d %d\n", s1, s2, s3, s4);
    FILE* out = std::fopen("gemm_ex.bin", "wb");
    std::fwrite(c_from_half.data(), sizeof(float), c_from_half.size(), out);
    std::fwrite(c_from_bf16.data(), sizeof(float), c_from_bf16.size(), out);
    std::fwrite(c_half.data(), sizeof(__half), c_half.size(), out);
    std::fclose(out);
    cublasDestroy(handle);
    return 0;
}
"""


def bfloat16_round(values: np.ndarray) -> np.ndarray:
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16).astype(np.uint32).view(np.float32)


def test_mixed_precision_gemm(tmp_path):
    m, n, k = 19, 7, 33
    exe = build({"gemm_ex.cpp": GEMM_EX_PROGRAM}, tmp_path)
    assert run(exe).split() == ["status", "0", "0", "0", "15"]  # CUDA_R_8I: CUBLAS_STATUS_NOT_SUPPORTED
    a = (np.arange(m * k) * 37 % 101).astype(np.float32) / np.float32(50) - np.float32(1)
    b = (np.arange(k * n) * 53 % 97).astype(np.float32) / np.float32(40) - np.float32(1.2)
    raw = (tmp_path / "gemm_ex.bin").read_bytes()
    from_half = np.frombuffer(raw[: 4 * m * n], dtype=np.float32)
    from_bf16 = np.frombuffer(raw[4 * m * n : 8 * m * n], dtype=np.float32)
    half_result = np.frombuffer(raw[8 * m * n :], dtype=np.float16)

    def product(x, y):
        return (x.astype(np.float64).reshape(k, m).T @ y.astype(np.float64).reshape(n, k).T).T.ravel()

    expected_half = product(a.astype(np.float16), b.astype(np.float16))
    assert np.allclose(from_half, expected_half, rtol=1e-5, atol=1e-5)
    assert np.allclose(from_bf16, product(bfloat16_round(a), bfloat16_round(b)), rtol=1e-5, atol=1e-5)
    assert np.allclose(half_result.astype(np.float64), expected_half, rtol=1e-3, atol=1e-3)


CUBLAS_LT_PROGRAM = r"""
#include <cublasLt.h>
#include <cstdio>
int main() {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a;
    if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) return 1;
    if (cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return 1;
    cublasOperation_t t = CUBLAS_OP_T, back = CUBLAS_OP_N;
    size_t written = 0;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t));
    cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &back, sizeof(back), &written);
    cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 4, 4, 4);
    float x[16] = {0};
    cublasStatus_t product = cublasLtMatmul(lt, desc, x, x, a, x, a, x, x, a, x, a, nullptr, nullptr, 0, 0);
    printf("%d %zu %d\n", back == CUBLAS_OP_T, written, product == CUBLAS_STATUS_NOT_SUPPORTED);
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatmulDescDestroy(desc);
    return cublasLtDestroy(lt);
}
"""


def test_cublaslt_handles_and_descriptors_work_and_its_matmul_says_it_is_not_provided(tmp_path):
    assert run(build({"lt.cpp": CUBLAS_LT_PROGRAM}, tmp_path)).split() == ["1", str(4), "1"]


LEVEL1_EX_PROGRAM = r"""
#include <cublas_v2.h>
#include <cstdio>
#include <vector>

int main() {
    cublasHandle_t handle;
    cublasCreate(&handle);
    cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE);
    const int n = 1000;
    std::vector<float> xf(n), yf(n);
    std::vector<double> xd(n), yd(n);
    std::vector<__half> xh(n), yh(n);
    std::vector<__nv_bfloat16> xb(n), yb(n);
    for (int i = 0; i < n; ++i) {
        xf[i] = xd[i] = float(i % 7) * 0.5f;
        yf[i] = yd[i] = float(i % 5) - 1.0f;
        xh[i] = __float2half(xf[i]); yh[i] = __float2half(yf[i]);
        xb[i] = __float2bfloat16(xf[i]); yb[i] = __float2bfloat16(yf[i]);
    }
    double dd = 0; float df = 0; __half dh; __nv_bfloat16 db;
    int s1 = cublasDotEx(handle, n, xd.data(), CUDA_R_64F, 1, yd.data(), CUDA_R_64F, 1, &dd, CUDA_R_64F, CUDA_R_64F);
    int s2 = cublasDotEx(handle, n, xf.data(), CUDA_R_32F, 1, yf.data(), CUDA_R_32F, 1, &df, CUDA_R_32F, CUDA_R_32F);
    int s3 = cublasDotEx(handle, n, xh.data(), CUDA_R_16F, 1, yh.data(), CUDA_R_16F, 1, &dh, CUDA_R_16F, CUDA_R_32F);
    int s4 = cublasDotcEx(handle, n, xb.data(), CUDA_R_16BF, 1, yb.data(), CUDA_R_16BF, 1, &db, CUDA_R_16BF, CUDA_R_32F);
    int s5 = cublasDotEx(handle, n, xh.data(), CUDA_R_8I, 1, yh.data(), CUDA_R_16F, 1, &dh, CUDA_R_16F, CUDA_R_32F);
    printf("dot %d %d %d %d %d %g %g %g %g\n", s1, s2, s3, s4, s5, dd, df, __half2float(dh), __bfloat162float(db));
    // y = 2 x + y on half vectors, the stride of x being 2; then y *= 0.5; its norm.
    const float two = 2.0f, half_scale = 0.5f;
    std::vector<__half> y(4), x(8);
    for (int i = 0; i < 8; ++i) x[i] = __float2half(float(i));
    for (int i = 0; i < 4; ++i) y[i] = __float2half(1.0f);
    int s6 = cublasAxpyEx(handle, 4, &two, CUDA_R_32F, x.data(), CUDA_R_16F, 2, y.data(), CUDA_R_16F, 1, CUDA_R_32F);
    int s7 = cublasScalEx(handle, 4, &half_scale, CUDA_R_32F, y.data(), CUDA_R_16F, 1, CUDA_R_32F);
    float norm = 0;
    int s8 = cublasNrm2Ex(handle, 4, y.data(), CUDA_R_16F, 1, &norm, CUDA_R_32F, CUDA_R_32F);
    printf("axpy %d %d %d %g %g %g %g %g\n", s6, s7, s8, __half2float(y[0]), __half2float(y[1]), __half2float(y[2]),
           __half2float(y[3]), norm);
    // A long float vector: cuBLAS's tree sum keeps the terms a running float sum drops past 2^24.
    const int ones = 1 << 25;
    std::vector<float> one(ones, 1.0f);
    float long_dot = 0, long_asum = 0, long_nrm2 = 0;
    cublasSdot(handle, ones, one.data(), 1, one.data(), 1, &long_dot);
    cublasSasum(handle, ones, one.data(), 1, &long_asum);
    cublasSnrm2(handle, ones, one.data(), 1, &long_nrm2);
    printf("long %.1f %.1f %.3f\n", long_dot, long_asum, long_nrm2);
    cublasDestroy(handle);
    return 0;
}
"""


def test_mixed_precision_level1(tmp_path):
    exe = build({"level1_ex.cpp": LEVEL1_EX_PROGRAM}, tmp_path)
    lines = {line.split()[0]: line.split()[1:] for line in run(exe).splitlines()}
    x = np.arange(1000) % 7 * 0.5
    y = np.arange(1000) % 5 - 1.0
    expected = float(x @ y)
    assert lines["dot"][:5] == ["0", "0", "0", "0", "15"]  # CUDA_R_8I: CUBLAS_STATUS_NOT_SUPPORTED
    bf16_expected = float(bfloat16_round(np.array([expected]))[0])  # the bfloat16 result, rounded once
    assert [float(v) for v in lines["dot"][5:]] == [expected, expected, expected, bf16_expected]
    y_out = (1.0 + 2.0 * np.arange(0, 8, 2)) * 0.5
    assert lines["axpy"][:3] == ["0", "0", "0"]
    assert [float(v) for v in lines["axpy"][3:7]] == list(y_out)
    assert float(lines["axpy"][7]) == pytest.approx(np.linalg.norm(y_out), rel=1e-6)
    assert lines["long"][:2] == ["33554432.0", "33554432.0"]
    assert float(lines["long"][2]) == pytest.approx(np.sqrt(2.0**25), rel=1e-6)  # a float sum of squares stops at 2^24
