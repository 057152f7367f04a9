// CPU CUDA runtime: cuBLASLt's handles, descriptors and layouts, so that code which includes
// cublasLt.h (often only through a shared header) compiles and runs. Descriptors keep what is set
// on them; cublasLtMatmul itself is not provided on the CPU: it says so on stderr and returns
// CUBLAS_STATUS_NOT_SUPPORTED, which the program's own status check reports.
#pragma once
#define CUBLAS_LT_H_
#include "cublas_v2.h"

#include <cstdio>
#include <cstring>
#include <map>

namespace cuda_cpu {
struct LtAttributes {
    std::map<int, std::vector<unsigned char>> values;
    cublasStatus_t set(int attribute, const void* buf, size_t bytes) {
        if (buf == nullptr && bytes) return CUBLAS_STATUS_INVALID_VALUE;
        const auto* p = static_cast<const unsigned char*>(buf);
        values[attribute].assign(p, p + bytes);
        return CUBLAS_STATUS_SUCCESS;
    }
    cublasStatus_t get(int attribute, void* buf, size_t bytes, size_t* written) const {
        auto it = values.find(attribute);
        size_t have = it == values.end() ? 0 : it->second.size();
        if (written) *written = have;
        if (bytes < have || (buf == nullptr && bytes)) return CUBLAS_STATUS_INVALID_VALUE;
        if (have) std::memcpy(buf, it->second.data(), have);
        return CUBLAS_STATUS_SUCCESS;
    }
};
}  // namespace cuda_cpu

struct cublasLtContext {};
struct cublasLtMatmulDescOpaque_t : cuda_cpu::LtAttributes {
    cublasComputeType_t compute;
    cudaDataType_t scale;
};
struct cublasLtMatrixLayoutOpaque_t : cuda_cpu::LtAttributes {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
};
struct cublasLtMatmulPreferenceOpaque_t : cuda_cpu::LtAttributes {};

typedef cublasLtContext* cublasLtHandle_t;
typedef cublasLtMatmulDescOpaque_t* cublasLtMatmulDesc_t;
typedef cublasLtMatrixLayoutOpaque_t* cublasLtMatrixLayout_t;
typedef cublasLtMatmulPreferenceOpaque_t* cublasLtMatmulPreference_t;

typedef enum {
    CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,
    CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
    CUBLASLT_MATMUL_DESC_POINTER_MODE = 2,
    CUBLASLT_MATMUL_DESC_TRANSA = 3,
    CUBLASLT_MATMUL_DESC_TRANSB = 4,
    CUBLASLT_MATMUL_DESC_TRANSC = 5,
    CUBLASLT_MATMUL_DESC_FILL_MODE = 6,
    CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
    CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
} cublasLtMatmulDescAttributes_t;
typedef enum {
    CUBLASLT_EPILOGUE_DEFAULT = 1,
    CUBLASLT_EPILOGUE_RELU = 2,
    CUBLASLT_EPILOGUE_BIAS = 4,
    CUBLASLT_EPILOGUE_RELU_BIAS = 6,
    CUBLASLT_EPILOGUE_GELU = 32,
    CUBLASLT_EPILOGUE_GELU_BIAS = 36,
} cublasLtEpilogue_t;
typedef enum {
    CUBLASLT_MATRIX_LAYOUT_TYPE = 0,
    CUBLASLT_MATRIX_LAYOUT_ORDER = 1,
    CUBLASLT_MATRIX_LAYOUT_ROWS = 2,
    CUBLASLT_MATRIX_LAYOUT_COLS = 3,
    CUBLASLT_MATRIX_LAYOUT_LD = 4,
    CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
    CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
} cublasLtMatrixLayoutAttribute_t;
typedef enum { CUBLASLT_MATMUL_PREF_SEARCH_MODE = 0, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 } cublasLtMatmulPreferenceAttributes_t;
typedef enum { CUBLASLT_ORDER_COL = 0, CUBLASLT_ORDER_ROW = 1 } cublasLtOrder_t;

typedef struct {
    uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
} cublasLtMatmulHeuristicResult_t;

namespace cuda_cpu {
template <class T, class... Fields>
cublasStatus_t lt_create(T** made, Fields... fields) {
    if (!made) return CUBLAS_STATUS_INVALID_VALUE;
    *made = new T{{}, fields...};  // the attributes, then the object's own fields in order
    return CUBLAS_STATUS_SUCCESS;
}
template <class T>
cublasStatus_t lt_destroy(T* made) {
    delete made;
    return CUBLAS_STATUS_SUCCESS;
}
}  // namespace cuda_cpu

inline cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    *handle = new cublasLtContext();
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) { return cuda_cpu::lt_destroy(handle); }
inline cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
    return cuda_cpu::lt_create(desc, compute, scale);
}
inline cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) { return cuda_cpu::lt_destroy(desc); }
inline cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                                     const void* buf, size_t bytes) {
    return desc ? desc->set(attribute, buf, bytes) : CUBLAS_STATUS_NOT_INITIALIZED;
}
inline cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                                                     void* buf, size_t bytes, size_t* written) {
    return desc ? desc->get(attribute, buf, bytes, written) : CUBLAS_STATUS_NOT_INITIALIZED;
}
inline cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType_t type, uint64_t rows,
                                                 uint64_t cols, int64_t ld) {
    return cuda_cpu::lt_create(layout, type, rows, cols, ld);
}
inline cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) { return cuda_cpu::lt_destroy(layout); }
inline cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute,
                                                       const void* buf, size_t bytes) {
    return layout ? layout->set(attribute, buf, bytes) : CUBLAS_STATUS_NOT_INITIALIZED;
}
inline cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* preference) {
    return cuda_cpu::lt_create(preference);
}
inline cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
    return cuda_cpu::lt_destroy(preference);
}
inline cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t preference,
                                                           cublasLtMatmulPreferenceAttributes_t attribute, const void* buf,
                                                           size_t bytes) {
    return preference ? preference->set(attribute, buf, bytes) : CUBLAS_STATUS_NOT_INITIALIZED;
}

// The matrix product itself: not on the CPU (the port's report lists the call as unmapped).
inline cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                     cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*,
                                                     int* found) {
    if (found) *found = 0;
    std::fprintf(stderr, "cudacpu: cublasLtMatmulAlgoGetHeuristic: cuBLASLt matrix products are not provided on the CPU\n");
    return CUBLAS_STATUS_NOT_SUPPORTED;
}
inline cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t,
                                     const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t,
                                     void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) {
    std::fprintf(stderr, "cudacpu: cublasLtMatmul: cuBLASLt matrix products are not provided on the CPU\n");
    return CUBLAS_STATUS_NOT_SUPPORTED;
}
