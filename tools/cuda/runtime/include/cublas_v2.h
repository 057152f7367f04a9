// CPU CUDA runtime: a cuBLAS (v2 API) subset on the CPU, column-major like cuBLAS.
//
// Level 1: axpy, dot, scal, nrm2, asum, amax/amin (1-based), copy, swap (S and D); DotEx, DotcEx,
// AxpyEx, ScalEx and Nrm2Ex for float, double, half and bfloat16 vectors.
// Level 2: gemv (S and D).  Level 3: gemm, gemm (strided) batched, geam (S and D);
// GemmEx, GemmStridedBatchedEx, SgemmEx and Hgemm for float, double, half and bfloat16
// matrices (computed in float, or double for 64-bit types, and rounded once on output).
// Matrix helpers: cublasSetMatrix/GetMatrix/SetVector/GetVector (+Async).
// The pointer mode is recorded but makes no difference: scalars are read, and results
// written, through the pointers given, whichever memory they name (there is one).
// gemm is parallel over column panels of C with OpenMP, cache-blocked, and keeps the
// innermost loop unit-stride for every combination of transposes.
#pragma once
#define CUBLAS_V2_H_
#include "cuda_bf16.h"
#include "cuda_fp16.h"
#include "cuda_runtime.h"
#include "library_types.h"

#include <cmath>
#include <cstring>
#include <vector>

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16,
} cublasStatus_t;

typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2, CUBLAS_OP_HERMITAN = 2, CUBLAS_OP_CONJG = 3 } cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum { CUBLAS_ATOMICS_NOT_ALLOWED = 0, CUBLAS_ATOMICS_ALLOWED = 1 } cublasAtomicsMode_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1, CUBLAS_FILL_MODE_FULL = 2 } cublasFillMode_t;
typedef enum { CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1 } cublasDiagType_t;
typedef enum { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 } cublasSideMode_t;
typedef enum {
    CUBLAS_DEFAULT_MATH = 0,
    CUBLAS_TENSOR_OP_MATH = 1,
    CUBLAS_PEDANTIC_MATH = 2,
    CUBLAS_TF32_TENSOR_OP_MATH = 3,
} cublasMath_t;

typedef enum {
    CUBLAS_COMPUTE_16F = 64,
    CUBLAS_COMPUTE_16F_PEDANTIC = 65,
    CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC = 69,
    CUBLAS_COMPUTE_32F_FAST_16F = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_64F = 70,
    CUBLAS_COMPUTE_64F_PEDANTIC = 71,
    CUBLAS_COMPUTE_32I = 72,
    CUBLAS_COMPUTE_32I_PEDANTIC = 73,
} cublasComputeType_t;

typedef enum {
    CUBLAS_GEMM_DEFAULT = -1,
    CUBLAS_GEMM_DFALT = -1,
    CUBLAS_GEMM_ALGO0 = 0,
    CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
    CUBLAS_GEMM_DFALT_TENSOR_OP = 99,
    CUBLAS_GEMM_ALGO0_TENSOR_OP = 100,
} cublasGemmAlgo_t;

struct cublasContext {
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasAtomicsMode_t atomics_mode;
    cublasMath_t math_mode;
};
typedef struct cublasContext* cublasHandle_t;

namespace cuda_cpu {
namespace blas {

// Element (row, col) of op(A), where A is column-major with leading dimension lda.
template <class T>
inline T op_at(const T* a, int lda, cublasOperation_t op, int row, int col) {
    return op == CUBLAS_OP_N ? a[row + static_cast<long long>(col) * lda] : a[col + static_cast<long long>(row) * lda];
}

inline bool valid_op(cublasOperation_t op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

// C = alpha op(A) op(B) + beta C, C m x n, op(A) m x k, op(B) k x n; column-major.
template <class T>
inline cublasStatus_t gemm(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, T alpha, const T* a,
                           int lda, const T* b, int ldb, T beta, T* c, int ldc) {
    if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || k < 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (lda < ((transa == CUBLAS_OP_N) ? (m > 1 ? m : 1) : (k > 1 ? k : 1))) return CUBLAS_STATUS_INVALID_VALUE;
    if (ldb < ((transb == CUBLAS_OP_N) ? (k > 1 ? k : 1) : (n > 1 ? n : 1))) return CUBLAS_STATUS_INVALID_VALUE;
    if (ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
    // A transposed: materialise op(A) (m x k, column-major) once, O(mk) next to O(mnk) work,
    // so that one kernel with unit-stride inner loops serves every combination.
    std::vector<T> a_copy;
    if (transa != CUBLAS_OP_N) {
        a_copy.resize(static_cast<size_t>(m) * static_cast<size_t>(k));
        for (int l = 0; l < k; ++l)
            for (int i = 0; i < m; ++i) a_copy[static_cast<size_t>(i) + static_cast<size_t>(l) * static_cast<size_t>(m)] = op_at(a, lda, transa, i, l);
        a = a_copy.data();
        lda = m;
    }
    // Panels of columns of C run in parallel.  Inside a panel, a block of A (rows x depth,
    // reused from cache across the panel) meets register tiles of C: micro_rows x 4
    // accumulators updated with one contiguous load of A per step of the depth loop.
    constexpr int micro_rows = 64 / static_cast<int>(sizeof(T)), micro_cols = 4;
    constexpr int panel_width = 32, row_block = 256, depth_block = 128;
    const int panels = (n + panel_width - 1) / panel_width;
CUDA_CPU_OMP(omp parallel for schedule(static))
    for (int panel = 0; panel < panels; ++panel) {
        const int j_begin = panel * panel_width;
        const int j_end = j_begin + panel_width < n ? j_begin + panel_width : n;
        for (int j = j_begin; j < j_end; ++j) {
            T* c_col = c + static_cast<long long>(j) * ldc;
            // beta == 0 overwrites C without reading it (NaN in C does not propagate), as in BLAS.
            if (beta == T(0)) {
                for (int i = 0; i < m; ++i) c_col[i] = T(0);
            } else if (beta != T(1)) {
                for (int i = 0; i < m; ++i) c_col[i] *= beta;
            }
        }
        if (alpha == T(0) || k == 0) continue;
        for (int i_begin = 0; i_begin < m; i_begin += row_block) {
            const int i_end = i_begin + row_block < m ? i_begin + row_block : m;
            for (int l_begin = 0; l_begin < k; l_begin += depth_block) {
                const int l_end = l_begin + depth_block < k ? l_begin + depth_block : k;
                int j = j_begin;
                for (; j + micro_cols <= j_end; j += micro_cols) {
                    // op(B) for these columns and this depth block, packed contiguously.
                    T b_pack[depth_block][micro_cols];
                    for (int l = l_begin; l < l_end; ++l)
                        for (int jj = 0; jj < micro_cols; ++jj) b_pack[l - l_begin][jj] = op_at(b, ldb, transb, l, j + jj);
                    int i = i_begin;
                    for (; i + micro_rows <= i_end; i += micro_rows) {
                        // GCC vector extensions keep the tile in registers at -O2 as well as -O3.
                        typedef T Tile __attribute__((vector_size(micro_rows * sizeof(T))));
                        Tile acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
                        for (int l = l_begin; l < l_end; ++l) {
                            Tile a_tile;
                            std::memcpy(&a_tile, a + static_cast<long long>(l) * lda + i, sizeof(Tile));
                            const T* b_row = b_pack[l - l_begin];
                            acc0 += a_tile * b_row[0];
                            acc1 += a_tile * b_row[1];
                            acc2 += a_tile * b_row[2];
                            acc3 += a_tile * b_row[3];
                        }
                        const Tile* tiles[micro_cols] = {&acc0, &acc1, &acc2, &acc3};
                        for (int jj = 0; jj < micro_cols; ++jj) {
                            T* c_col = c + static_cast<long long>(j + jj) * ldc + i;
                            for (int r = 0; r < micro_rows; ++r) c_col[r] += alpha * (*tiles[jj])[r];
                        }
                    }
                    for (; i < i_end; ++i)  // rows left over below the last tile
                        for (int jj = 0; jj < micro_cols; ++jj) {
                            T sum = T(0);
                            for (int l = l_begin; l < l_end; ++l) sum += a[i + static_cast<long long>(l) * lda] * b_pack[l - l_begin][jj];
                            c[i + static_cast<long long>(j + jj) * ldc] += alpha * sum;
                        }
                }
                for (; j < j_end; ++j) {  // columns left over right of the last tile
                    T* c_col = c + static_cast<long long>(j) * ldc;
                    for (int l = l_begin; l < l_end; ++l) {
                        const T scale = alpha * op_at(b, ldb, transb, l, j);
                        const T* a_col = a + static_cast<long long>(l) * lda;
CUDA_CPU_OMP(omp simd)
                        for (int i = i_begin; i < i_end; ++i) c_col[i] += scale * a_col[i];
                    }
                }
            }
        }
    }
    return CUBLAS_STATUS_SUCCESS;
}

// y = alpha op(A) x + beta y, A m x n column-major.
template <class T>
inline cublasStatus_t gemv(cublasOperation_t trans, int m, int n, T alpha, const T* a, int lda, const T* x, int incx, T beta,
                           T* y, int incy) {
    if (!valid_op(trans) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
    const int rows = trans == CUBLAS_OP_N ? m : n;  // length of y
    const int cols = trans == CUBLAS_OP_N ? n : m;  // length of x
    auto x_at = [&](int l) { return x[(incx > 0 ? l : l - cols + 1) * static_cast<long long>(incx)]; };
    auto y_index = [&](int i) { return (incy > 0 ? i : i - rows + 1) * static_cast<long long>(incy); };
    if (trans == CUBLAS_OP_N) {
        std::vector<T> result(static_cast<size_t>(rows), T(0));
        for (int l = 0; l < cols; ++l) {
            T scale = x_at(l);
            const T* a_col = a + static_cast<long long>(l) * lda;
            for (int i = 0; i < rows; ++i) result[static_cast<size_t>(i)] += a_col[i] * scale;
        }
        for (int i = 0; i < rows; ++i) {
            T& target = y[y_index(i)];
            target = alpha * result[static_cast<size_t>(i)] + (beta == T(0) ? T(0) : beta * target);
        }
    } else {
CUDA_CPU_OMP(omp parallel for schedule(static) if (static_cast<long long>(rows) * cols > 65536))
        for (int i = 0; i < rows; ++i) {
            const T* a_col = a + static_cast<long long>(i) * lda;
            T sum = T(0);
            for (int l = 0; l < cols; ++l) sum += a_col[l] * x_at(l);
            T& target = y[y_index(i)];
            target = alpha * sum + (beta == T(0) ? T(0) : beta * target);
        }
    }
    return CUBLAS_STATUS_SUCCESS;
}

// Element i of a strided vector (BLAS convention: negative increments start at the end).
template <class T>
inline T& element(T* x, int n, int inc, int i) {
    return x[(inc > 0 ? i : i - n + 1) * static_cast<long long>(inc)];
}

template <class T>
inline cublasStatus_t axpy(int n, const T* alpha, const T* x, int incx, T* y, int incy) {
    if (alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < n; ++i) element(y, n, incy, i) += *alpha * element(x, n, incx, i);
    return CUBLAS_STATUS_SUCCESS;
}

// Sums of float vectors accumulate in double: cuBLAS adds in a tree, which keeps the small terms
// of a long vector that one running float sum drops (2^25 ones add up to 2^24 in float).
template <class T>
using accumulator = decltype(T(0) * 0.0);

template <class T>
inline cublasStatus_t dot(int n, const T* x, int incx, const T* y, int incy, T* result) {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    accumulator<T> sum = 0;
CUDA_CPU_OMP(omp parallel for schedule(static) reduction(+ : sum) if (n > 65536))
    for (int i = 0; i < n; ++i) sum += accumulator<T>(element(x, n, incx, i)) * element(y, n, incy, i);
    *result = T(sum);
    return CUBLAS_STATUS_SUCCESS;
}

template <class T>
inline cublasStatus_t scal(int n, const T* alpha, T* x, int incx) {
    if (alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (incx <= 0) return CUBLAS_STATUS_SUCCESS;  // BLAS: nothing to do
    for (int i = 0; i < n; ++i) x[static_cast<long long>(i) * incx] *= *alpha;
    return CUBLAS_STATUS_SUCCESS;
}

template <class T>
inline cublasStatus_t nrm2(int n, const T* x, int incx, T* result) {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (n <= 0 || incx <= 0) {
        *result = T(0);
        return CUBLAS_STATUS_SUCCESS;
    }
    if (sizeof(accumulator<T>) > sizeof(T)) {
        // A float vector's squares are summed in double, whose range holds the square of any float
        // (no scaling needed) and whose precision keeps the small terms of a long vector: one running
        // float sum stops growing once a term is under half its last place (cuBLAS sums in a tree).
        accumulator<T> squares = 0;
CUDA_CPU_OMP(omp parallel for schedule(static) reduction(+ : squares) if (n > 65536))
        for (int i = 0; i < n; ++i) {
            accumulator<T> v = x[static_cast<long long>(i) * incx];
            squares += v * v;
        }
        *result = T(std::sqrt(squares));
        return CUBLAS_STATUS_SUCCESS;
    }
    // Scaled sum of squares: no overflow or underflow for extreme magnitudes.
    T scale = T(0), sum = T(1);
    for (int i = 0; i < n; ++i) {
        T v = std::fabs(x[static_cast<long long>(i) * incx]);
        if (v == T(0)) continue;
        if (scale < v) {
            sum = T(1) + sum * (scale / v) * (scale / v);
            scale = v;
        } else {
            sum += (v / scale) * (v / scale);
        }
    }
    *result = scale * std::sqrt(sum);
    return CUBLAS_STATUS_SUCCESS;
}

template <class T>
inline cublasStatus_t asum(int n, const T* x, int incx, T* result) {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    accumulator<T> sum = 0;
    if (incx > 0) {
CUDA_CPU_OMP(omp parallel for schedule(static) reduction(+ : sum) if (n > 65536))
        for (int i = 0; i < n; ++i) sum += std::fabs(x[static_cast<long long>(i) * incx]);
    }
    *result = T(sum);
    return CUBLAS_STATUS_SUCCESS;
}

// 1-based index of the first element of largest (or smallest) magnitude; 0 when n <= 0.
template <class T, class Better>
inline cublasStatus_t extreme_index(int n, const T* x, int incx, int* result, Better better) {
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *result = 0;
    if (n <= 0 || incx <= 0) return CUBLAS_STATUS_SUCCESS;
    T best = std::fabs(x[0]);
    *result = 1;
    for (int i = 1; i < n; ++i) {
        T v = std::fabs(x[static_cast<long long>(i) * incx]);
        if (better(v, best)) {
            best = v;
            *result = i + 1;
        }
    }
    return CUBLAS_STATUS_SUCCESS;
}

template <class T>
inline cublasStatus_t copy(int n, const T* x, int incx, T* y, int incy) {
    for (int i = 0; i < n; ++i) element(y, n, incy, i) = element(x, n, incx, i);
    return CUBLAS_STATUS_SUCCESS;
}

template <class T>
inline cublasStatus_t swap(int n, T* x, int incx, T* y, int incy) {
    for (int i = 0; i < n; ++i) {
        T t = element(x, n, incx, i);
        element(x, n, incx, i) = element(y, n, incy, i);
        element(y, n, incy, i) = t;
    }
    return CUBLAS_STATUS_SUCCESS;
}

// C = alpha op(A) + beta op(B), m x n.
template <class T>
inline cublasStatus_t geam(cublasOperation_t transa, cublasOperation_t transb, int m, int n, const T* alpha, const T* a, int lda,
                           const T* beta, const T* b, int ldb, T* c, int ldc) {
    if (alpha == nullptr || beta == nullptr || !valid_op(transa) || !valid_op(transb) || m < 0 || n < 0) return CUBLAS_STATUS_INVALID_VALUE;
CUDA_CPU_OMP(omp parallel for schedule(static) if (static_cast<long long>(m) * n > 65536))
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            T left = *alpha == T(0) ? T(0) : *alpha * op_at(a, lda, transa, i, j);
            T right = *beta == T(0) ? T(0) : *beta * op_at(b, ldb, transb, i, j);
            c[i + static_cast<long long>(j) * ldc] = left + right;
        }
    return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t copy_matrix(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb) {
    if (rows < 0 || cols < 0 || elem_size <= 0 || lda < rows || ldb < rows) return CUBLAS_STATUS_INVALID_VALUE;
    for (int j = 0; j < cols; ++j)
        std::memmove(static_cast<char*>(b) + static_cast<long long>(j) * ldb * elem_size,
                     static_cast<const char*>(a) + static_cast<long long>(j) * lda * elem_size, static_cast<size_t>(rows) * static_cast<size_t>(elem_size));
    return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t copy_vector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
    if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    for (int i = 0; i < n; ++i)
        std::memmove(static_cast<char*>(y) + static_cast<long long>(i) * incy * elem_size,
                     static_cast<const char*>(x) + static_cast<long long>(i) * incx * elem_size, static_cast<size_t>(elem_size));
    return CUBLAS_STATUS_SUCCESS;
}

}  // namespace blas
}  // namespace cuda_cpu

// ---------------------------------------------------------------- handle
inline cublasStatus_t cublasCreate(cublasHandle_t* handle) {
    if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasContext{nullptr, CUBLAS_POINTER_MODE_HOST, CUBLAS_ATOMICS_NOT_ALLOWED, CUBLAS_DEFAULT_MATH};
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t handle) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (stream == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetPointerMode(cublasHandle_t handle, cublasPointerMode_t* mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (mode == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pointer_mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetAtomicsMode(cublasHandle_t handle, cublasAtomicsMode_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->atomics_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->math_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetVersion(cublasHandle_t, int* version) {
    if (version == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *version = 120000;
    return CUBLAS_STATUS_SUCCESS;
}
inline const char* cublasGetStatusName(cublasStatus_t status) {
    switch (status) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}
inline const char* cublasGetStatusString(cublasStatus_t status) {
    switch (status) {
        case CUBLAS_STATUS_SUCCESS: return "success";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
        case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
        case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
        default: return "an internal operation failed";
    }
}

// ---------------------------------------------------------------- host <-> "device" copies
inline cublasStatus_t cublasSetMatrix(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb) {
    return cuda_cpu::blas::copy_matrix(rows, cols, elem_size, a, lda, b, ldb);
}
inline cublasStatus_t cublasGetMatrix(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb) {
    return cuda_cpu::blas::copy_matrix(rows, cols, elem_size, a, lda, b, ldb);
}
inline cublasStatus_t cublasSetMatrixAsync(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb, cudaStream_t) {
    return cuda_cpu::blas::copy_matrix(rows, cols, elem_size, a, lda, b, ldb);
}
inline cublasStatus_t cublasGetMatrixAsync(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb, cudaStream_t) {
    return cuda_cpu::blas::copy_matrix(rows, cols, elem_size, a, lda, b, ldb);
}
inline cublasStatus_t cublasSetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
    return cuda_cpu::blas::copy_vector(n, elem_size, x, incx, y, incy);
}
inline cublasStatus_t cublasGetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
    return cuda_cpu::blas::copy_vector(n, elem_size, x, incx, y, incy);
}
inline cublasStatus_t cublasSetVectorAsync(int n, int elem_size, const void* x, int incx, void* y, int incy, cudaStream_t) {
    return cuda_cpu::blas::copy_vector(n, elem_size, x, incx, y, incy);
}
inline cublasStatus_t cublasGetVectorAsync(int n, int elem_size, const void* x, int incx, void* y, int incy, cudaStream_t) {
    return cuda_cpu::blas::copy_vector(n, elem_size, x, incx, y, incy);
}

// ---------------------------------------------------------------- S and D entry points
#define CUDA_CPU_CUBLAS_FOR_TYPE(P, p, T)                                                                                        \
    inline cublasStatus_t cublas##P##axpy(cublasHandle_t h, int n, const T* alpha, const T* x, int incx, T* y, int incy) {     \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::axpy(n, alpha, x, incx, y, incy);                                                                \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##dot(cublasHandle_t h, int n, const T* x, int incx, const T* y, int incy, T* result) {     \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::dot(n, x, incx, y, incy, result);                                                                \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##scal(cublasHandle_t h, int n, const T* alpha, T* x, int incx) {                          \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::scal(n, alpha, x, incx);                                                                         \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##nrm2(cublasHandle_t h, int n, const T* x, int incx, T* result) {                         \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::nrm2(n, x, incx, result);                                                                        \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##asum(cublasHandle_t h, int n, const T* x, int incx, T* result) {                         \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::asum(n, x, incx, result);                                                                        \
    }                                                                                                                           \
    inline cublasStatus_t cublasI##p##amax(cublasHandle_t h, int n, const T* x, int incx, int* result) {                      \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::extreme_index(n, x, incx, result, [](T v, T best) { return v > best; });                         \
    }                                                                                                                           \
    inline cublasStatus_t cublasI##p##amin(cublasHandle_t h, int n, const T* x, int incx, int* result) {                      \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::extreme_index(n, x, incx, result, [](T v, T best) { return v < best; });                         \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##copy(cublasHandle_t h, int n, const T* x, int incx, T* y, int incy) {                    \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::copy(n, x, incx, y, incy);                                                                       \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##swap(cublasHandle_t h, int n, T* x, int incx, T* y, int incy) {                          \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::swap(n, x, incx, y, incy);                                                                       \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##gemv(cublasHandle_t h, cublasOperation_t trans, int m, int n, const T* alpha, const T* a, \
                                          int lda, const T* x, int incx, const T* beta, T* y, int incy) {                       \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                            \
        return cuda_cpu::blas::gemv(trans, m, n, *alpha, a, lda, x, incx, *beta, y, incy);                                      \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##gemm(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n,  \
                                          int k, const T* alpha, const T* a, int lda, const T* b, int ldb, const T* beta, T* c, \
                                          int ldc) {                                                                            \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;                                            \
        return cuda_cpu::blas::gemm(transa, transb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc);                            \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##gemmStridedBatched(                                                                        \
        cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, const T* alpha, const T* a, \
        int lda, long long stride_a, const T* b, int ldb, long long stride_b, const T* beta, T* c, int ldc, long long stride_c, \
        int batch_count) {                                                                                                      \
        for (int i = 0; i < batch_count; ++i) {                                                                                 \
            cublasStatus_t status = cublas##P##gemm(h, transa, transb, m, n, k, alpha, a + i * stride_a, lda,                   \
                                                    b + i * stride_b, ldb, beta, c + i * stride_c, ldc);                        \
            if (status != CUBLAS_STATUS_SUCCESS) return status;                                                                 \
        }                                                                                                                       \
        return CUBLAS_STATUS_SUCCESS;                                                                                           \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##gemmBatched(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m,  \
                                                 int n, int k, const T* alpha, const T* const a[], int lda, const T* const b[], \
                                                 int ldb, const T* beta, T* const c[], int ldc, int batch_count) {              \
        for (int i = 0; i < batch_count; ++i) {                                                                                 \
            cublasStatus_t status = cublas##P##gemm(h, transa, transb, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc);  \
            if (status != CUBLAS_STATUS_SUCCESS) return status;                                                                 \
        }                                                                                                                       \
        return CUBLAS_STATUS_SUCCESS;                                                                                           \
    }                                                                                                                           \
    inline cublasStatus_t cublas##P##geam(cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb, int m, int n,  \
                                          const T* alpha, const T* a, int lda, const T* beta, const T* b, int ldb, T* c,       \
                                          int ldc) {                                                                            \
        if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;                                                                 \
        return cuda_cpu::blas::geam(transa, transb, m, n, alpha, a, lda, beta, b, ldb, c, ldc);                                 \
    }

CUDA_CPU_CUBLAS_FOR_TYPE(S, s, float)
CUDA_CPU_CUBLAS_FOR_TYPE(D, d, double)
#undef CUDA_CPU_CUBLAS_FOR_TYPE

// ---------------------------------------------------------------- mixed-precision gemm
namespace cuda_cpu {
namespace blas {

inline bool supported_type(cudaDataType type) {
    return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

// Element i of a matrix of the given type, widened to Wide (exact for every supported type).
template <class Wide>
inline Wide load(const void* data, cudaDataType type, size_t i) {
    switch (type) {
        case CUDA_R_64F: return static_cast<Wide>(static_cast<const double*>(data)[i]);
        case CUDA_R_16F: return static_cast<Wide>(__half2float(static_cast<const __half*>(data)[i]));
        case CUDA_R_16BF: return static_cast<Wide>(__bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]));
        default: return static_cast<Wide>(static_cast<const float*>(data)[i]);
    }
}

template <class Wide>
inline void store(void* data, cudaDataType type, size_t i, Wide value) {
    switch (type) {
        case CUDA_R_64F: static_cast<double*>(data)[i] = static_cast<double>(value); break;
        case CUDA_R_16F: static_cast<__half*>(data)[i] = __double2half(static_cast<double>(value)); break;
        case CUDA_R_16BF: static_cast<__nv_bfloat16*>(data)[i] = __double2bfloat16(static_cast<double>(value)); break;
        default: static_cast<float*>(data)[i] = static_cast<float>(value); break;
    }
}

// Widen the columns of a rows x cols column-major matrix into a dense Wide copy.
template <class Wide>
inline std::vector<Wide> widen(const void* data, cudaDataType type, int rows, int cols, int ld) {
    std::vector<Wide> wide(static_cast<size_t>(rows) * static_cast<size_t>(cols));
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i)
            wide[static_cast<size_t>(i) + static_cast<size_t>(j) * static_cast<size_t>(rows)] =
                load<Wide>(data, type, static_cast<size_t>(i) + static_cast<size_t>(j) * static_cast<size_t>(ld));
    return wide;
}

template <class Wide>
inline cublasStatus_t gemm_ex(cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k, Wide alpha, const void* a,
                              cudaDataType a_type, int lda, const void* b, cudaDataType b_type, int ldb, Wide beta, void* c,
                              cudaDataType c_type, int ldc) {
    if (!supported_type(a_type) || !supported_type(b_type) || !supported_type(c_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    const int a_rows = transa == CUBLAS_OP_N ? m : k, a_cols = transa == CUBLAS_OP_N ? k : m;
    const int b_rows = transb == CUBLAS_OP_N ? k : n, b_cols = transb == CUBLAS_OP_N ? n : k;
    if (lda < (a_rows > 1 ? a_rows : 1) || ldb < (b_rows > 1 ? b_rows : 1)) return CUBLAS_STATUS_INVALID_VALUE;
    std::vector<Wide> wide_a = widen<Wide>(a, a_type, a_rows, a_cols, lda);
    std::vector<Wide> wide_b = widen<Wide>(b, b_type, b_rows, b_cols, ldb);
    std::vector<Wide> wide_c = beta == Wide(0) ? std::vector<Wide>(static_cast<size_t>(m) * static_cast<size_t>(n), Wide(0))
                                               : widen<Wide>(c, c_type, m, n, ldc);
    cublasStatus_t status = gemm(transa, transb, m, n, k, alpha, wide_a.data(), a_rows > 1 ? a_rows : 1, wide_b.data(),
                                 b_rows > 1 ? b_rows : 1, beta, wide_c.data(), m > 1 ? m : 1);
    if (status != CUBLAS_STATUS_SUCCESS) return status;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i)
            store(c, c_type, static_cast<size_t>(i) + static_cast<size_t>(j) * static_cast<size_t>(ldc),
                  wide_c[static_cast<size_t>(i) + static_cast<size_t>(j) * static_cast<size_t>(m)]);
    return CUBLAS_STATUS_SUCCESS;
}

// alpha and beta are half for 16F compute, double for 64F compute, float otherwise.
template <class Wide>
inline Wide scalar(const void* value, cublasComputeType_t compute) {
    if (compute == CUBLAS_COMPUTE_16F || compute == CUBLAS_COMPUTE_16F_PEDANTIC)
        return static_cast<Wide>(__half2float(*static_cast<const __half*>(value)));
    if (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC) return static_cast<Wide>(*static_cast<const double*>(value));
    return static_cast<Wide>(*static_cast<const float*>(value));
}

// The CUDA 10 spelling passed a cudaDataType as the compute type.
inline cublasComputeType_t compute_type_of(cudaDataType type) {
    switch (type) {
        case CUDA_R_16F: return CUBLAS_COMPUTE_16F;
        case CUDA_R_64F: return CUBLAS_COMPUTE_64F;
        case CUDA_R_32I: return CUBLAS_COMPUTE_32I;
        default: return CUBLAS_COMPUTE_32F;
    }
}

// Position of element i of a vector of n with stride inc (a negative stride starts at the end).
inline size_t strided(int n, int inc, int i) { return static_cast<size_t>((inc > 0 ? i : i - n + 1) * static_cast<long long>(inc)); }

}  // namespace blas
}  // namespace cuda_cpu

// ---------------------------------------------------------------- mixed-precision level 1
// Any of float, double, half and bfloat16 vectors, computed in double and rounded once on output.
inline cublasStatus_t cublasDotEx(cublasHandle_t handle, int n, const void* x, cudaDataType x_type, int incx, const void* y,
                                  cudaDataType y_type, int incy, void* result, cudaDataType result_type, cudaDataType) {
    using namespace cuda_cpu::blas;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!supported_type(x_type) || !supported_type(y_type) || !supported_type(result_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += load<double>(x, x_type, strided(n, incx, i)) * load<double>(y, y_type, strided(n, incy, i));
    store(result, result_type, 0, sum);
    return CUBLAS_STATUS_SUCCESS;
}
// Conjugation changes nothing for the real types supported.
inline cublasStatus_t cublasDotcEx(cublasHandle_t handle, int n, const void* x, cudaDataType x_type, int incx, const void* y,
                                   cudaDataType y_type, int incy, void* result, cudaDataType result_type, cudaDataType execution) {
    return cublasDotEx(handle, n, x, x_type, incx, y, y_type, incy, result, result_type, execution);
}
inline cublasStatus_t cublasAxpyEx(cublasHandle_t handle, int n, const void* alpha, cudaDataType alpha_type, const void* x,
                                   cudaDataType x_type, int incx, void* y, cudaDataType y_type, int incy, cudaDataType) {
    using namespace cuda_cpu::blas;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!supported_type(alpha_type) || !supported_type(x_type) || !supported_type(y_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    const double a = load<double>(alpha, alpha_type, 0);
    for (int i = 0; i < n; ++i) {
        const size_t at = strided(n, incy, i);
        store(y, y_type, at, load<double>(y, y_type, at) + a * load<double>(x, x_type, strided(n, incx, i)));
    }
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasScalEx(cublasHandle_t handle, int n, const void* alpha, cudaDataType alpha_type, void* x,
                                   cudaDataType x_type, int incx, cudaDataType) {
    using namespace cuda_cpu::blas;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!supported_type(alpha_type) || !supported_type(x_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (alpha == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (incx <= 0) return CUBLAS_STATUS_SUCCESS;  // BLAS: nothing to do
    const double a = load<double>(alpha, alpha_type, 0);
    for (int i = 0; i < n; ++i) {
        const size_t at = static_cast<size_t>(i) * static_cast<size_t>(incx);
        store(x, x_type, at, a * load<double>(x, x_type, at));
    }
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasNrm2Ex(cublasHandle_t handle, int n, const void* x, cudaDataType x_type, int incx, void* result,
                                   cudaDataType result_type, cudaDataType) {
    using namespace cuda_cpu::blas;
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!supported_type(x_type) || !supported_type(result_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (result == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    std::vector<double> wide(n > 0 && incx > 0 ? n : 0);
    for (size_t i = 0; i < wide.size(); ++i) wide[i] = load<double>(x, x_type, i * static_cast<size_t>(incx));
    double norm = 0;
    nrm2(static_cast<int>(wide.size()), wide.data(), 1, &norm);
    store(result, result_type, 0, norm);
    return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                   const void* alpha, const void* a, cudaDataType a_type, int lda, const void* b,
                                   cudaDataType b_type, int ldb, const void* beta, void* c, cudaDataType c_type, int ldc,
                                   cublasComputeType_t compute, cublasGemmAlgo_t) {
    if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (alpha == nullptr || beta == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    if (compute == CUBLAS_COMPUTE_32I || compute == CUBLAS_COMPUTE_32I_PEDANTIC) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC)
        return cuda_cpu::blas::gemm_ex<double>(transa, transb, m, n, k, cuda_cpu::blas::scalar<double>(alpha, compute), a, a_type, lda,
                                               b, b_type, ldb, cuda_cpu::blas::scalar<double>(beta, compute), c, c_type, ldc);
    return cuda_cpu::blas::gemm_ex<float>(transa, transb, m, n, k, cuda_cpu::blas::scalar<float>(alpha, compute), a, a_type, lda, b,
                                          b_type, ldb, cuda_cpu::blas::scalar<float>(beta, compute), c, c_type, ldc);
}
inline cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                   const void* alpha, const void* a, cudaDataType a_type, int lda, const void* b,
                                   cudaDataType b_type, int ldb, const void* beta, void* c, cudaDataType c_type, int ldc,
                                   cudaDataType compute, cublasGemmAlgo_t algo) {
    return cublasGemmEx(handle, transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
                        cuda_cpu::blas::compute_type_of(compute), algo);
}
inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                                 int n, int k, const void* alpha, const void* a, cudaDataType a_type, int lda,
                                                 long long stride_a, const void* b, cudaDataType b_type, int ldb, long long stride_b,
                                                 const void* beta, void* c, cudaDataType c_type, int ldc, long long stride_c,
                                                 int batch_count, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
    auto element_bytes = [](cudaDataType type) -> long long {
        return type == CUDA_R_64F ? 8 : (type == CUDA_R_16F || type == CUDA_R_16BF) ? 2 : 4;
    };
    for (int i = 0; i < batch_count; ++i) {
        cublasStatus_t status = cublasGemmEx(
            handle, transa, transb, m, n, k, alpha, static_cast<const char*>(a) + i * stride_a * element_bytes(a_type), a_type, lda,
            static_cast<const char*>(b) + i * stride_b * element_bytes(b_type), b_type, ldb, beta,
            static_cast<char*>(c) + i * stride_c * element_bytes(c_type), c_type, ldc, compute, algo);
        if (status != CUBLAS_STATUS_SUCCESS) return status;
    }
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSgemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                    const float* alpha, const void* a, cudaDataType a_type, int lda, const void* b,
                                    cudaDataType b_type, int ldb, const float* beta, void* c, cudaDataType c_type, int ldc) {
    return cublasGemmEx(handle, transa, transb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
inline cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
                                  const __half* alpha, const __half* a, int lda, const __half* b, int ldb, const __half* beta,
                                  __half* c, int ldc) {
    return cublasGemmEx(handle, transa, transb, m, n, k, alpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, beta, c, CUDA_R_16F, ldc,
                        CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
}
