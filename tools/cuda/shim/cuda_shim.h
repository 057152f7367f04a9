// Declarations that let libclang parse CUDA sources with no CUDA installation.
// Force-included by tools/cuda/frontend.py; never compiled by g++ (the lowered code
// uses the CPU runtime in tools/cuda/runtime/include instead).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <climits>
#include <cfloat>
#include <memory>  // before __noinline__ is defined: libstdc++ spells __attribute__((__noinline__))

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __grid_constant__
#define __CUDACC__ 1
#define __CUDA_ARCH__ 800
#define CUDART_VERSION 12000
#define CUDART_PI_F 3.141592654f
#define CUDART_PI 3.1415926535897931
#define CUDART_INF_F __builtin_huge_valf()
#define CUDART_INF __builtin_huge_val()
#define CUDART_NAN_F __builtin_nanf("")
#define CUDART_NAN __builtin_nan("")

// ---- vector types -------------------------------------------------------------
#define CUDASHIM_VEC(T, N)                                                           \
  struct N##1 { T x; };                                                              \
  struct N##2 { T x, y; };                                                           \
  struct N##3 { T x, y, z; };                                                        \
  struct __attribute__((aligned(sizeof(T) * 4))) N##4 { T x, y, z, w; };             \
  __host__ __device__ inline N##1 make_##N##1(T x) { return {x}; }                   \
  __host__ __device__ inline N##2 make_##N##2(T x, T y) { return {x, y}; }           \
  __host__ __device__ inline N##3 make_##N##3(T x, T y, T z) { return {x, y, z}; }   \
  __host__ __device__ inline N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
CUDASHIM_VEC(signed char, char)
CUDASHIM_VEC(unsigned char, uchar)
CUDASHIM_VEC(short, short)
CUDASHIM_VEC(unsigned short, ushort)
CUDASHIM_VEC(int, int)
CUDASHIM_VEC(unsigned int, uint)
CUDASHIM_VEC(long, long)
CUDASHIM_VEC(unsigned long, ulong)
CUDASHIM_VEC(long long, longlong)
CUDASHIM_VEC(unsigned long long, ulonglong)
CUDASHIM_VEC(float, float)
CUDASHIM_VEC(double, double)
#undef CUDASHIM_VEC

struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1) : x(x), y(y), z(z) {}
  __host__ __device__ dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  __host__ __device__ operator uint3() const { return {x, y, z}; }
};

// ---- the thread's coordinates (the lowering turns these into loop variables) ---
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
static const __device__ int warpSize = 32;

// ---- barriers, fences, warp intrinsics -----------------------------------------
__device__ void __syncthreads();
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ void __threadfence_system();
__device__ unsigned int __activemask();
__device__ unsigned int __ballot_sync(unsigned int, int);
__device__ int __any_sync(unsigned int, int);
__device__ int __all_sync(unsigned int, int);
__device__ unsigned int __ballot(int);
__device__ int __any(int);
__device__ int __all(int);
template <class T> __device__ T __shfl_sync(unsigned int, T, int, int = 32);
template <class T> __device__ T __shfl_up_sync(unsigned int, T, unsigned int, int = 32);
template <class T> __device__ T __shfl_down_sync(unsigned int, T, unsigned int, int = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned int, T, int, int = 32);
template <class T> __device__ T __shfl(T, int, int = 32);
template <class T> __device__ T __shfl_up(T, unsigned int, int = 32);
template <class T> __device__ T __shfl_down(T, unsigned int, int = 32);
template <class T> __device__ T __shfl_xor(T, int, int = 32);
template <class T> __device__ T __reduce_add_sync(unsigned int, T);
template <class T> __device__ T __reduce_min_sync(unsigned int, T);
template <class T> __device__ T __reduce_max_sync(unsigned int, T);
template <class T> __device__ unsigned int __match_any_sync(unsigned int, T);
template <class T> __device__ unsigned int __match_all_sync(unsigned int, T, int*);
__device__ unsigned int __lanemask_lt();
__device__ long long clock64();
__device__ void __nanosleep(unsigned int);

// ---- atomics --------------------------------------------------------------------
template <class T> __device__ T atomicAdd(T*, T);
template <class T> __device__ T atomicSub(T*, T);
template <class T> __device__ T atomicMax(T*, T);
template <class T> __device__ T atomicMin(T*, T);
template <class T> __device__ T atomicExch(T*, T);
template <class T> __device__ T atomicCAS(T*, T, T);
template <class T> __device__ T atomicAnd(T*, T);
template <class T> __device__ T atomicOr(T*, T);
template <class T> __device__ T atomicXor(T*, T);
__device__ unsigned int atomicInc(unsigned int*, unsigned int);
__device__ unsigned int atomicDec(unsigned int*, unsigned int);
#define CUDASHIM_SCOPED(name) \
  template <class... A> __device__ auto name##_block(A... a) -> decltype(name(a...)); \
  template <class... A> __device__ auto name##_system(A... a) -> decltype(name(a...));
CUDASHIM_SCOPED(atomicAdd) CUDASHIM_SCOPED(atomicSub) CUDASHIM_SCOPED(atomicMax) CUDASHIM_SCOPED(atomicMin)
CUDASHIM_SCOPED(atomicExch) CUDASHIM_SCOPED(atomicCAS)
#undef CUDASHIM_SCOPED

// ---- half precision ---------------------------------------------------------------
// The _raw structs are the bits alone; the types convert to and from them (cuda_fp8.h's
// conversions take them).
struct __half_raw { unsigned short x; };
struct __half2_raw { unsigned short x, y; };
struct __nv_bfloat16_raw { unsigned short x; };
struct __nv_bfloat162_raw { unsigned short x, y; };
struct __half {
  unsigned short x;
  __host__ __device__ __half() = default;
  __host__ __device__ __half(const __half_raw&);
  __host__ __device__ __half(float);
  __host__ __device__ __half(double);
  __host__ __device__ __half(int);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __half_raw() const;
};
struct __half2 {
  __half x, y;
  __host__ __device__ __half2() = default;
  __host__ __device__ __half2(const __half&, const __half&);
  __host__ __device__ __half2(const __half2_raw&);
  __host__ __device__ operator __half2_raw() const;
};
struct __nv_bfloat16 {
  unsigned short x;
  __host__ __device__ __nv_bfloat16() = default;
  __host__ __device__ __nv_bfloat16(const __nv_bfloat16_raw&);
  __host__ __device__ __nv_bfloat16(float);
  __host__ __device__ __nv_bfloat16(double);
  __host__ __device__ __nv_bfloat16(int);
  __host__ __device__ operator float() const;
  __host__ __device__ operator __nv_bfloat16_raw() const;
};
struct __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __host__ __device__ __nv_bfloat162() = default;
  __host__ __device__ __nv_bfloat162(const __nv_bfloat16&, const __nv_bfloat16&);
  __host__ __device__ __nv_bfloat162(const __nv_bfloat162_raw&);
  __host__ __device__ operator __nv_bfloat162_raw() const;
};
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
#define CUDASHIM_HD __host__ __device__
#define CUDASHIM_HOPS(H)                                                    \
  CUDASHIM_HD H operator+(H, H); CUDASHIM_HD H operator-(H, H);             \
  CUDASHIM_HD H operator*(H, H); CUDASHIM_HD H operator/(H, H);             \
  CUDASHIM_HD H operator-(H); CUDASHIM_HD H& operator+=(H&, H);             \
  CUDASHIM_HD H& operator-=(H&, H); CUDASHIM_HD H& operator*=(H&, H);       \
  CUDASHIM_HD H& operator/=(H&, H); CUDASHIM_HD bool operator<(H, H);       \
  CUDASHIM_HD bool operator>(H, H); CUDASHIM_HD bool operator<=(H, H);      \
  CUDASHIM_HD bool operator>=(H, H); CUDASHIM_HD bool operator==(H, H);     \
  CUDASHIM_HD bool operator!=(H, H);
CUDASHIM_HOPS(__half)
CUDASHIM_HOPS(__nv_bfloat16)
#undef CUDASHIM_HOPS
#undef CUDASHIM_HD
// Host and device functions, as in CUDA 12 (CPU references call them too).
__host__ __device__ __half __float2half(float); __host__ __device__ __half __float2half_rn(float);
__host__ __device__ float __half2float(__half); __host__ __device__ __half __double2half(double);
__host__ __device__ __half __int2half_rn(int); __host__ __device__ int __half2int_rn(__half);
__host__ __device__ __half __hadd(__half, __half); __host__ __device__ __half __hsub(__half, __half);
__host__ __device__ __half __hmul(__half, __half); __host__ __device__ __half __hdiv(__half, __half);
__host__ __device__ __half __hfma(__half, __half, __half); __host__ __device__ __half __hneg(__half);
__host__ __device__ bool __hgt(__half, __half); __host__ __device__ bool __hlt(__half, __half);
__host__ __device__ bool __hge(__half, __half); __host__ __device__ bool __hle(__half, __half);
__host__ __device__ bool __heq(__half, __half); __host__ __device__ __half __hmax(__half, __half);
__host__ __device__ __half __hmin(__half, __half); __host__ __device__ bool __hisnan(__half);
__host__ __device__ __half hexp(__half); __host__ __device__ __half hlog(__half); __host__ __device__ __half hsqrt(__half);
__host__ __device__ __half hrsqrt(__half); __host__ __device__ __half habs(__half);
__host__ __device__ __half2 __floats2half2_rn(float, float); __host__ __device__ __half2 __float2half2_rn(float);
__host__ __device__ __half2 __halves2half2(__half, __half); __host__ __device__ float __low2float(__half2);
__host__ __device__ float __high2float(__half2); __host__ __device__ __half __low2half(__half2); __host__ __device__ __half __high2half(__half2);
__host__ __device__ __half2 __hadd2(__half2, __half2); __host__ __device__ __half2 __hmul2(__half2, __half2);
__host__ __device__ __half2 __hfma2(__half2, __half2, __half2); __host__ __device__ float2 __half22float2(__half2);
__host__ __device__ __nv_bfloat16 __float2bfloat16(float); __host__ __device__ __nv_bfloat16 __float2bfloat16_rn(float);
__host__ __device__ float __bfloat162float(__nv_bfloat16); __host__ __device__ __nv_bfloat16 __hadd(__nv_bfloat16, __nv_bfloat16);
__host__ __device__ __nv_bfloat16 __hmul(__nv_bfloat16, __nv_bfloat16); __host__ __device__ __nv_bfloat16 __hfma(__nv_bfloat16, __nv_bfloat16, __nv_bfloat16);

// ---- math intrinsics -------------------------------------------------------------------
#define CUDASHIM_F1(name) __device__ float name(float);
#define CUDASHIM_F2(name) __device__ float name(float, float);
CUDASHIM_F1(__expf) CUDASHIM_F1(__exp10f) CUDASHIM_F1(__logf) CUDASHIM_F1(__log2f) CUDASHIM_F1(__log10f)
CUDASHIM_F1(__sinf) CUDASHIM_F1(__cosf) CUDASHIM_F1(__tanf) CUDASHIM_F1(__saturatef) CUDASHIM_F1(__frcp_rn)
CUDASHIM_F1(__fsqrt_rn) CUDASHIM_F1(__frsqrt_rn) CUDASHIM_F1(rsqrtf) CUDASHIM_F1(exp10f) CUDASHIM_F1(rcbrtf)
CUDASHIM_F1(normcdff) CUDASHIM_F1(normcdfinvf) CUDASHIM_F1(erfcinvf) CUDASHIM_F1(erfinvf) CUDASHIM_F1(sinpif) CUDASHIM_F1(cospif)
CUDASHIM_F2(__fdividef) CUDASHIM_F2(__powf) CUDASHIM_F2(fdividef) CUDASHIM_F2(__fadd_rn) CUDASHIM_F2(__fsub_rn)
CUDASHIM_F2(__fmul_rn) CUDASHIM_F2(__fdiv_rn) CUDASHIM_F2(__fadd_rz) CUDASHIM_F2(__fmul_rz)
#undef CUDASHIM_F1
#undef CUDASHIM_F2
__device__ float __fmaf_rn(float, float, float); __device__ float __fmaf_rz(float, float, float);
__device__ double __fma_rn(double, double, double); __device__ double __dadd_rn(double, double);
__device__ double __dmul_rn(double, double); __device__ double rsqrt(double); __device__ double rcbrt(double);
__device__ double exp10(double); __device__ double normcdf(double); __device__ double sinpi(double); __device__ double cospi(double);
__device__ void sincosf(float, float*, float*); __device__ void sincos(double, double*, double*);
__device__ void __sincosf(float, float*, float*);
__device__ int __float2int_rn(float); __device__ int __float2int_rz(float); __device__ int __float2int_rd(float);
__device__ int __float2int_ru(float); __device__ unsigned int __float2uint_rn(float); __device__ unsigned int __float2uint_rz(float);
__device__ float __int2float_rn(int); __device__ float __uint2float_rn(unsigned int); __device__ int __double2int_rn(double);
__device__ float __double2float_rn(double); __device__ long long __float2ll_rn(float); __device__ long long __double2ll_rn(double);
__device__ int __float_as_int(float); __device__ float __int_as_float(int); __device__ unsigned int __float_as_uint(float);
__device__ float __uint_as_float(unsigned int); __device__ long long __double_as_longlong(double);
__device__ double __longlong_as_double(long long);
__device__ int __popc(unsigned int); __device__ int __popcll(unsigned long long); __device__ int __clz(int);
__device__ int __clzll(long long); __device__ int __ffs(int); __device__ int __ffsll(long long);
__device__ unsigned int __brev(unsigned int); __device__ unsigned long long __brevll(unsigned long long);
__device__ int __mul24(int, int); __device__ unsigned int __umul24(unsigned int, unsigned int);
__device__ int __mulhi(int, int); __device__ unsigned int __umulhi(unsigned int, unsigned int);
__device__ long long __mul64hi(long long, long long); __device__ unsigned long long __umul64hi(unsigned long long, unsigned long long);
__device__ unsigned int __byte_perm(unsigned int, unsigned int, unsigned int);
__device__ unsigned int __funnelshift_l(unsigned int, unsigned int, unsigned int);
__device__ unsigned int __funnelshift_r(unsigned int, unsigned int, unsigned int);
__device__ int __hadd(int, int); __device__ int __rhadd(int, int); __device__ unsigned int __sad(int, int, unsigned int);
template <class T> __device__ T __ldg(const T*);
template <class T> __device__ T __ldcg(const T*);
template <class T> __device__ T __ldca(const T*);
template <class T> __device__ T __ldcs(const T*);
template <class T> __device__ void __stcg(T*, T);
template <class T> __device__ void __stcs(T*, T);
__host__ __device__ int min(int, int); __host__ __device__ unsigned int min(unsigned int, unsigned int);
__host__ __device__ long long min(long long, long long); __host__ __device__ unsigned long long min(unsigned long long, unsigned long long);
__host__ __device__ float min(float, float); __host__ __device__ double min(double, double);
__host__ __device__ int max(int, int); __host__ __device__ unsigned int max(unsigned int, unsigned int);
__host__ __device__ long long max(long long, long long); __host__ __device__ unsigned long long max(unsigned long long, unsigned long long);
__host__ __device__ float max(float, float); __host__ __device__ double max(double, double);
__host__ __device__ int min(int, unsigned int); __host__ __device__ int min(unsigned int, int);
__host__ __device__ int max(int, unsigned int); __host__ __device__ int max(unsigned int, int);
__host__ __device__ long long min(long long, int); __host__ __device__ long long max(long long, int);
__host__ __device__ unsigned long long umin(unsigned long long, unsigned long long);

// ---- textures and surfaces (parsed so that the lowering can report them) ---------------
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
template <class T> __device__ T tex1Dfetch(cudaTextureObject_t, int);
template <class T> __device__ T tex1D(cudaTextureObject_t, float);
template <class T> __device__ T tex2D(cudaTextureObject_t, float, float);
template <class T> __device__ T tex3D(cudaTextureObject_t, float, float, float);
template <class T> __device__ T tex1DLayered(cudaTextureObject_t, float, int);
template <class T> __device__ T tex2DLayered(cudaTextureObject_t, float, float, int);
template <class T> __device__ T tex1DLod(cudaTextureObject_t, float, float);
template <class T> __device__ T tex2DLod(cudaTextureObject_t, float, float, float);
template <class T> __device__ T tex3DLod(cudaTextureObject_t, float, float, float, float);
template <class T> __device__ void tex1Dfetch(T*, cudaTextureObject_t, int);
template <class T> __device__ void tex1D(T*, cudaTextureObject_t, float);
template <class T> __device__ void tex2D(T*, cudaTextureObject_t, float, float);
template <class T> __device__ void tex3D(T*, cudaTextureObject_t, float, float, float);
template <class T> __device__ void tex2DLayered(T*, cudaTextureObject_t, float, float, int);
// Host side of texture objects and CUDA arrays (tools/cuda/runtime/include/cuda_cpu/textures.h).
enum cudaChannelFormatKind { cudaChannelFormatKindSigned = 0, cudaChannelFormatKindUnsigned = 1,
                             cudaChannelFormatKindFloat = 2, cudaChannelFormatKindNone = 3 };
struct cudaChannelFormatDesc { int x, y, z, w; enum cudaChannelFormatKind f; };
enum : unsigned int { cudaArrayDefault = 0, cudaArrayLayered = 1, cudaArraySurfaceLoadStore = 2, cudaArrayCubemap = 4,
                      cudaArrayTextureGather = 8 };
typedef struct cudaArray* cudaArray_t;
typedef const struct cudaArray* cudaArray_const_t;
typedef struct cudaMipmappedArray* cudaMipmappedArray_t;
struct cudaExtent { size_t width, height, depth; };
struct cudaPos { size_t x, y, z; };
struct cudaPitchedPtr { void* ptr; size_t pitch, xsize, ysize; };
struct cudaMemcpy3DParms { cudaArray_t srcArray; cudaPos srcPos; cudaPitchedPtr srcPtr; cudaArray_t dstArray; cudaPos dstPos;
                           cudaPitchedPtr dstPtr; cudaExtent extent; int kind; };
cudaExtent make_cudaExtent(size_t, size_t, size_t);
cudaPos make_cudaPos(size_t, size_t, size_t);
cudaPitchedPtr make_cudaPitchedPtr(void*, size_t, size_t, size_t);
enum cudaResourceType { cudaResourceTypeArray = 0, cudaResourceTypeMipmappedArray = 1, cudaResourceTypeLinear = 2,
                        cudaResourceTypePitch2D = 3 };
struct cudaResourceDesc {
  enum cudaResourceType resType;
  union {
    struct { cudaArray_t array; } array;
    struct { cudaMipmappedArray_t mipmap; } mipmap;
    struct { void* devPtr; struct cudaChannelFormatDesc desc; size_t sizeInBytes; } linear;
    struct { void* devPtr; struct cudaChannelFormatDesc desc; size_t width, height, pitchInBytes; } pitch2D;
  } res;
  unsigned int flags;
};
struct cudaResourceViewDesc { int format; size_t width, height, depth; unsigned int firstMipmapLevel, lastMipmapLevel,
                              firstLayer, lastLayer; };
enum cudaTextureAddressMode { cudaAddressModeWrap = 0, cudaAddressModeClamp = 1, cudaAddressModeMirror = 2,
                              cudaAddressModeBorder = 3 };
enum cudaTextureFilterMode { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
struct cudaTextureDesc {
  enum cudaTextureAddressMode addressMode[3]; enum cudaTextureFilterMode filterMode; enum cudaTextureReadMode readMode;
  int sRGB; float borderColor[4]; int normalizedCoords; unsigned int maxAnisotropy;
  enum cudaTextureFilterMode mipmapFilterMode; float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
  int disableTrilinearOptimization, seamlessCubemap;
};
template <class T> cudaChannelFormatDesc cudaCreateChannelDesc();
cudaChannelFormatDesc cudaCreateChannelDesc(int, int, int, int, cudaChannelFormatKind);
cudaChannelFormatDesc cudaCreateChannelDescHalf(); cudaChannelFormatDesc cudaCreateChannelDescHalf1();
cudaChannelFormatDesc cudaCreateChannelDescHalf2(); cudaChannelFormatDesc cudaCreateChannelDescHalf4();
template <class T> __device__ void surf2Dwrite(T, cudaSurfaceObject_t, int, int);
template <class T> __device__ T surf2Dread(cudaSurfaceObject_t, int, int);

// ---- host runtime API (enough to parse host code) -------------------------------------
typedef int cudaError_t;
enum : int { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorInvalidValue = 1 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
enum cudaLimit { cudaLimitStackSize, cudaLimitPrintfFifoSize, cudaLimitMallocHeapSize };
enum cudaFuncCache { cudaFuncCachePreferNone, cudaFuncCachePreferShared, cudaFuncCachePreferL1,
                     cudaFuncCachePreferEqual };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault, cudaSharedMemBankSizeFourByte,
                           cudaSharedMemBankSizeEightByte };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
                         cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
typedef struct CUmemPoolHandle_st* cudaMemPool_t;
#define cudaMemAttachGlobal 0x01
#define cudaMemAttachHost 0x02
#define cudaMemAttachSingle 0x04
enum cudaMemPoolAttr { cudaMemPoolReuseFollowEventDependencies = 1, cudaMemPoolReuseAllowOpportunistic,
                       cudaMemPoolReuseAllowInternalDependencies, cudaMemPoolAttrReleaseThreshold,
                       cudaMemPoolAttrReservedMemCurrent, cudaMemPoolAttrReservedMemHigh,
                       cudaMemPoolAttrUsedMemCurrent, cudaMemPoolAttrUsedMemHigh };
struct cudaDeviceProp {
  char name[256]; size_t totalGlobalMem, sharedMemPerBlock, totalConstMem; int regsPerBlock, warpSize,
  maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3], clockRate, major, minor, multiProcessorCount,
  maxThreadsPerMultiProcessor, memoryClockRate, memoryBusWidth, l2CacheSize, sharedMemPerMultiprocessor;
};
int cudaConfigureCall(dim3, dim3, size_t = 0, cudaStream_t = 0);
int __cudaPushCallConfiguration(dim3, dim3, size_t = 0, cudaStream_t = 0);
#define CUDASHIM_API(name) template <class... A> cudaError_t name(A&&...);
CUDASHIM_API(cudaMalloc) CUDASHIM_API(cudaMallocHost) CUDASHIM_API(cudaMallocManaged) CUDASHIM_API(cudaHostAlloc)
CUDASHIM_API(cudaMallocPitch) CUDASHIM_API(cudaFree) CUDASHIM_API(cudaFreeHost) CUDASHIM_API(cudaMemcpy)
CUDASHIM_API(cudaMemcpyAsync) CUDASHIM_API(cudaMemcpy2D) CUDASHIM_API(cudaMemset) CUDASHIM_API(cudaMemsetAsync)
CUDASHIM_API(cudaMemcpyToSymbol) CUDASHIM_API(cudaMemcpyFromSymbol) CUDASHIM_API(cudaMemcpyToSymbolAsync)
CUDASHIM_API(cudaDeviceSynchronize) CUDASHIM_API(cudaDeviceReset) CUDASHIM_API(cudaSetDevice) CUDASHIM_API(cudaGetDevice)
CUDASHIM_API(cudaGetDeviceCount) CUDASHIM_API(cudaGetDeviceProperties) CUDASHIM_API(cudaDeviceGetAttribute)
CUDASHIM_API(cudaStreamCreate) CUDASHIM_API(cudaStreamCreateWithFlags) CUDASHIM_API(cudaStreamDestroy)
CUDASHIM_API(cudaStreamSynchronize) CUDASHIM_API(cudaStreamWaitEvent) CUDASHIM_API(cudaEventCreate)
CUDASHIM_API(cudaEventCreateWithFlags) CUDASHIM_API(cudaEventDestroy) CUDASHIM_API(cudaEventRecord)
CUDASHIM_API(cudaEventSynchronize) CUDASHIM_API(cudaEventElapsedTime) CUDASHIM_API(cudaGetLastError)
CUDASHIM_API(cudaPeekAtLastError) CUDASHIM_API(cudaFuncSetAttribute) CUDASHIM_API(cudaFuncSetCacheConfig)
CUDASHIM_API(cudaMemGetInfo) CUDASHIM_API(cudaHostRegister) CUDASHIM_API(cudaHostUnregister)
CUDASHIM_API(cudaMemPrefetchAsync) CUDASHIM_API(cudaOccupancyMaxPotentialBlockSize)
CUDASHIM_API(cudaOccupancyMaxActiveBlocksPerMultiprocessor) CUDASHIM_API(cudaLaunchKernel)
CUDASHIM_API(cudaLaunchCooperativeKernel) CUDASHIM_API(cudaGetSymbolAddress) CUDASHIM_API(cudaPointerGetAttributes)
// The rest of the CPU runtime's API (cuda_runtime_api.h), so that host code calling it parses.
CUDASHIM_API(cudaChooseDevice) CUDASHIM_API(cudaDeviceCanAccessPeer)
CUDASHIM_API(cudaDeviceDisablePeerAccess) CUDASHIM_API(cudaDeviceEnablePeerAccess)
CUDASHIM_API(cudaDeviceGetCacheConfig) CUDASHIM_API(cudaDeviceGetLimit)
CUDASHIM_API(cudaDeviceGetStreamPriorityRange) CUDASHIM_API(cudaDeviceSetCacheConfig)
CUDASHIM_API(cudaDeviceSetLimit) CUDASHIM_API(cudaDeviceSetSharedMemConfig)
CUDASHIM_API(cudaDriverGetVersion) CUDASHIM_API(cudaEventQuery)
CUDASHIM_API(cudaEventRecordWithFlags) CUDASHIM_API(cudaFreeAsync)
CUDASHIM_API(cudaFuncGetAttributes) CUDASHIM_API(cudaFuncSetSharedMemConfig)
CUDASHIM_API(cudaGetDeviceFlags) CUDASHIM_API(cudaGetSymbolSize)
CUDASHIM_API(cudaHostGetDevicePointer) CUDASHIM_API(cudaLaunchHostFunc) CUDASHIM_API(cudaMalloc3D)
CUDASHIM_API(cudaMallocAsync) CUDASHIM_API(cudaMemAdvise) CUDASHIM_API(cudaMemcpy2DAsync)
CUDASHIM_API(cudaMemcpy3D) CUDASHIM_API(cudaMemcpy3DAsync) CUDASHIM_API(cudaMemcpyFromSymbolAsync)
CUDASHIM_API(cudaMemcpyPeer) CUDASHIM_API(cudaMemcpyPeerAsync) CUDASHIM_API(cudaMemset2D)
CUDASHIM_API(cudaMemset2DAsync) CUDASHIM_API(cudaMemset3D) CUDASHIM_API(cudaMemset3DAsync)
CUDASHIM_API(cudaOccupancyMaxPotentialBlockSizeVariableSMem) CUDASHIM_API(cudaProfilerStart)
CUDASHIM_API(cudaProfilerStop) CUDASHIM_API(cudaRuntimeGetVersion) CUDASHIM_API(cudaSetDeviceFlags)
CUDASHIM_API(cudaStreamAddCallback) CUDASHIM_API(cudaStreamCreateWithPriority)
CUDASHIM_API(cudaStreamGetFlags) CUDASHIM_API(cudaStreamGetPriority) CUDASHIM_API(cudaStreamQuery)
CUDASHIM_API(cudaThreadExit) CUDASHIM_API(cudaThreadSynchronize) CUDASHIM_API(cudaStreamAttachMemAsync)
CUDASHIM_API(cudaDeviceGetDefaultMemPool) CUDASHIM_API(cudaDeviceGetMemPool) CUDASHIM_API(cudaDeviceSetMemPool)
CUDASHIM_API(cudaMemPoolGetAttribute) CUDASHIM_API(cudaMemPoolSetAttribute) CUDASHIM_API(cudaMemPoolTrimTo)
CUDASHIM_API(cudaMallocFromPoolAsync) CUDASHIM_API(cudaMemAdvise_v2) CUDASHIM_API(cudaMemPrefetchAsync_v2)
CUDASHIM_API(cudaMallocArray) CUDASHIM_API(cudaMalloc3DArray) CUDASHIM_API(cudaFreeArray) CUDASHIM_API(cudaArrayGetInfo)
CUDASHIM_API(cudaGetChannelDesc) CUDASHIM_API(cudaMemcpy2DToArray) CUDASHIM_API(cudaMemcpy2DToArrayAsync)
CUDASHIM_API(cudaMemcpy2DFromArray) CUDASHIM_API(cudaMemcpy2DFromArrayAsync) CUDASHIM_API(cudaMemcpyToArray)
CUDASHIM_API(cudaMemcpyToArrayAsync) CUDASHIM_API(cudaMemcpyFromArray) CUDASHIM_API(cudaMemcpyFromArrayAsync)
CUDASHIM_API(cudaCreateTextureObject) CUDASHIM_API(cudaDestroyTextureObject) CUDASHIM_API(cudaGetTextureObjectResourceDesc)
CUDASHIM_API(cudaGetTextureObjectTextureDesc)
#undef CUDASHIM_API
const char* cudaGetErrorString(cudaError_t);
const char* cudaGetErrorName(cudaError_t);
