// CPU CUDA runtime: the dense cuSOLVER subset. Cholesky (potrf, potrs) and LU with partial
// pivoting (getrf, getrs) in float and double, column-major as LAPACK; devInfo reports as
// cuSOLVER's does (0, or the order of the first minor that is not positive definite / the
// first zero pivot). Work buffers are not needed: the bufferSize queries answer 1.
#pragma once
#include <cmath>
#include <utility>

#include "cublas_v2.h"

typedef enum {
    CUSOLVER_STATUS_SUCCESS = 0,
    CUSOLVER_STATUS_NOT_INITIALIZED = 1,
    CUSOLVER_STATUS_ALLOC_FAILED = 2,
    CUSOLVER_STATUS_INVALID_VALUE = 3,
    CUSOLVER_STATUS_ARCH_MISMATCH = 4,
    CUSOLVER_STATUS_MAPPING_ERROR = 5,
    CUSOLVER_STATUS_EXECUTION_FAILED = 6,
    CUSOLVER_STATUS_INTERNAL_ERROR = 7,
    CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED = 8,
    CUSOLVER_STATUS_NOT_SUPPORTED = 9,
} cusolverStatus_t;

struct cusolverDnContext {
    cudaStream_t stream;
};
typedef struct cusolverDnContext* cusolverDnHandle_t;

inline cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
    if (handle == nullptr) return CUSOLVER_STATUS_INVALID_VALUE;
    *handle = new cusolverDnContext{nullptr};
    return CUSOLVER_STATUS_SUCCESS;
}
inline cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    delete handle;
    return CUSOLVER_STATUS_SUCCESS;
}
inline cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    handle->stream = stream;
    return CUSOLVER_STATUS_SUCCESS;
}
inline cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle, cudaStream_t* stream) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    *stream = handle->stream;
    return CUSOLVER_STATUS_SUCCESS;
}

namespace cuda_cpu {
namespace solver {

// Cholesky of the `uplo` triangle of A (n x n, leading dimension lda), in place: A = L L^T with L in
// the lower triangle, or A = U^T U with U in the upper one. The other triangle is left as it was.
template <class T>
inline cusolverStatus_t potrf(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, T* A, int lda, int* info) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || lda < (n > 1 ? n : 1) || (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER))
        return CUSOLVER_STATUS_INVALID_VALUE;
    const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
    // element (i, j) of the factor, i >= j (L's; U's is its transpose)
    auto at = [&](int i, int j) -> T& { return lower ? A[i + static_cast<long>(j) * lda] : A[j + static_cast<long>(i) * lda]; };
    if (info != nullptr) *info = 0;
    for (int j = 0; j < n; ++j) {
        T diagonal = at(j, j);
        for (int k = 0; k < j; ++k) diagonal -= at(j, k) * at(j, k);
        if (!(diagonal > T(0))) {
            if (info != nullptr) *info = j + 1;
            return CUSOLVER_STATUS_SUCCESS;
        }
        at(j, j) = std::sqrt(diagonal);
        for (int i = j + 1; i < n; ++i) {
            T sum = at(i, j);
            for (int k = 0; k < j; ++k) sum -= at(i, k) * at(j, k);
            at(i, j) = sum / at(j, j);
        }
    }
    return CUSOLVER_STATUS_SUCCESS;
}

// Solves A X = B (B n x nrhs, overwritten by X) with potrf's factor of A.
template <class T>
inline cusolverStatus_t potrs(cusolverDnHandle_t handle, cublasFillMode_t uplo, int n, int nrhs, const T* A, int lda,
                              T* B, int ldb, int* info) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || nrhs < 0 || lda < (n > 1 ? n : 1) || ldb < (n > 1 ? n : 1)) return CUSOLVER_STATUS_INVALID_VALUE;
    const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
    auto l = [&](int i, int j) { return lower ? A[i + static_cast<long>(j) * lda] : A[j + static_cast<long>(i) * lda]; };
    for (int c = 0; c < nrhs; ++c) {
        T* b = B + static_cast<long>(c) * ldb;
        for (int i = 0; i < n; ++i) {  // L y = b
            for (int k = 0; k < i; ++k) b[i] -= l(i, k) * b[k];
            b[i] /= l(i, i);
        }
        for (int i = n - 1; i >= 0; --i) {  // L^T x = y
            for (int k = i + 1; k < n; ++k) b[i] -= l(k, i) * b[k];
            b[i] /= l(i, i);
        }
    }
    if (info != nullptr) *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
}

// LU of A (m x n) in place with partial pivoting (rows swapped as ipiv says, 1-based), or without
// where ipiv is null, as cuSOLVER allows.
template <class T>
inline cusolverStatus_t getrf(cusolverDnHandle_t handle, int m, int n, T* A, int lda, int* ipiv, int* info) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || lda < (m > 1 ? m : 1)) return CUSOLVER_STATUS_INVALID_VALUE;
    auto a = [&](int i, int j) -> T& { return A[i + static_cast<long>(j) * lda]; };
    if (info != nullptr) *info = 0;
    const int steps = m < n ? m : n;
    for (int j = 0; j < steps; ++j) {
        int pivot = j;
        if (ipiv != nullptr) {
            for (int i = j + 1; i < m; ++i)
                if (std::fabs(a(i, j)) > std::fabs(a(pivot, j))) pivot = i;
            ipiv[j] = pivot + 1;
            if (pivot != j)
                for (int k = 0; k < n; ++k) std::swap(a(j, k), a(pivot, k));
        }
        if (a(j, j) == T(0)) {
            if (info != nullptr && *info == 0) *info = j + 1;
            continue;
        }
        for (int i = j + 1; i < m; ++i) {
            a(i, j) /= a(j, j);
            for (int k = j + 1; k < n; ++k) a(i, k) -= a(i, j) * a(j, k);
        }
    }
    return CUSOLVER_STATUS_SUCCESS;
}

// Solves op(A) X = B with getrf's factors of A (n x n).
template <class T>
inline cusolverStatus_t getrs(cusolverDnHandle_t handle, cublasOperation_t trans, int n, int nrhs, const T* A, int lda,
                              const int* ipiv, T* B, int ldb, int* info) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || nrhs < 0 || lda < (n > 1 ? n : 1) || ldb < (n > 1 ? n : 1)) return CUSOLVER_STATUS_INVALID_VALUE;
    auto a = [&](int i, int j) { return A[i + static_cast<long>(j) * lda]; };
    for (int c = 0; c < nrhs; ++c) {
        T* b = B + static_cast<long>(c) * ldb;
        if (trans == CUBLAS_OP_N) {
            if (ipiv != nullptr)
                for (int i = 0; i < n; ++i) std::swap(b[i], b[ipiv[i] - 1]);
            for (int i = 0; i < n; ++i)  // L y = P b (unit diagonal)
                for (int k = 0; k < i; ++k) b[i] -= a(i, k) * b[k];
            for (int i = n - 1; i >= 0; --i) {  // U x = y
                for (int k = i + 1; k < n; ++k) b[i] -= a(i, k) * b[k];
                b[i] /= a(i, i);
            }
        } else {  // A^T = U^T L^T P
            for (int i = 0; i < n; ++i) {
                for (int k = 0; k < i; ++k) b[i] -= a(k, i) * b[k];
                b[i] /= a(i, i);
            }
            for (int i = n - 1; i >= 0; --i)
                for (int k = i + 1; k < n; ++k) b[i] -= a(k, i) * b[k];
            if (ipiv != nullptr)
                for (int i = n - 1; i >= 0; --i) std::swap(b[i], b[ipiv[i] - 1]);
        }
    }
    if (info != nullptr) *info = 0;
    return CUSOLVER_STATUS_SUCCESS;
}

inline cusolverStatus_t no_work(cusolverDnHandle_t handle, int* lwork) {
    if (handle == nullptr) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (lwork != nullptr) *lwork = 1;
    return CUSOLVER_STATUS_SUCCESS;
}

}  // namespace solver
}  // namespace cuda_cpu

#define CUDA_CPU_SOLVER_TYPED(S, T)                                                                                   \
    inline cusolverStatus_t cusolverDn##S##potrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t, int, T*, int,      \
                                                            int* lwork) {                                            \
        return cuda_cpu::solver::no_work(h, lwork);                                                                  \
    }                                                                                                                \
    inline cusolverStatus_t cusolverDn##S##potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, T* A, int lda,   \
                                                 T*, int, int* info) {                                               \
        return cuda_cpu::solver::potrf(h, uplo, n, A, lda, info);                                                    \
    }                                                                                                                \
    inline cusolverStatus_t cusolverDn##S##potrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs,        \
                                                 const T* A, int lda, T* B, int ldb, int* info) {                    \
        return cuda_cpu::solver::potrs(h, uplo, n, nrhs, A, lda, B, ldb, info);                                      \
    }                                                                                                                \
    inline cusolverStatus_t cusolverDn##S##getrf_bufferSize(cusolverDnHandle_t h, int, int, T*, int, int* lwork) {   \
        return cuda_cpu::solver::no_work(h, lwork);                                                                  \
    }                                                                                                                \
    inline cusolverStatus_t cusolverDn##S##getrf(cusolverDnHandle_t h, int m, int n, T* A, int lda, T*, int* ipiv,    \
                                                 int* info) {                                                        \
        return cuda_cpu::solver::getrf(h, m, n, A, lda, ipiv, info);                                                 \
    }                                                                                                                \
    inline cusolverStatus_t cusolverDn##S##getrs(cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs,      \
                                                 const T* A, int lda, const int* ipiv, T* B, int ldb, int* info) {   \
        return cuda_cpu::solver::getrs(h, trans, n, nrhs, A, lda, ipiv, B, ldb, info);                               \
    }
CUDA_CPU_SOLVER_TYPED(S, float)
CUDA_CPU_SOLVER_TYPED(D, double)
#undef CUDA_CPU_SOLVER_TYPED
