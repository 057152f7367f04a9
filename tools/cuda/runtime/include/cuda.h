// CPU CUDA runtime: a small subset of the CUDA driver API (device queries, contexts,
// memory), over the runtime API's CPU implementation.
#pragma once
#define __cuda_cuda_h__
#include "cuda_runtime_api.h"

#ifndef CUDA_VERSION
#define CUDA_VERSION 12000
#endif

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999,
} CUresult;

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
struct CUctx_st {
    int device;
};
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
// Driver attribute numbers equal the runtime's cudaDeviceAttr numbers.
typedef enum cudaDeviceAttr CUdevice_attribute;
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK cudaDevAttrMaxThreadsPerBlock
#define CU_DEVICE_ATTRIBUTE_WARP_SIZE cudaDevAttrWarpSize
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT cudaDevAttrMultiProcessorCount
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK cudaDevAttrMaxSharedMemoryPerBlock
#define CU_DEVICE_ATTRIBUTE_CLOCK_RATE cudaDevAttrClockRate
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR cudaDevAttrComputeCapabilityMajor
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR cudaDevAttrComputeCapabilityMinor

namespace cuda_cpu {
inline CUresult driver_result(cudaError_t error) { return static_cast<CUresult>(static_cast<int>(error)); }
}  // namespace cuda_cpu

inline CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
inline CUresult cuDriverGetVersion(int* version) { return cuda_cpu::driver_result(cudaDriverGetVersion(version)); }
inline CUresult cuDeviceGetCount(int* count) { return cuda_cpu::driver_result(cudaGetDeviceCount(count)); }
inline CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *device = 0;
    return CUDA_SUCCESS;
}
inline CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
    cudaDeviceProp prop;
    if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return CUDA_ERROR_INVALID_DEVICE;
    int i = 0;
    for (; i + 1 < length && prop.name[i] != '\0'; ++i) name[i] = prop.name[i];
    name[i] = '\0';
    return CUDA_SUCCESS;
}
inline CUresult cuDeviceTotalMem(size_t* bytes, CUdevice device) {
    cudaDeviceProp prop;
    if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = prop.totalGlobalMem;
    return CUDA_SUCCESS;
}
inline CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device) {
    return cuda_cpu::driver_result(cudaDeviceGetAttribute(value, attribute, device));
}
inline CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device) {
    if (major == nullptr || minor == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
    *major = 8;
    *minor = 0;
    return CUDA_SUCCESS;
}
inline CUresult cuCtxCreate(CUcontext* context, unsigned int, CUdevice device) {
    if (context == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (device != 0) return CUDA_ERROR_INVALID_DEVICE;
    *context = new CUctx_st{device};
    return CUDA_SUCCESS;
}
inline CUresult cuCtxDestroy(CUcontext context) {
    delete context;
    return CUDA_SUCCESS;
}
inline CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }
inline CUresult cuMemAlloc(CUdeviceptr* ptr, size_t bytes) {
    if (ptr == nullptr) return CUDA_ERROR_INVALID_VALUE;
    void* memory = nullptr;
    CUresult result = cuda_cpu::driver_result(cudaMalloc(&memory, bytes));
    *ptr = reinterpret_cast<CUdeviceptr>(memory);
    return result;
}
inline CUresult cuMemFree(CUdeviceptr ptr) { return cuda_cpu::driver_result(cudaFree(reinterpret_cast<void*>(ptr))); }
inline CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {
    return cuda_cpu::driver_result(cudaMemcpy(reinterpret_cast<void*>(dst), src, bytes, cudaMemcpyHostToDevice));
}
inline CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes) {
    return cuda_cpu::driver_result(cudaMemcpy(dst, reinterpret_cast<const void*>(src), bytes, cudaMemcpyDeviceToHost));
}
inline CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    return cuda_cpu::driver_result(cudaMemcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes, cudaMemcpyDeviceToDevice));
}
inline CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t count) {
    return cuda_cpu::driver_result(cudaMemset(reinterpret_cast<void*>(dst), value, count));
}
inline CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t count) {
    unsigned int* words = reinterpret_cast<unsigned int*>(dst);
    for (size_t i = 0; i < count; ++i) words[i] = value;
    return CUDA_SUCCESS;
}
inline CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    return cuda_cpu::driver_result(cudaMemGetInfo(free_bytes, total_bytes));
}
inline CUresult cuGetErrorName(CUresult error, const char** name) {
    if (name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *name = cudaGetErrorName(static_cast<cudaError_t>(static_cast<int>(error)));
    return CUDA_SUCCESS;
}
inline CUresult cuGetErrorString(CUresult error, const char** text) {
    if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *text = cudaGetErrorString(static_cast<cudaError_t>(static_cast<int>(error)));
    return CUDA_SUCCESS;
}
