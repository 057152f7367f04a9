// CPU CUDA runtime: the CUDA runtime API with CPU semantics.
//
// There is one memory: "device" allocations are aligned host allocations, every copy is a
// memmove, and all work (copies, memsets, kernels called by the lowered code) is finished
// when the call returns.  Streams therefore only order nothing, events record the real
// steady-clock time at which they are recorded, and synchronisation calls return at once.
// There is exactly one device (0), described by cudaGetDeviceProperties with CPU values.
//
// Every call returns cudaSuccess or CUDA's error code for the misuse it detects (a bad
// copy direction, freeing an unknown pointer, a symbol copy past the symbol's end, ...);
// failures are also remembered for cudaGetLastError / cudaPeekAtLastError, per host thread.
// C++ only (the templates and default arguments are CUDA's own C++ API).
#pragma once
#define __CUDA_RUNTIME_API_H__
#include "cuda_cpu/defines.h"
#include "cuda_cpu/driver_types.h"
#include "vector_types.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(_OPENMP) || defined(CUDA_CPU_OPENMP)
#include <omp.h>
#endif

namespace cuda_cpu {

inline cudaError_t& last_error() {
    static thread_local cudaError_t error = cudaSuccess;
    return error;
}

// Record a failure for cudaGetLastError and return the code unchanged.
inline cudaError_t report(cudaError_t error) {
    if (error != cudaSuccess) last_error() = error;
    return error;
}

// A failed device-side assert leaves CUDA's context unusable: every later synchronisation
// (and cudaGetLastError) returns cudaErrorAssert, for all host threads.
inline std::atomic<int>& sticky_error() {
    static std::atomic<int> error{cudaSuccess};
    return error;
}
inline cudaError_t synchronized() {
    const auto error = static_cast<cudaError_t>(sticky_error().load(std::memory_order_relaxed));
    return error == cudaSuccess ? cudaSuccess : report(error);
}

// What `assert` in a lowered kernel calls when it fails: CUDA's message, then the sticky error.
[[gnu::cold, gnu::noinline]] inline void device_assert_fail(const char* expression, const char* file, unsigned line,
                                                            const char* function) {
    std::fprintf(stderr, "%s:%u: %s: device-side Assertion `%s` failed.\n", file, line, function, expression);
    sticky_error().store(cudaErrorAssert, std::memory_order_relaxed);
    report(cudaErrorAssert);
}

constexpr size_t allocation_alignment = 256;  // what cudaMalloc guarantees
constexpr size_t max_shared_bytes_optin = 227 * 1024;  // a kernel's most dynamic shared memory (as sm_90)

struct Allocation {
    size_t size;
    cudaMemoryType type;
    bool owned;  // false for cudaHostRegister'ed user memory
};

// A minimal lock (<mutex> costs more compile time than the whole runtime).
class SpinLock {
  public:
    void lock() {
        while (flag_.test_and_set(std::memory_order_acquire)) {
        }
    }
    void unlock() { flag_.clear(std::memory_order_release); }

  private:
    std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

class LockGuard {
  public:
    explicit LockGuard(SpinLock& lock) : lock_(lock) { lock_.lock(); }
    ~LockGuard() { lock_.unlock(); }
    LockGuard(const LockGuard&) = delete;
    LockGuard& operator=(const LockGuard&) = delete;

  private:
    SpinLock& lock_;
};

// Every live allocation by start address, so that frees and pointer queries can be checked.
class AllocationTable {
  public:
    void insert(void* start, Allocation allocation) {
        LockGuard lock(lock_);
        table_[start] = allocation;
    }
    bool erase(void* start, Allocation* removed) {
        LockGuard lock(lock_);
        auto found = table_.find(start);
        if (found == table_.end()) return false;
        *removed = found->second;
        table_.erase(found);
        return true;
    }
    // The allocation containing ptr (start address and record), if any.
    bool find(const void* ptr, void** start, Allocation* allocation) {
        LockGuard lock(lock_);
        auto after = table_.upper_bound(const_cast<void*>(ptr));
        if (after == table_.begin()) return false;
        --after;
        const char* begin = static_cast<const char*>(after->first);
        const char* p = static_cast<const char*>(ptr);
        if (p >= begin + (after->second.size > 0 ? after->second.size : 1)) return false;
        *start = after->first;
        *allocation = after->second;
        return true;
    }
    size_t bytes_in(cudaMemoryType type) {
        LockGuard lock(lock_);
        size_t total = 0;
        for (const auto& entry : table_)
            if (entry.second.type == type) total += entry.second.size;
        return total;
    }

  private:
    SpinLock lock_;
    std::map<void*, Allocation> table_;
};

// Never destroyed: global objects whose destructors call cudaFree at exit may outlive any
// static that was constructed after them.
inline AllocationTable& allocations() {
    static AllocationTable* table = new AllocationTable;
    return *table;
}

inline cudaError_t allocate(void** ptr, size_t size, cudaMemoryType type) {
    if (ptr == nullptr) return report(cudaErrorInvalidValue);
    *ptr = nullptr;
    if (size == 0) return cudaSuccess;
    size_t rounded = (size + allocation_alignment - 1) / allocation_alignment * allocation_alignment;
    void* memory = std::aligned_alloc(allocation_alignment, rounded);
    if (memory == nullptr) return report(cudaErrorMemoryAllocation);
    allocations().insert(memory, Allocation{size, type, true});
    *ptr = memory;
    return cudaSuccess;
}

inline cudaError_t release(void* ptr) {
    if (ptr == nullptr) return cudaSuccess;
    Allocation removed;
    if (!allocations().erase(ptr, &removed)) return report(cudaErrorInvalidValue);
    if (removed.owned) std::free(ptr);
    return cudaSuccess;
}

inline bool valid_kind(cudaMemcpyKind kind) {
    return static_cast<int>(kind) >= cudaMemcpyHostToHost && static_cast<int>(kind) <= cudaMemcpyDefault;
}

inline cudaError_t copy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    if (!valid_kind(kind)) return report(cudaErrorInvalidMemcpyDirection);
    if (count == 0) return cudaSuccess;
    if (dst == nullptr || src == nullptr) return report(cudaErrorInvalidValue);
    std::memmove(dst, src, count);
    return cudaSuccess;
}

inline cudaError_t copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                           cudaMemcpyKind kind) {
    if (!valid_kind(kind)) return report(cudaErrorInvalidMemcpyDirection);
    if (width > dpitch || width > spitch) return report(cudaErrorInvalidPitchValue);
    if (width == 0 || height == 0) return cudaSuccess;
    if (dst == nullptr || src == nullptr) return report(cudaErrorInvalidValue);
    for (size_t row = 0; row < height; ++row)
        std::memmove(static_cast<char*>(dst) + row * dpitch, static_cast<const char*>(src) + row * spitch, width);
    return cudaSuccess;
}

inline cudaError_t fill(void* dst, int value, size_t count) {
    if (count == 0) return cudaSuccess;
    if (dst == nullptr) return report(cudaErrorInvalidValue);
    std::memset(dst, value, count);
    return cudaSuccess;
}

inline bool valid_device(int device) { return device == 0; }

inline int processor_count() {
#if defined(_OPENMP) || defined(CUDA_CPU_OPENMP)
    return omp_get_num_procs();
#else
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    return count > 0 ? static_cast<int>(count) : 1;
#endif
}

inline size_t physical_memory_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page_size) : (size_t(8) << 30);
}

inline size_t available_memory_bytes() {
    long pages = sysconf(_SC_AVPHYS_PAGES);
    long page_size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page_size) : physical_memory_bytes() / 2;
}

inline void describe_device(cudaDeviceProp* prop) {
    std::memset(prop, 0, sizeof(*prop));
    std::strncpy(prop->name, "CPU (OpenMP)", sizeof(prop->name) - 1);
    prop->totalGlobalMem = physical_memory_bytes();
    prop->sharedMemPerBlock = 48 * 1024;
    prop->sharedMemPerBlockOptin = max_shared_bytes_optin;
    prop->sharedMemPerMultiprocessor = 228 * 1024;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->warpSize = 32;
    prop->memPitch = 2147483647;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->clockRate = 2000000;  // kHz
    prop->memoryClockRate = 3200000;  // kHz
    prop->memoryBusWidth = 64;
    prop->totalConstMem = 64 * 1024;
    prop->major = 8;
    prop->minor = 0;
    prop->textureAlignment = 512;
    prop->texturePitchAlignment = 32;
    prop->surfaceAlignment = 512;
    prop->deviceOverlap = 1;
    prop->multiProcessorCount = processor_count();
    prop->integrated = 1;
    prop->canMapHostMemory = 1;
    prop->computeMode = cudaComputeModeDefault;
    prop->concurrentKernels = 1;
    prop->cooperativeLaunch = 1;  // grid.sync() runs (cudacpu::GridBarrier)
    prop->asyncEngineCount = 1;
    prop->unifiedAddressing = 1;
    prop->l2CacheSize = 4 * 1024 * 1024;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->maxBlocksPerMultiProcessor = 32;
    prop->globalL1CacheSupported = 1;
    prop->localL1CacheSupported = 1;
    prop->managedMemory = 1;
    prop->hostNativeAtomicSupported = 1;
    prop->singleToDoublePrecisionPerfRatio = 2;
    prop->pageableMemoryAccess = 1;
    prop->concurrentManagedAccess = 1;
    prop->canUseHostPointerForRegisteredMem = 1;
    prop->pageableMemoryAccessUsesHostPageTables = 1;
    prop->directManagedMemAccessFromHost = 1;
    prop->hostRegisterSupported = 1;
}

inline int device_attribute(cudaDeviceAttr attr) {
    cudaDeviceProp prop;
    describe_device(&prop);
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock: return prop.maxThreadsPerBlock;
        case cudaDevAttrMaxBlockDimX: return prop.maxThreadsDim[0];
        case cudaDevAttrMaxBlockDimY: return prop.maxThreadsDim[1];
        case cudaDevAttrMaxBlockDimZ: return prop.maxThreadsDim[2];
        case cudaDevAttrMaxGridDimX: return prop.maxGridSize[0];
        case cudaDevAttrMaxGridDimY: return prop.maxGridSize[1];
        case cudaDevAttrMaxGridDimZ: return prop.maxGridSize[2];
        case cudaDevAttrMaxSharedMemoryPerBlock: return static_cast<int>(prop.sharedMemPerBlock);
        case cudaDevAttrTotalConstantMemory: return static_cast<int>(prop.totalConstMem);
        case cudaDevAttrWarpSize: return prop.warpSize;
        case cudaDevAttrMaxPitch: return static_cast<int>(prop.memPitch);
        case cudaDevAttrMaxRegistersPerBlock: return prop.regsPerBlock;
        case cudaDevAttrClockRate: return prop.clockRate;
        case cudaDevAttrTextureAlignment: return static_cast<int>(prop.textureAlignment);
        case cudaDevAttrGpuOverlap: return prop.deviceOverlap;
        case cudaDevAttrMultiProcessorCount: return prop.multiProcessorCount;
        case cudaDevAttrIntegrated: return prop.integrated;
        case cudaDevAttrCooperativeLaunch: return prop.cooperativeLaunch;
        case cudaDevAttrCanMapHostMemory: return prop.canMapHostMemory;
        case cudaDevAttrComputeMode: return prop.computeMode;
        case cudaDevAttrConcurrentKernels: return prop.concurrentKernels;
        case cudaDevAttrMemoryClockRate: return prop.memoryClockRate;
        case cudaDevAttrGlobalMemoryBusWidth: return prop.memoryBusWidth;
        case cudaDevAttrL2CacheSize: return prop.l2CacheSize;
        case cudaDevAttrMaxThreadsPerMultiProcessor: return prop.maxThreadsPerMultiProcessor;
        case cudaDevAttrAsyncEngineCount: return prop.asyncEngineCount;
        case cudaDevAttrUnifiedAddressing: return prop.unifiedAddressing;
        case cudaDevAttrComputeCapabilityMajor: return prop.major;
        case cudaDevAttrComputeCapabilityMinor: return prop.minor;
        case cudaDevAttrGlobalL1CacheSupported: return prop.globalL1CacheSupported;
        case cudaDevAttrLocalL1CacheSupported: return prop.localL1CacheSupported;
        case cudaDevAttrMaxSharedMemoryPerMultiprocessor: return static_cast<int>(prop.sharedMemPerMultiprocessor);
        case cudaDevAttrMaxRegistersPerMultiprocessor: return prop.regsPerMultiprocessor;
        case cudaDevAttrManagedMemory: return prop.managedMemory;
        case cudaDevAttrHostNativeAtomicSupported: return prop.hostNativeAtomicSupported;
        case cudaDevAttrSingleToDoublePrecisionPerfRatio: return prop.singleToDoublePrecisionPerfRatio;
        case cudaDevAttrPageableMemoryAccess: return prop.pageableMemoryAccess;
        case cudaDevAttrConcurrentManagedAccess: return prop.concurrentManagedAccess;
        case cudaDevAttrCanUseHostPointerForRegisteredMem: return prop.canUseHostPointerForRegisteredMem;
        case cudaDevAttrMaxSharedMemoryPerBlockOptin: return static_cast<int>(prop.sharedMemPerBlockOptin);
        case cudaDevAttrHostRegisterSupported: return prop.hostRegisterSupported;
        case cudaDevAttrPageableMemoryAccessUsesHostPageTables: return prop.pageableMemoryAccessUsesHostPageTables;
        case cudaDevAttrDirectManagedMemAccessFromHost: return prop.directManagedMemAccessFromHost;
        case cudaDevAttrMaxBlocksPerMultiprocessor: return prop.maxBlocksPerMultiProcessor;
        case cudaDevAttrMemoryPoolsSupported: return 1;
        default: return 0;
    }
}

// The default stream (0) and the legacy/per-thread pseudo-streams are not allocated
// objects: they are never deleted and have no flags of their own.
inline bool is_special_stream(cudaStream_t stream) {
    return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread;
}

}  // namespace cuda_cpu

// ---------------------------------------------------------------- errors
inline const char* cudaGetErrorName(cudaError_t error) {
    switch (error) {
#define CUDA_CPU_ERROR_NAME(code) \
    case code: return #code;
        CUDA_CPU_ERROR_NAME(cudaSuccess)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidValue)
        CUDA_CPU_ERROR_NAME(cudaErrorMemoryAllocation)
        CUDA_CPU_ERROR_NAME(cudaErrorInitializationError)
        CUDA_CPU_ERROR_NAME(cudaErrorCudartUnloading)
        CUDA_CPU_ERROR_NAME(cudaErrorProfilerDisabled)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidConfiguration)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidPitchValue)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidSymbol)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidHostPointer)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidDevicePointer)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidTexture)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidMemcpyDirection)
        CUDA_CPU_ERROR_NAME(cudaErrorNotYetImplemented)
        CUDA_CPU_ERROR_NAME(cudaErrorInsufficientDriver)
        CUDA_CPU_ERROR_NAME(cudaErrorMissingConfiguration)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidDeviceFunction)
        CUDA_CPU_ERROR_NAME(cudaErrorNoDevice)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidDevice)
        CUDA_CPU_ERROR_NAME(cudaErrorStartupFailure)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidKernelImage)
        CUDA_CPU_ERROR_NAME(cudaErrorNoKernelImageForDevice)
        CUDA_CPU_ERROR_NAME(cudaErrorUnsupportedLimit)
        CUDA_CPU_ERROR_NAME(cudaErrorPeerAccessUnsupported)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidSource)
        CUDA_CPU_ERROR_NAME(cudaErrorFileNotFound)
        CUDA_CPU_ERROR_NAME(cudaErrorOperatingSystem)
        CUDA_CPU_ERROR_NAME(cudaErrorInvalidResourceHandle)
        CUDA_CPU_ERROR_NAME(cudaErrorIllegalState)
        CUDA_CPU_ERROR_NAME(cudaErrorSymbolNotFound)
        CUDA_CPU_ERROR_NAME(cudaErrorNotReady)
        CUDA_CPU_ERROR_NAME(cudaErrorIllegalAddress)
        CUDA_CPU_ERROR_NAME(cudaErrorLaunchOutOfResources)
        CUDA_CPU_ERROR_NAME(cudaErrorLaunchTimeout)
        CUDA_CPU_ERROR_NAME(cudaErrorPeerAccessAlreadyEnabled)
        CUDA_CPU_ERROR_NAME(cudaErrorPeerAccessNotEnabled)
        CUDA_CPU_ERROR_NAME(cudaErrorSetOnActiveProcess)
        CUDA_CPU_ERROR_NAME(cudaErrorAssert)
        CUDA_CPU_ERROR_NAME(cudaErrorHostMemoryAlreadyRegistered)
        CUDA_CPU_ERROR_NAME(cudaErrorHostMemoryNotRegistered)
        CUDA_CPU_ERROR_NAME(cudaErrorMisalignedAddress)
        CUDA_CPU_ERROR_NAME(cudaErrorLaunchFailure)
        CUDA_CPU_ERROR_NAME(cudaErrorCooperativeLaunchTooLarge)
        CUDA_CPU_ERROR_NAME(cudaErrorNotPermitted)
        CUDA_CPU_ERROR_NAME(cudaErrorNotSupported)
        CUDA_CPU_ERROR_NAME(cudaErrorStreamCaptureUnsupported)
        CUDA_CPU_ERROR_NAME(cudaErrorTimeout)
        CUDA_CPU_ERROR_NAME(cudaErrorUnknown)
#undef CUDA_CPU_ERROR_NAME
    }
    return "cudaErrorUnknown";
}

inline const char* cudaGetErrorString(cudaError_t error) {
    switch (error) {
        case cudaSuccess: return "no error";
        case cudaErrorInvalidValue: return "invalid argument";
        case cudaErrorMemoryAllocation: return "out of memory";
        case cudaErrorInitializationError: return "initialization error";
        case cudaErrorInvalidConfiguration: return "invalid configuration argument";
        case cudaErrorInvalidPitchValue: return "invalid pitch argument";
        case cudaErrorInvalidSymbol: return "invalid device symbol";
        case cudaErrorInvalidHostPointer: return "invalid host pointer";
        case cudaErrorInvalidDevicePointer: return "invalid device pointer";
        case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
        case cudaErrorNotYetImplemented: return "feature not yet implemented";
        case cudaErrorInvalidDeviceFunction: return "invalid device function";
        case cudaErrorNoDevice: return "no CUDA-capable device is detected";
        case cudaErrorInvalidDevice: return "invalid device ordinal";
        case cudaErrorUnsupportedLimit: return "unsupported limit";
        case cudaErrorInvalidResourceHandle: return "invalid resource handle";
        case cudaErrorSymbolNotFound: return "named symbol not found";
        case cudaErrorNotReady: return "device not ready";
        case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
        case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
        case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
        case cudaErrorHostMemoryAlreadyRegistered: return "part or all of the requested memory range is already mapped";
        case cudaErrorHostMemoryNotRegistered: return "pointer does not correspond to a registered memory region";
        case cudaErrorAssert: return "device-side assert triggered";
        case cudaErrorLaunchFailure: return "unspecified launch failure";
        case cudaErrorNotPermitted: return "operation not permitted";
        case cudaErrorNotSupported: return "operation not supported";
        case cudaErrorUnknown: return "unknown error";
        default: return cudaGetErrorName(error);
    }
}

inline cudaError_t cudaGetLastError() {
    cuda_cpu::synchronized();
    cudaError_t error = cuda_cpu::last_error();
    cuda_cpu::last_error() = cudaSuccess;
    return error;
}
inline cudaError_t cudaPeekAtLastError() {
    cuda_cpu::synchronized();
    return cuda_cpu::last_error();
}

// ---------------------------------------------------------------- memory
inline cudaError_t cudaMalloc(void** ptr, size_t size) { return cuda_cpu::allocate(ptr, size, cudaMemoryTypeDevice); }
template <class T>
inline cudaError_t cudaMalloc(T** ptr, size_t size) { return cudaMalloc(reinterpret_cast<void**>(ptr), size); }
inline cudaError_t cudaFree(void* ptr) { return cuda_cpu::release(ptr); }

inline cudaError_t cudaMallocHost(void** ptr, size_t size) { return cuda_cpu::allocate(ptr, size, cudaMemoryTypeHost); }
template <class T>
inline cudaError_t cudaMallocHost(T** ptr, size_t size, unsigned int = 0) { return cudaMallocHost(reinterpret_cast<void**>(ptr), size); }
inline cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) { return cuda_cpu::allocate(ptr, size, cudaMemoryTypeHost); }
template <class T>
inline cudaError_t cudaHostAlloc(T** ptr, size_t size, unsigned int flags) { return cudaHostAlloc(reinterpret_cast<void**>(ptr), size, flags); }
inline cudaError_t cudaFreeHost(void* ptr) { return cuda_cpu::release(ptr); }

inline cudaError_t cudaMallocManaged(void** ptr, size_t size, unsigned int = cudaMemAttachGlobal) {
    return cuda_cpu::allocate(ptr, size, cudaMemoryTypeManaged);
}
template <class T>
inline cudaError_t cudaMallocManaged(T** ptr, size_t size, unsigned int flags = cudaMemAttachGlobal) {
    return cudaMallocManaged(reinterpret_cast<void**>(ptr), size, flags);
}

inline cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t) { return cudaMalloc(ptr, size); }
template <class T>
inline cudaError_t cudaMallocAsync(T** ptr, size_t size, cudaStream_t stream) { return cudaMallocAsync(reinterpret_cast<void**>(ptr), size, stream); }
inline cudaError_t cudaFreeAsync(void* ptr, cudaStream_t) { return cudaFree(ptr); }

namespace cuda_cpu {
// The device's default pool, and the pool its stream-ordered allocations come from.
inline cudaMemPool_t default_mem_pool() {
    static CUmemPoolHandle_st pool = {0, 1, 1, 1};
    return &pool;
}
inline cudaMemPool_t& current_mem_pool() {
    static cudaMemPool_t pool = default_mem_pool();
    return pool;
}
// The pool's field an attribute names, or null for the usage counters (no pool memory is held:
// they read 0).
inline void* mem_pool_field(cudaMemPool_t pool, cudaMemPoolAttr attr, size_t* bytes) {
    switch (attr) {
        case cudaMemPoolReuseFollowEventDependencies: *bytes = sizeof(int); return &pool->reuse_follow_event_dependencies;
        case cudaMemPoolReuseAllowOpportunistic: *bytes = sizeof(int); return &pool->reuse_allow_opportunistic;
        case cudaMemPoolReuseAllowInternalDependencies: *bytes = sizeof(int); return &pool->reuse_allow_internal_dependencies;
        case cudaMemPoolAttrReleaseThreshold: *bytes = sizeof(unsigned long long); return &pool->release_threshold;
        default: *bytes = sizeof(unsigned long long); return nullptr;
    }
}
inline bool valid_mem_pool_attr(cudaMemPoolAttr attr) {
    return attr >= cudaMemPoolReuseFollowEventDependencies && attr <= cudaMemPoolAttrUsedMemHigh;
}
}  // namespace cuda_cpu

inline cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
    if (pool == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (!cuda_cpu::valid_device(device)) return cuda_cpu::report(cudaErrorInvalidDevice);
    *pool = cuda_cpu::default_mem_pool();
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* pool, int device) {
    if (pool == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (!cuda_cpu::valid_device(device)) return cuda_cpu::report(cudaErrorInvalidDevice);
    *pool = cuda_cpu::current_mem_pool();
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t pool) {
    if (pool == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (!cuda_cpu::valid_device(device)) return cuda_cpu::report(cudaErrorInvalidDevice);
    cuda_cpu::current_mem_pool() = pool;
    return cudaSuccess;
}
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
    if (pool == nullptr || value == nullptr || !cuda_cpu::valid_mem_pool_attr(attr)) return cuda_cpu::report(cudaErrorInvalidValue);
    size_t bytes;
    void* field = cuda_cpu::mem_pool_field(pool, attr, &bytes);
    if (field != nullptr) {
        std::memcpy(field, value, bytes);
        return cudaSuccess;
    }
    // Only the high-water marks can be set, and only back to 0.
    const bool resettable = attr == cudaMemPoolAttrReservedMemHigh || attr == cudaMemPoolAttrUsedMemHigh;
    return resettable && *static_cast<unsigned long long*>(value) == 0 ? cudaSuccess : cuda_cpu::report(cudaErrorInvalidValue);
}
inline cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
    if (pool == nullptr || value == nullptr || !cuda_cpu::valid_mem_pool_attr(attr)) return cuda_cpu::report(cudaErrorInvalidValue);
    size_t bytes;
    void* field = cuda_cpu::mem_pool_field(pool, attr, &bytes);
    if (field != nullptr) std::memcpy(value, field, bytes);
    else *static_cast<unsigned long long*>(value) = 0;
    return cudaSuccess;
}
inline cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
    return pool == nullptr ? cuda_cpu::report(cudaErrorInvalidValue) : cudaSuccess;
}
inline cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t pool, cudaStream_t) {
    if (pool == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    return cudaMalloc(ptr, size);
}
template <class T>
inline cudaError_t cudaMallocFromPoolAsync(T** ptr, size_t size, cudaMemPool_t pool, cudaStream_t stream) {
    return cudaMallocFromPoolAsync(reinterpret_cast<void**>(ptr), size, pool, stream);
}

inline cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
    if (pitch == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    const size_t row_alignment = 256;
    *pitch = (width + row_alignment - 1) / row_alignment * row_alignment;
    return cudaMalloc(ptr, *pitch * height);
}
template <class T>
inline cudaError_t cudaMallocPitch(T** ptr, size_t* pitch, size_t width, size_t height) {
    return cudaMallocPitch(reinterpret_cast<void**>(ptr), pitch, width, height);
}

inline cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int) {
    if (ptr == nullptr || size == 0) return cuda_cpu::report(cudaErrorInvalidValue);
    void* start;
    cuda_cpu::Allocation existing;
    if (cuda_cpu::allocations().find(ptr, &start, &existing)) return cuda_cpu::report(cudaErrorHostMemoryAlreadyRegistered);
    cuda_cpu::allocations().insert(ptr, cuda_cpu::Allocation{size, cudaMemoryTypeHost, false});
    return cudaSuccess;
}
inline cudaError_t cudaHostUnregister(void* ptr) {
    cuda_cpu::Allocation removed;
    if (!cuda_cpu::allocations().erase(ptr, &removed)) return cuda_cpu::report(cudaErrorHostMemoryNotRegistered);
    return cudaSuccess;
}
inline cudaError_t cudaHostGetDevicePointer(void** device_ptr, void* host_ptr, unsigned int) {
    if (device_ptr == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *device_ptr = host_ptr;
    return cudaSuccess;
}
template <class T>
inline cudaError_t cudaHostGetDevicePointer(T** device_ptr, void* host_ptr, unsigned int flags) {
    return cudaHostGetDevicePointer(reinterpret_cast<void**>(device_ptr), host_ptr, flags);
}

inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
    return cuda_cpu::copy(dst, src, count, kind);
}
inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind, cudaStream_t = 0) {
    return cuda_cpu::copy(dst, src, count, kind);
}
inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                cudaMemcpyKind kind) {
    return cuda_cpu::copy_2d(dst, dpitch, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                     size_t height, cudaMemcpyKind kind, cudaStream_t = 0) {
    return cuda_cpu::copy_2d(dst, dpitch, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t count) {
    if (!cuda_cpu::valid_device(dst_device) || !cuda_cpu::valid_device(src_device)) return cuda_cpu::report(cudaErrorInvalidDevice);
    return cuda_cpu::copy(dst, src, count, cudaMemcpyDeviceToDevice);
}
inline cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t count, cudaStream_t = 0) {
    return cudaMemcpyPeer(dst, dst_device, src, src_device, count);
}
inline cudaError_t cudaMemset(void* dst, int value, size_t count) { return cuda_cpu::fill(dst, value, count); }
inline cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t = 0) { return cuda_cpu::fill(dst, value, count); }
inline cudaError_t cudaMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height) {
    if (width > pitch) return cuda_cpu::report(cudaErrorInvalidPitchValue);
    for (size_t row = 0; row < height; ++row) {
        cudaError_t error = cuda_cpu::fill(static_cast<char*>(dst) + row * pitch, value, width);
        if (error != cudaSuccess) return error;
    }
    return cudaSuccess;
}
inline cudaError_t cudaMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t height, cudaStream_t = 0) {
    return cudaMemset2D(dst, pitch, value, width, height);
}
inline cudaExtent make_cudaExtent(size_t width, size_t height, size_t depth) { return cudaExtent{width, height, depth}; }
inline cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return cudaPos{x, y, z}; }
inline cudaPitchedPtr make_cudaPitchedPtr(void* ptr, size_t pitch, size_t xsize, size_t ysize) {
    return cudaPitchedPtr{ptr, pitch, xsize, ysize};
}
inline cudaError_t cudaMalloc3D(cudaPitchedPtr* pitched, cudaExtent extent) {
    if (pitched == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    size_t pitch = 0;
    void* memory = nullptr;
    cudaError_t error = cudaMallocPitch(&memory, &pitch, extent.width, extent.height * extent.depth);
    *pitched = cudaPitchedPtr{memory, pitch, extent.width, extent.height};
    return error;
}
namespace cuda_cpu {
inline cudaError_t copy_3d_array(const cudaMemcpy3DParms* p);
}
inline cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
    if (p == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (p->srcArray != nullptr || p->dstArray != nullptr) return cuda_cpu::copy_3d_array(p);  // cuda_cpu/textures.h
    if (!cuda_cpu::valid_kind(p->kind)) return cuda_cpu::report(cudaErrorInvalidMemcpyDirection);
    const cudaExtent e = p->extent;
    if (p->srcPos.x + e.width > p->srcPtr.pitch || p->dstPos.x + e.width > p->dstPtr.pitch) return cuda_cpu::report(cudaErrorInvalidPitchValue);
    // A pitched pointer's ysize is its rows per slice (0 = one slice of height rows).
    const size_t src_rows = p->srcPtr.ysize ? p->srcPtr.ysize : e.height, dst_rows = p->dstPtr.ysize ? p->dstPtr.ysize : e.height;
    for (size_t z = 0; z < e.depth; ++z)
        for (size_t y = 0; y < e.height; ++y) {
            const char* src = static_cast<const char*>(p->srcPtr.ptr) +
                              ((p->srcPos.z + z) * src_rows + p->srcPos.y + y) * p->srcPtr.pitch + p->srcPos.x;
            char* dst = static_cast<char*>(p->dstPtr.ptr) + ((p->dstPos.z + z) * dst_rows + p->dstPos.y + y) * p->dstPtr.pitch + p->dstPos.x;
            std::memmove(dst, src, e.width);
        }
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t = 0) { return cudaMemcpy3D(p); }
inline cudaError_t cudaMemset3D(cudaPitchedPtr pitched, int value, cudaExtent extent) {
    if (extent.width > pitched.pitch) return cuda_cpu::report(cudaErrorInvalidPitchValue);
    const size_t rows = pitched.ysize ? pitched.ysize : extent.height;
    for (size_t z = 0; z < extent.depth; ++z)
        for (size_t y = 0; y < extent.height; ++y) std::memset(static_cast<char*>(pitched.ptr) + (z * rows + y) * pitched.pitch, value, extent.width);
    return cudaSuccess;
}
inline cudaError_t cudaMemset3DAsync(cudaPitchedPtr pitched, int value, cudaExtent extent, cudaStream_t = 0) {
    return cudaMemset3D(pitched, value, extent);
}
inline cudaError_t cudaMemPrefetchAsync(const void*, size_t, int, cudaStream_t = 0) { return cudaSuccess; }
inline cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, int) { return cudaSuccess; }
namespace cuda_cpu {
// A location names this machine's one device (0) or the host; its memory is the same.
inline cudaError_t check_mem_location(cudaMemLocation location) {
    switch (location.type) {
        case cudaMemLocationTypeDevice: return location.id == 0 ? cudaSuccess : report(cudaErrorInvalidDevice);
        case cudaMemLocationTypeHost:
        case cudaMemLocationTypeHostNuma:
        case cudaMemLocationTypeHostNumaCurrent: return cudaSuccess;
        default: return report(cudaErrorInvalidValue);
    }
}
}  // namespace cuda_cpu
inline cudaError_t cudaMemPrefetchAsync(const void*, size_t, cudaMemLocation location, unsigned int, cudaStream_t = 0) {
    return cuda_cpu::check_mem_location(location);
}
inline cudaError_t cudaMemPrefetchAsync_v2(const void* ptr, size_t count, cudaMemLocation location, unsigned int flags,
                                           cudaStream_t stream = 0) {
    return cudaMemPrefetchAsync(ptr, count, location, flags, stream);
}
inline cudaError_t cudaMemAdvise(const void*, size_t, cudaMemoryAdvise, cudaMemLocation location) {
    return cuda_cpu::check_mem_location(location);
}
inline cudaError_t cudaMemAdvise_v2(const void* ptr, size_t count, cudaMemoryAdvise advice, cudaMemLocation location) {
    return cudaMemAdvise(ptr, count, advice, location);
}
// Managed memory is host memory, visible to the host and to every stream alike: attaching it
// to a stream (cudaMemAttachGlobal, cudaMemAttachHost, cudaMemAttachSingle) changes nothing.
inline cudaError_t cudaStreamAttachMemAsync(cudaStream_t, void*, size_t = 0, unsigned int = cudaMemAttachSingle) {
    return cudaSuccess;
}

inline cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
    if (free_bytes == nullptr || total_bytes == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *total_bytes = cuda_cpu::physical_memory_bytes();
    *free_bytes = cuda_cpu::available_memory_bytes();
    return cudaSuccess;
}

inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
    if (attributes == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    void* start;
    cuda_cpu::Allocation allocation;
    bool known = ptr != nullptr && cuda_cpu::allocations().find(ptr, &start, &allocation);
    attributes->type = known ? allocation.type : cudaMemoryTypeUnregistered;
    attributes->device = known ? 0 : cudaInvalidDeviceId;
    attributes->devicePointer = known ? const_cast<void*>(ptr) : nullptr;
    attributes->hostPointer = known && allocation.type != cudaMemoryTypeDevice ? const_cast<void*>(ptr) : nullptr;
    return cudaSuccess;
}

// Symbols: __constant__ and __device__ variables are plain globals on the CPU.  The
// symbol is taken by reference and must not be declared const.
template <class T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
    if (offset > sizeof(T) || count > sizeof(T) - offset) return cuda_cpu::report(cudaErrorInvalidValue);
    return cuda_cpu::copy(reinterpret_cast<char*>(const_cast<T*>(&symbol)) + offset, src, count, kind);
}
template <class T>
inline cudaError_t cudaMemcpyToSymbolAsync(const T& symbol, const void* src, size_t count, size_t offset = 0,
                                           cudaMemcpyKind kind = cudaMemcpyHostToDevice, cudaStream_t = 0) {
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
    if (offset > sizeof(T) || count > sizeof(T) - offset) return cuda_cpu::report(cudaErrorInvalidValue);
    return cuda_cpu::copy(dst, reinterpret_cast<const char*>(&symbol) + offset, count, kind);
}
template <class T>
inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyDeviceToHost, cudaStream_t = 0) {
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
}
template <class T>
inline cudaError_t cudaGetSymbolAddress(void** address, const T& symbol) {
    if (address == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *address = const_cast<T*>(&symbol);
    return cudaSuccess;
}
template <class T>
inline cudaError_t cudaGetSymbolSize(size_t* size, const T&) {
    if (size == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *size = sizeof(T);
    return cudaSuccess;
}

// ---------------------------------------------------------------- streams
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
    if (stream == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *stream = new CUstream_st{flags, priority};
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    return cudaStreamCreateWithPriority(stream, flags, 0);
}
inline cudaError_t cudaStreamCreate(cudaStream_t* stream) { return cudaStreamCreateWithPriority(stream, cudaStreamDefault, 0); }
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    if (!cuda_cpu::is_special_stream(stream)) delete stream;
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cuda_cpu::synchronized(); }
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int = 0) { return cudaSuccess; }
inline cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
    if (priority == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *priority = cuda_cpu::is_special_stream(stream) ? 0 : stream->priority;
    return cudaSuccess;
}
inline cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
    if (flags == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *flags = cuda_cpu::is_special_stream(stream) ? 0u : stream->flags;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
    if (least != nullptr) *least = 0;
    if (greatest != nullptr) *greatest = -1;
    return cudaSuccess;
}
// Work issued to a stream is already done, so callbacks run at once.
inline cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* user_data, unsigned int) {
    if (callback == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    callback(stream, cudaSuccess, user_data);
    return cudaSuccess;
}
inline cudaError_t cudaLaunchHostFunc(cudaStream_t, cudaHostFn_t function, void* user_data) {
    if (function == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    function(user_data);
    return cudaSuccess;
}

// ---------------------------------------------------------------- events
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
    if (event == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *event = new CUevent_st{flags, false, std::chrono::steady_clock::time_point()};
    return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
inline cudaError_t cudaEventCreate(cudaEvent_t* event, unsigned int flags) { return cudaEventCreateWithFlags(event, flags); }
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
    if (event == nullptr) return cuda_cpu::report(cudaErrorInvalidResourceHandle);
    delete event;
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t = 0) {
    if (event == nullptr) return cuda_cpu::report(cudaErrorInvalidResourceHandle);
    event->time = std::chrono::steady_clock::now();
    event->recorded = true;
    return cudaSuccess;
}
inline cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream = 0, unsigned int = 0) {
    return cudaEventRecord(event, stream);
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
    return event == nullptr ? cuda_cpu::report(cudaErrorInvalidResourceHandle) : cudaSuccess;
}
inline cudaError_t cudaEventQuery(cudaEvent_t event) {
    return event == nullptr ? cuda_cpu::report(cudaErrorInvalidResourceHandle) : cudaSuccess;
}
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    if (ms == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (start == nullptr || end == nullptr) return cuda_cpu::report(cudaErrorInvalidResourceHandle);
    if ((start->flags | end->flags) & cudaEventDisableTiming) return cuda_cpu::report(cudaErrorInvalidResourceHandle);
    if (!start->recorded || !end->recorded) return cuda_cpu::report(cudaErrorInvalidResourceHandle);
    *ms = std::chrono::duration<float, std::milli>(end->time - start->time).count();
    return cudaSuccess;
}

// ---------------------------------------------------------------- device
inline cudaError_t cudaGetDeviceCount(int* count) {
    if (count == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int device) {
    return cuda_cpu::valid_device(device) ? cudaSuccess : cuda_cpu::report(cudaErrorInvalidDevice);
}
inline cudaError_t cudaGetDevice(int* device) {
    if (device == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *device = 0;
    return cudaSuccess;
}
inline cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp*) { return cudaGetDevice(device); }
inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
    if (prop == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (!cuda_cpu::valid_device(device)) return cuda_cpu::report(cudaErrorInvalidDevice);
    cuda_cpu::describe_device(prop);
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
    if (value == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (!cuda_cpu::valid_device(device)) return cuda_cpu::report(cudaErrorInvalidDevice);
    *value = cuda_cpu::device_attribute(attr);
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cuda_cpu::synchronized(); }
inline cudaError_t cudaThreadSynchronize() { return cuda_cpu::synchronized(); }
// Allocations stay valid: host code may still hold pointers into them.
inline cudaError_t cudaDeviceReset() { return cudaSuccess; }
inline cudaError_t cudaThreadExit() { return cudaSuccess; }
inline cudaError_t cudaSetDeviceFlags(unsigned int) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
    if (flags == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *flags = cudaDeviceMapHost;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSetLimit(cudaLimit, size_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceGetLimit(size_t* value, cudaLimit limit) {
    if (value == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    switch (limit) {
        case cudaLimitStackSize: *value = 1024; break;
        case cudaLimitPrintfFifoSize: *value = 1 << 20; break;
        case cudaLimitMallocHeapSize: *value = 8 << 20; break;
        default: *value = 0; break;
    }
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
inline cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
    if (config != nullptr) *config = cudaFuncCachePreferNone;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
inline cudaError_t cudaDeviceCanAccessPeer(int* can_access, int, int) {
    if (can_access == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *can_access = 0;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceEnablePeerAccess(int, unsigned int) { return cuda_cpu::report(cudaErrorPeerAccessUnsupported); }
inline cudaError_t cudaDeviceDisablePeerAccess(int) { return cuda_cpu::report(cudaErrorPeerAccessNotEnabled); }
inline cudaError_t cudaDriverGetVersion(int* version) {
    if (version == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *version = CUDART_VERSION;
    return cudaSuccess;
}
inline cudaError_t cudaRuntimeGetVersion(int* version) { return cudaDriverGetVersion(version); }

// ---------------------------------------------------------------- launches (for the lowering)
namespace cuda_cpu {
// CUDA's checks of a launch configuration, for the lowered launch to call first: returns
// cudaSuccess, or cudaErrorInvalidConfiguration (recorded for cudaGetLastError, as a
// failed <<<...>>> is) where a GPU would refuse the launch; the kernel must then not run.
// Dynamic shared memory is checked against the opt-in maximum, since the per-kernel
// cudaFuncSetAttribute that raises the 48 KiB default is not tracked.
inline cudaError_t check_launch(dim3 grid, dim3 block, size_t dynamic_shared_bytes) {
    const unsigned long long threads = static_cast<unsigned long long>(block.x) * block.y * block.z;
    const bool block_ok = block.x >= 1 && block.y >= 1 && block.z >= 1 && block.x <= 1024 && block.y <= 1024 && block.z <= 64 &&
                          threads <= 1024;
    const bool grid_ok = grid.x >= 1 && grid.y >= 1 && grid.z >= 1 && grid.x <= 2147483647u && grid.y <= 65535 && grid.z <= 65535;
    const bool shared_ok = dynamic_shared_bytes <= max_shared_bytes_optin;
    return block_ok && grid_ok && shared_ok ? cudaSuccess : report(cudaErrorInvalidConfiguration);
}

// A launch through a pointer to a kernel (`table[i]<<<g, b>>>(x)`) calls the kernel's host stub,
// which has the kernel's own parameters, as nvcc's does: the configuration travels beside the
// call, pushed before it and taken by the stub.
struct LaunchConfiguration {
    dim3 grid, block;
    size_t shared;
};

inline std::vector<LaunchConfiguration>& launch_configurations() {
    static thread_local std::vector<LaunchConfiguration> pending;
    return pending;
}

inline int push_launch_configuration(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t = nullptr) {
    launch_configurations().push_back({grid, block, shared});
    return 0;
}

// cudaLaunchKernel: a kernel's host stub called with its arguments given as an array of pointers.
using KernelTrampoline = void (*)(void** args);

inline std::map<const void*, KernelTrampoline>& kernel_trampolines() {
    static std::map<const void*, KernelTrampoline> by_stub;
    return by_stub;
}

template <class... P, std::size_t... I>
void call_unpacked(void (*stub)(P...), void** args, std::index_sequence<I...>) {
    stub(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}

template <class... P>
constexpr std::size_t arity(void (*)(P...)) { return sizeof...(P); }

template <auto Stub>
void trampoline(void** args) { call_unpacked(Stub, args, std::make_index_sequence<arity(Stub)>{}); }

// Each translated kernel's stub registers itself, so that a launch by the stub's address as void* finds it.
template <auto Stub>
bool register_kernel() {
    kernel_trampolines()[reinterpret_cast<const void*>(Stub)] = &trampoline<Stub>;
    return true;
}

inline LaunchConfiguration pop_launch_configuration(const char* kernel) {
    auto& pending = launch_configurations();
    if (pending.empty()) {
        std::fprintf(stderr, "cuda_cpu: kernel %s called from host code without <<<...>>>\n", kernel);
        std::abort();
    }
    LaunchConfiguration c = pending.back();
    pending.pop_back();
    return c;
}
}  // namespace cuda_cpu

inline cudaError_t cudaLaunchKernel(const void* kernel, dim3 grid, dim3 block, void** args, size_t shared = 0,
                                    cudaStream_t stream = nullptr) {
    auto found = cuda_cpu::kernel_trampolines().find(kernel);
    if (found == cuda_cpu::kernel_trampolines().end()) {
        std::fprintf(stderr, "cudacpu: cudaLaunchKernel: %p is no kernel of the translated sources\n", kernel);
        return cuda_cpu::last_error() = cudaErrorInvalidDeviceFunction;
    }
    cuda_cpu::push_launch_configuration(grid, block, shared, stream);
    found->second(args);
    return cudaSuccess;
}

template <class... P>
inline cudaError_t cudaLaunchKernel(void (*kernel)(P...), dim3 grid, dim3 block, void** args, size_t shared = 0,
                                    cudaStream_t stream = nullptr) {
    cuda_cpu::push_launch_configuration(grid, block, shared, stream);
    cuda_cpu::call_unpacked(kernel, args, std::index_sequence_for<P...>{});
    return cudaSuccess;
}

// A cooperative launch: any launch runs its blocks together where the kernel synchronizes its grid.
inline cudaError_t cudaLaunchCooperativeKernel(const void* kernel, dim3 grid, dim3 block, void** args, size_t shared = 0,
                                               cudaStream_t stream = nullptr) {
    return cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

template <class... P>
inline cudaError_t cudaLaunchCooperativeKernel(void (*kernel)(P...), dim3 grid, dim3 block, void** args, size_t shared = 0,
                                               cudaStream_t stream = nullptr) {
    return cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

// ---------------------------------------------------------------- kernels (attributes only)
// Kernels are called directly by the lowered code; these queries accept any kernel symbol.
template <class Kernel>
inline cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int) { return cudaSuccess; }
template <class Kernel>
inline cudaError_t cudaFuncSetCacheConfig(Kernel, cudaFuncCache) { return cudaSuccess; }
template <class Kernel>
inline cudaError_t cudaFuncSetSharedMemConfig(Kernel, cudaSharedMemConfig) { return cudaSuccess; }
template <class Kernel>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, Kernel) {
    if (attributes == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    std::memset(attributes, 0, sizeof(*attributes));
    attributes->maxThreadsPerBlock = 1024;
    attributes->numRegs = 32;
    attributes->ptxVersion = 80;
    attributes->binaryVersion = 80;
    attributes->maxDynamicSharedSizeBytes = 48 * 1024;
    attributes->preferredShmemCarveout = -1;
    return cudaSuccess;
}
template <class Kernel>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, Kernel, size_t = 0, int block_size_limit = 0) {
    if (min_grid_size == nullptr || block_size == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    int size = 256;
    if (block_size_limit > 0 && block_size_limit < size) size = block_size_limit;
    *block_size = size;
    *min_grid_size = cuda_cpu::processor_count() * (2048 / size);
    return cudaSuccess;
}
template <class Kernel, class SharedBytesOfBlock>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* min_grid_size, int* block_size, Kernel kernel,
                                                                  SharedBytesOfBlock, int block_size_limit = 0) {
    return cudaOccupancyMaxPotentialBlockSize(min_grid_size, block_size, kernel, 0, block_size_limit);
}
template <class Kernel>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel, int block_size, size_t) {
    if (blocks == nullptr || block_size <= 0) return cuda_cpu::report(cudaErrorInvalidValue);
    *blocks = block_size >= 2048 ? 1 : 2048 / block_size;
    return cudaSuccess;
}

// ---------------------------------------------------------------- profiler
inline cudaError_t cudaProfilerStart() { return cudaSuccess; }
inline cudaError_t cudaProfilerStop() { return cudaSuccess; }

// ---------------------------------------------------------------- CUDA arrays and texture objects
#include "cuda_cpu/textures.h"
