// CPU CUDA runtime: NVTX profiling annotations (ranges, marks, names) as no-ops.  Push
// and pop still return the nesting depth as NVTX does.
#pragma once
#include <cstdint>

typedef uint64_t nvtxRangeId_t;
struct nvtxDomainRegistration_st;
typedef struct nvtxDomainRegistration_st* nvtxDomainHandle_t;

#define NVTX_VERSION 3
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(nvtxEventAttributes_t))
#define NVTX_COLOR_ARGB 1
#define NVTX_MESSAGE_TYPE_ASCII 1

typedef union nvtxMessageValue_t {
    const char* ascii;
    const wchar_t* unicode;
} nvtxMessageValue_t;

typedef struct nvtxEventAttributes_t {
    uint16_t version;
    uint16_t size;
    uint32_t category;
    int32_t colorType;
    uint32_t color;
    int32_t payloadType;
    int32_t reserved0;
    uint64_t payload;
    int32_t messageType;
    nvtxMessageValue_t message;
} nvtxEventAttributes_t;

namespace cuda_cpu {
inline int& nvtx_depth() {
    static thread_local int depth = 0;
    return depth;
}
}  // namespace cuda_cpu

inline int nvtxRangePushA(const char*) { return cuda_cpu::nvtx_depth()++; }
inline int nvtxRangePushW(const wchar_t*) { return cuda_cpu::nvtx_depth()++; }
inline int nvtxRangePushEx(const nvtxEventAttributes_t*) { return cuda_cpu::nvtx_depth()++; }
inline int nvtxRangePop() { return cuda_cpu::nvtx_depth() > 0 ? --cuda_cpu::nvtx_depth() : -1; }
inline nvtxRangeId_t nvtxRangeStartA(const char*) { return 0; }
inline nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t*) { return 0; }
inline void nvtxRangeEnd(nvtxRangeId_t) {}
inline void nvtxMarkA(const char*) {}
inline void nvtxMarkEx(const nvtxEventAttributes_t*) {}
inline void nvtxNameOsThreadA(uint32_t, const char*) {}
inline nvtxDomainHandle_t nvtxDomainCreateA(const char*) { return nullptr; }
inline void nvtxDomainDestroy(nvtxDomainHandle_t) {}
