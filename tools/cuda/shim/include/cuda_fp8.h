// parse shim: cuda_fp8.h (the E4M3 and E5M2 8-bit floats), declared only; the CPU runtime's
// cuda_fp8.h defines them.  Everything is __host__ __device__ as in CUDA: host code (a CPU
// reference) calls the same conversions.
#pragma once
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short int __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

#define CUDASHIM_FP8_CVT(ret, name, arg) \
  __host__ __device__ ret name(const arg, const __nv_saturation_t, const __nv_fp8_interpretation_t);
CUDASHIM_FP8_CVT(__nv_fp8_storage_t, __nv_cvt_double_to_fp8, double)
CUDASHIM_FP8_CVT(__nv_fp8_storage_t, __nv_cvt_float_to_fp8, float)
CUDASHIM_FP8_CVT(__nv_fp8_storage_t, __nv_cvt_halfraw_to_fp8, __half_raw)
CUDASHIM_FP8_CVT(__nv_fp8_storage_t, __nv_cvt_bfloat16raw_to_fp8, __nv_bfloat16_raw)
CUDASHIM_FP8_CVT(__nv_fp8x2_storage_t, __nv_cvt_double2_to_fp8x2, double2)
CUDASHIM_FP8_CVT(__nv_fp8x2_storage_t, __nv_cvt_float2_to_fp8x2, float2)
CUDASHIM_FP8_CVT(__nv_fp8x2_storage_t, __nv_cvt_halfraw2_to_fp8x2, __half2_raw)
CUDASHIM_FP8_CVT(__nv_fp8x2_storage_t, __nv_cvt_bfloat16raw2_to_fp8x2, __nv_bfloat162_raw)
#undef CUDASHIM_FP8_CVT
__host__ __device__ __half_raw __nv_cvt_fp8_to_halfraw(const __nv_fp8_storage_t, const __nv_fp8_interpretation_t);
__host__ __device__ __half2_raw __nv_cvt_fp8x2_to_halfraw2(const __nv_fp8x2_storage_t, const __nv_fp8_interpretation_t);

#define CUDASHIM_FP8_SCALAR(N)                                                                     \
  struct N {                                                                                       \
    __nv_fp8_storage_t __x;                                                                        \
    __host__ __device__ N() = default;                                                             \
    __host__ __device__ explicit N(const __half);                                                  \
    __host__ __device__ explicit N(const __nv_bfloat16);                                           \
    __host__ __device__ explicit N(const float);                                                   \
    __host__ __device__ explicit N(const double);                                                  \
    __host__ __device__ explicit N(const unsigned short int);                                      \
    __host__ __device__ explicit N(const unsigned int);                                            \
    __host__ __device__ explicit N(const unsigned long int);                                       \
    __host__ __device__ explicit N(const unsigned long long int);                                  \
    __host__ __device__ explicit N(const short int);                                               \
    __host__ __device__ explicit N(const int);                                                     \
    __host__ __device__ explicit N(const long int);                                                \
    __host__ __device__ explicit N(const long long int);                                           \
    __host__ __device__ explicit operator __half_raw() const;                                      \
    __host__ __device__ explicit operator __half() const;                                          \
    __host__ __device__ explicit operator float() const;                                           \
    __host__ __device__ explicit operator double() const;                                          \
    __host__ __device__ explicit operator __nv_bfloat16() const;                                   \
    __host__ __device__ explicit operator unsigned char() const;                                    \
    __host__ __device__ explicit operator unsigned short int() const;                              \
    __host__ __device__ explicit operator unsigned int() const;                                    \
    __host__ __device__ explicit operator unsigned long int() const;                               \
    __host__ __device__ explicit operator unsigned long long int() const;                          \
    __host__ __device__ explicit operator char() const;                                            \
    __host__ __device__ explicit operator signed char() const;                                     \
    __host__ __device__ explicit operator short int() const;                                       \
    __host__ __device__ explicit operator int() const;                                             \
    __host__ __device__ explicit operator long int() const;                                        \
    __host__ __device__ explicit operator long long int() const;                                   \
    __host__ __device__ explicit operator bool() const;                                            \
  };
CUDASHIM_FP8_SCALAR(__nv_fp8_e4m3)
CUDASHIM_FP8_SCALAR(__nv_fp8_e5m2)
#undef CUDASHIM_FP8_SCALAR

#define CUDASHIM_FP8_PAIR(N)                                                                       \
  struct N {                                                                                       \
    __nv_fp8x2_storage_t __x;                                                                      \
    __host__ __device__ N() = default;                                                             \
    __host__ __device__ explicit N(const __half2);                                                 \
    __host__ __device__ explicit N(const __nv_bfloat162);                                          \
    __host__ __device__ explicit N(const float2);                                                  \
    __host__ __device__ explicit N(const double2);                                                 \
    __host__ __device__ explicit operator __half2_raw() const;                                     \
    __host__ __device__ explicit operator __half2() const;                                         \
    __host__ __device__ explicit operator float2() const;                                          \
  };
CUDASHIM_FP8_PAIR(__nv_fp8x2_e4m3)
CUDASHIM_FP8_PAIR(__nv_fp8x2_e5m2)
#undef CUDASHIM_FP8_PAIR

#define CUDASHIM_FP8_QUAD(N)                                                                       \
  struct N {                                                                                       \
    __nv_fp8x4_storage_t __x;                                                                      \
    __host__ __device__ N() = default;                                                             \
    __host__ __device__ explicit N(const __half2, const __half2);                                  \
    __host__ __device__ explicit N(const __nv_bfloat162, const __nv_bfloat162);                    \
    __host__ __device__ explicit N(const float4);                                                  \
    __host__ __device__ explicit N(const double4);                                                 \
    __host__ __device__ explicit operator float4() const;                                          \
  };
CUDASHIM_FP8_QUAD(__nv_fp8x4_e4m3)
CUDASHIM_FP8_QUAD(__nv_fp8x4_e5m2)
#undef CUDASHIM_FP8_QUAD
