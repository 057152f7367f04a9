// CPU CUDA runtime: the 8-bit floats of cuda_fp8.h (E4M3 and E5M2).
//
// Conversions to fp8 round to nearest even, once (from double or from the exact float of a
// half or bfloat16).  E4M3 has no infinities: out of range is NaN without saturation;
// E5M2 overflows to inf.  __NV_SATFINITE clamps out-of-range values, infinities included,
// to the largest finite value and keeps NaN.  The classes convert from the wider types with
// __NV_SATFINITE and to them explicitly, as in CUDA (no arithmetic operators, as in CUDA);
// __CUDA_NO_FP8_CONVERSIONS__ removes those conversions.
#pragma once
#define __CUDA_FP8_H__
#define __CUDA_FP8_TYPES_EXIST__
#include "cuda_runtime.h"
#include "cuda_fp16.h"
#include "cuda_bf16.h"
#include "cuda_cpu/narrow_float.h"

typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short int __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;

typedef enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE } __nv_saturation_t;
typedef enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 } __nv_fp8_interpretation_t;

namespace cuda_cpu {
inline Fp8Format fp8_format(__nv_fp8_interpretation_t interpretation) {
    return interpretation == __NV_E4M3 ? fp8_e4m3 : fp8_e5m2;
}
// Element 0 (.x) in the low byte, as CUDA packs pairs and tetrads.
inline __nv_fp8x2_storage_t pack_fp8x2(__nv_fp8_storage_t low, __nv_fp8_storage_t high) {
    return static_cast<__nv_fp8x2_storage_t>(low | (high << 8));
}
inline __nv_fp8x4_storage_t pack_fp8x4(__nv_fp8x2_storage_t low, __nv_fp8x2_storage_t high) {
    return static_cast<__nv_fp8x4_storage_t>(low) | (static_cast<__nv_fp8x4_storage_t>(high) << 16);
}
}  // namespace cuda_cpu

// ---- conversions to fp8 ----
inline __nv_fp8_storage_t __nv_cvt_double_to_fp8(const double x, const __nv_saturation_t saturate,
                                                 const __nv_fp8_interpretation_t fp8_interpretation) {
    return cuda_cpu::double_to_fp8_bits(x, cuda_cpu::fp8_format(fp8_interpretation), saturate == __NV_SATFINITE);
}
inline __nv_fp8_storage_t __nv_cvt_float_to_fp8(const float x, const __nv_saturation_t saturate,
                                                const __nv_fp8_interpretation_t fp8_interpretation) {
    return __nv_cvt_double_to_fp8(x, saturate, fp8_interpretation);  // float -> double is exact: one rounding
}
inline __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(const __half_raw x, const __nv_saturation_t saturate,
                                                  const __nv_fp8_interpretation_t fp8_interpretation) {
    return __nv_cvt_float_to_fp8(cuda_cpu::half_bits_to_float(x.x), saturate, fp8_interpretation);
}
inline __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(const __nv_bfloat16_raw x, const __nv_saturation_t saturate,
                                                      const __nv_fp8_interpretation_t fp8_interpretation) {
    return __nv_cvt_float_to_fp8(cuda_cpu::bfloat16_bits_to_float(x.x), saturate, fp8_interpretation);
}
inline __nv_fp8x2_storage_t __nv_cvt_double2_to_fp8x2(const double2 x, const __nv_saturation_t saturate,
                                                      const __nv_fp8_interpretation_t fp8_interpretation) {
    return cuda_cpu::pack_fp8x2(__nv_cvt_double_to_fp8(x.x, saturate, fp8_interpretation),
                                __nv_cvt_double_to_fp8(x.y, saturate, fp8_interpretation));
}
inline __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(const float2 x, const __nv_saturation_t saturate,
                                                     const __nv_fp8_interpretation_t fp8_interpretation) {
    return cuda_cpu::pack_fp8x2(__nv_cvt_float_to_fp8(x.x, saturate, fp8_interpretation),
                                __nv_cvt_float_to_fp8(x.y, saturate, fp8_interpretation));
}
inline __nv_fp8x2_storage_t __nv_cvt_halfraw2_to_fp8x2(const __half2_raw x, const __nv_saturation_t saturate,
                                                       const __nv_fp8_interpretation_t fp8_interpretation) {
    return cuda_cpu::pack_fp8x2(__nv_cvt_halfraw_to_fp8(__half_raw{x.x}, saturate, fp8_interpretation),
                                __nv_cvt_halfraw_to_fp8(__half_raw{x.y}, saturate, fp8_interpretation));
}
inline __nv_fp8x2_storage_t __nv_cvt_bfloat16raw2_to_fp8x2(const __nv_bfloat162_raw x, const __nv_saturation_t saturate,
                                                           const __nv_fp8_interpretation_t fp8_interpretation) {
    return cuda_cpu::pack_fp8x2(__nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{x.x}, saturate, fp8_interpretation),
                                __nv_cvt_bfloat16raw_to_fp8(__nv_bfloat16_raw{x.y}, saturate, fp8_interpretation));
}

// ---- conversions from fp8 (exact) ----
inline __half_raw __nv_cvt_fp8_to_halfraw(const __nv_fp8_storage_t x, const __nv_fp8_interpretation_t fp8_interpretation) {
    return __half_raw{cuda_cpu::fp8_bits_to_half_bits(x, cuda_cpu::fp8_format(fp8_interpretation))};
}
inline __half2_raw __nv_cvt_fp8x2_to_halfraw2(const __nv_fp8x2_storage_t x, const __nv_fp8_interpretation_t fp8_interpretation) {
    return __half2_raw{__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(x & 0xffu), fp8_interpretation).x,
                       __nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(x >> 8), fp8_interpretation).x};
}

// ---- the classes: one definition for both formats ----
namespace cuda_cpu {

template <__nv_fp8_interpretation_t Interpretation>
struct fp8_scalar {
    __nv_fp8_storage_t __x;

    fp8_scalar() = default;
#if !defined(__CUDA_NO_FP8_CONVERSIONS__)
    explicit fp8_scalar(const __half f) : __x(__nv_cvt_halfraw_to_fp8(static_cast<__half_raw>(f), __NV_SATFINITE, Interpretation)) {}
    explicit fp8_scalar(const __nv_bfloat16 f)
        : __x(__nv_cvt_bfloat16raw_to_fp8(static_cast<__nv_bfloat16_raw>(f), __NV_SATFINITE, Interpretation)) {}
    explicit fp8_scalar(const float f) : __x(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, Interpretation)) {}
    explicit fp8_scalar(const double f) : __x(__nv_cvt_double_to_fp8(f, __NV_SATFINITE, Interpretation)) {}
    // Integers convert through double: exact up to 2^53, and anything that large saturates.
    explicit fp8_scalar(const unsigned short int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const unsigned int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const unsigned long int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const unsigned long long int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const short int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const long int i) : fp8_scalar(static_cast<double>(i)) {}
    explicit fp8_scalar(const long long int i) : fp8_scalar(static_cast<double>(i)) {}

    explicit operator __half_raw() const { return __nv_cvt_fp8_to_halfraw(__x, Interpretation); }
    explicit operator __half() const { return __half(__nv_cvt_fp8_to_halfraw(__x, Interpretation)); }
    explicit operator float() const { return fp8_bits_to_float(__x, fp8_format(Interpretation)); }
    explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
    explicit operator __nv_bfloat16() const { return __float2bfloat16(static_cast<float>(*this)); }  // exact
    // Integers: truncated toward zero, clamped to the type's range, NaN gives 0.
    explicit operator unsigned char() const { return to_integer<unsigned char>(); }
    explicit operator unsigned short int() const { return to_integer<unsigned short int>(); }
    explicit operator unsigned int() const { return to_integer<unsigned int>(); }
    explicit operator unsigned long int() const { return to_integer<unsigned long int>(); }
    explicit operator unsigned long long int() const { return to_integer<unsigned long long int>(); }
    explicit operator char() const { return to_integer<char>(); }
    explicit operator signed char() const { return to_integer<signed char>(); }
    explicit operator short int() const { return to_integer<short int>(); }
    explicit operator int() const { return to_integer<int>(); }
    explicit operator long int() const { return to_integer<long int>(); }
    explicit operator long long int() const { return to_integer<long long int>(); }
    explicit operator bool() const { return (__x & 0x7fu) != 0; }  // only zeros are false (NaN is true)

 private:
    template <class Int>
    Int to_integer() const { return saturating_convert<Int>(truncf(static_cast<float>(*this))); }
#endif
};

template <__nv_fp8_interpretation_t Interpretation>
struct fp8_pair {
    __nv_fp8x2_storage_t __x;

    fp8_pair() = default;
#if !defined(__CUDA_NO_FP8_CONVERSIONS__)
    explicit fp8_pair(const __half2 f) : __x(__nv_cvt_halfraw2_to_fp8x2(static_cast<__half2_raw>(f), __NV_SATFINITE, Interpretation)) {}
    explicit fp8_pair(const __nv_bfloat162 f)
        : __x(__nv_cvt_bfloat16raw2_to_fp8x2(static_cast<__nv_bfloat162_raw>(f), __NV_SATFINITE, Interpretation)) {}
    explicit fp8_pair(const float2 f) : __x(__nv_cvt_float2_to_fp8x2(f, __NV_SATFINITE, Interpretation)) {}
    explicit fp8_pair(const double2 f) : __x(__nv_cvt_double2_to_fp8x2(f, __NV_SATFINITE, Interpretation)) {}

    explicit operator __half2_raw() const { return __nv_cvt_fp8x2_to_halfraw2(__x, Interpretation); }
    explicit operator __half2() const { return __half2(__nv_cvt_fp8x2_to_halfraw2(__x, Interpretation)); }
    explicit operator float2() const {
        const Fp8Format format = fp8_format(Interpretation);
        return make_float2(fp8_bits_to_float(static_cast<uint8_t>(__x & 0xffu), format),
                           fp8_bits_to_float(static_cast<uint8_t>(__x >> 8), format));
    }
#endif
};

template <__nv_fp8_interpretation_t Interpretation>
struct fp8_quad {
    __nv_fp8x4_storage_t __x;

    fp8_quad() = default;
#if !defined(__CUDA_NO_FP8_CONVERSIONS__)
    explicit fp8_quad(const __half2 low, const __half2 high)
        : __x(pack_fp8x4(fp8_pair<Interpretation>(low).__x, fp8_pair<Interpretation>(high).__x)) {}
    explicit fp8_quad(const __nv_bfloat162 low, const __nv_bfloat162 high)
        : __x(pack_fp8x4(fp8_pair<Interpretation>(low).__x, fp8_pair<Interpretation>(high).__x)) {}
    explicit fp8_quad(const float4 f)
        : __x(pack_fp8x4(fp8_pair<Interpretation>(make_float2(f.x, f.y)).__x, fp8_pair<Interpretation>(make_float2(f.z, f.w)).__x)) {}
    explicit fp8_quad(const double4 f)
        : __x(pack_fp8x4(fp8_pair<Interpretation>(make_double2(f.x, f.y)).__x, fp8_pair<Interpretation>(make_double2(f.z, f.w)).__x)) {}

    explicit operator float4() const {
        const Fp8Format format = fp8_format(Interpretation);
        return make_float4(fp8_bits_to_float(static_cast<uint8_t>(__x), format), fp8_bits_to_float(static_cast<uint8_t>(__x >> 8), format),
                           fp8_bits_to_float(static_cast<uint8_t>(__x >> 16), format), fp8_bits_to_float(static_cast<uint8_t>(__x >> 24), format));
    }
#endif
};

}  // namespace cuda_cpu

// CUDA's names are distinct structs (not aliases), so that code may overload on them.
struct __nv_fp8_e4m3 : cuda_cpu::fp8_scalar<__NV_E4M3> { using fp8_scalar::fp8_scalar; };
struct __nv_fp8_e5m2 : cuda_cpu::fp8_scalar<__NV_E5M2> { using fp8_scalar::fp8_scalar; };
struct __nv_fp8x2_e4m3 : cuda_cpu::fp8_pair<__NV_E4M3> { using fp8_pair::fp8_pair; };
struct __nv_fp8x2_e5m2 : cuda_cpu::fp8_pair<__NV_E5M2> { using fp8_pair::fp8_pair; };
struct __nv_fp8x4_e4m3 : cuda_cpu::fp8_quad<__NV_E4M3> { using fp8_quad::fp8_quad; };
struct __nv_fp8x4_e5m2 : cuda_cpu::fp8_quad<__NV_E5M2> { using fp8_quad::fp8_quad; };
