// CPU CUDA runtime: __half (IEEE binary16) and __half2.
//
// Storage is 16 bits; conversions are bit-exact in every rounding mode.  Arithmetic is
// done in float and rounded once to half, which gives the correctly rounded result for
// + - * / and sqrt (float has more than twice half's precision); fma goes through double.
// As in CUDA, __half converts implicitly from float, double and the integers and to float
// unless __CUDA_NO_HALF_CONVERSIONS__ is defined, and has operators unless
// __CUDA_NO_HALF_OPERATORS__ / __CUDA_NO_HALF2_OPERATORS__ are defined.
#pragma once
#define __CUDA_FP16_H__
#define __CUDA_FP16_TYPES_EXIST__
#include "cuda_runtime.h"
#include "cuda_cpu/narrow_float.h"

struct __half_raw {
    unsigned short x;
};
struct __half2_raw {
    unsigned short x, y;
};

struct __align__(2) __half {
    unsigned short __x;

    __half() = default;
    constexpr __half(const __half_raw& raw) : __x(raw.x) {}
#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
    __half(float f) : __x(cuda_cpu::float_to_half_bits(f)) {}
    __half(double d) : __x(cuda_cpu::double_to_half_bits(d, cuda_cpu::Rounding::nearest_even)) {}
    __half(short i) : __half(static_cast<float>(i)) {}
    __half(unsigned short i) : __half(static_cast<float>(i)) {}
    __half(int i) : __half(static_cast<double>(i)) {}
    __half(unsigned int i) : __half(static_cast<double>(i)) {}
    __half(long i) : __half(static_cast<double>(i)) {}
    __half(unsigned long i) : __half(static_cast<double>(i)) {}
    __half(long long i) : __half(static_cast<double>(i)) {}
    __half(unsigned long long i) : __half(static_cast<double>(i)) {}
#endif
    __half& operator=(const __half_raw& raw) { __x = raw.x; return *this; }
    operator __half_raw() const { return __half_raw{__x}; }
#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
    operator float() const { return cuda_cpu::half_bits_to_float(__x); }
    // To every integer type as CUDA converts: toward zero, saturating, NaN to 0.
    operator signed char() const { return to_integer<signed char>(); }
    operator unsigned char() const { return to_integer<unsigned char>(); }
    operator char() const { return to_integer<char>(); }
    operator short() const { return to_integer<short>(); }
    operator unsigned short() const { return to_integer<unsigned short>(); }
    operator int() const { return to_integer<int>(); }
    operator unsigned int() const { return to_integer<unsigned int>(); }
    operator long() const { return to_integer<long>(); }
    operator unsigned long() const { return to_integer<unsigned long>(); }
    operator long long() const { return to_integer<long long>(); }
    operator unsigned long long() const { return to_integer<unsigned long long>(); }
    operator bool() const { return (__x & 0x7FFFu) != 0; }

  private:
    template <class Int>
    Int to_integer() const { return cuda_cpu::saturating_convert<Int>(truncf(cuda_cpu::half_bits_to_float(__x))); }
#endif
};
typedef __half half;

struct __align__(4) __half2 {
    __half x, y;

    __half2() = default;
    constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
    constexpr __half2(const __half2_raw& raw) : x(__half_raw{raw.x}), y(__half_raw{raw.y}) {}
    operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
typedef __half2 half2;

namespace cuda_cpu {
inline __half make_half_bits(unsigned short bits) { return __half(__half_raw{bits}); }
inline __half half_from_double(double d, Rounding mode) { return make_half_bits(double_to_half_bits(d, mode)); }
}  // namespace cuda_cpu

// ---- conversions ----
inline __half __float2half(float f) { return cuda_cpu::make_half_bits(cuda_cpu::float_to_half_bits(f)); }
inline __half __float2half_rn(float f) { return __float2half(f); }
inline __half __float2half_rz(float f) { return cuda_cpu::half_from_double(f, cuda_cpu::Rounding::toward_zero); }
inline __half __float2half_rd(float f) { return cuda_cpu::half_from_double(f, cuda_cpu::Rounding::down); }
inline __half __float2half_ru(float f) { return cuda_cpu::half_from_double(f, cuda_cpu::Rounding::up); }
inline __half __double2half(double d) { return cuda_cpu::make_half_bits(cuda_cpu::double_to_half_bits(d, cuda_cpu::Rounding::nearest_even)); }
inline float __half2float(__half h) { return cuda_cpu::half_bits_to_float(h.__x); }
inline __half __int2half_rn(int i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __half __int2half_rz(int i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::toward_zero); }
inline __half __int2half_rd(int i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::down); }
inline __half __int2half_ru(int i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::up); }
inline __half __uint2half_rn(unsigned int i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __half __short2half_rn(short i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __half __ushort2half_rn(unsigned short i) { return cuda_cpu::half_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __half __ll2half_rn(long long i) { return cuda_cpu::half_from_double(static_cast<double>(i), cuda_cpu::Rounding::nearest_even); }
inline __half __ull2half_rn(unsigned long long i) { return cuda_cpu::half_from_double(static_cast<double>(i), cuda_cpu::Rounding::nearest_even); }
inline int __half2int_rn(__half h) { return __float2int_rn(__half2float(h)); }
inline int __half2int_rz(__half h) { return __float2int_rz(__half2float(h)); }
inline int __half2int_rd(__half h) { return __float2int_rd(__half2float(h)); }
inline int __half2int_ru(__half h) { return __float2int_ru(__half2float(h)); }
inline unsigned int __half2uint_rn(__half h) { return __float2uint_rn(__half2float(h)); }
inline unsigned int __half2uint_rz(__half h) { return __float2uint_rz(__half2float(h)); }
inline signed char __half2char_rz(__half h) { return cuda_cpu::saturating_convert<signed char>(truncf(__half2float(h))); }
inline unsigned char __half2uchar_rz(__half h) { return cuda_cpu::saturating_convert<unsigned char>(truncf(__half2float(h))); }
inline short __half2short_rz(__half h) { return cuda_cpu::saturating_convert<short>(truncf(__half2float(h))); }
inline short __half2short_rn(__half h) { return cuda_cpu::saturating_convert<short>(nearbyintf(__half2float(h))); }
inline unsigned short __half2ushort_rz(__half h) { return cuda_cpu::saturating_convert<unsigned short>(truncf(__half2float(h))); }
inline unsigned short __half2ushort_rn(__half h) { return cuda_cpu::saturating_convert<unsigned short>(nearbyintf(__half2float(h))); }
inline long long __half2ll_rz(__half h) { return __float2ll_rz(__half2float(h)); }
inline long long __half2ll_rn(__half h) { return __float2ll_rn(__half2float(h)); }
inline unsigned long long __half2ull_rz(__half h) { return __float2ull_rz(__half2float(h)); }
inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half __short_as_half(short i) { return cuda_cpu::make_half_bits(static_cast<unsigned short>(i)); }
inline __half __ushort_as_half(unsigned short i) { return cuda_cpu::make_half_bits(i); }

inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __halves2half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __half2half2(__half x) { return __half2(x, x); }
inline __half2 __float2half2_rn(float f) { return __half2(__float2half(f), __float2half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__float2half(a), __float2half(b)); }
inline __half2 __float22half2_rn(float2 f) { return __half2(__float2half(f.x), __float2half(f.y)); }
inline float2 __half22float2(__half2 h) { return make_float2(__half2float(h.x), __half2float(h.y)); }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline __half __low2half(__half2 h) { return h.x; }
inline __half __high2half(__half2 h) { return h.y; }
inline __half2 __low2half2(__half2 h) { return __half2(h.x, h.x); }
inline __half2 __high2half2(__half2 h) { return __half2(h.y, h.y); }
inline __half2 __lowhigh2highlow(__half2 h) { return __half2(h.y, h.x); }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }

// ---- arithmetic and comparison (scalar) ----
inline __half __hadd(__half a, __half b) { return __float2half(__half2float(a) + __half2float(b)); }
inline __half __hsub(__half a, __half b) { return __float2half(__half2float(a) - __half2float(b)); }
inline __half __hmul(__half a, __half b) { return __float2half(__half2float(a) * __half2float(b)); }
inline __half __hdiv(__half a, __half b) { return __float2half(__half2float(a) / __half2float(b)); }
inline __half __hadd_rn(__half a, __half b) { return __hadd(a, b); }
inline __half __hsub_rn(__half a, __half b) { return __hsub(a, b); }
inline __half __hmul_rn(__half a, __half b) { return __hmul(a, b); }
inline __half __hfma(__half a, __half b, __half c) { return __double2half(std::fma(double(__half2float(a)), double(__half2float(b)), double(__half2float(c)))); }
inline __half __hneg(__half a) { return cuda_cpu::make_half_bits(static_cast<unsigned short>(a.__x ^ 0x8000u)); }
inline __half __habs(__half a) { return cuda_cpu::make_half_bits(static_cast<unsigned short>(a.__x & 0x7fffu)); }
namespace cuda_cpu {
inline __half saturate_half(float f) { return __float2half(__saturatef(f)); }
}  // namespace cuda_cpu
inline __half __hadd_sat(__half a, __half b) { return cuda_cpu::saturate_half(__half2float(__hadd(a, b))); }
inline __half __hsub_sat(__half a, __half b) { return cuda_cpu::saturate_half(__half2float(__hsub(a, b))); }
inline __half __hmul_sat(__half a, __half b) { return cuda_cpu::saturate_half(__half2float(__hmul(a, b))); }
inline __half __hfma_sat(__half a, __half b, __half c) { return cuda_cpu::saturate_half(__half2float(__hfma(a, b, c))); }
inline __half __hfma_relu(__half a, __half b, __half c) { __half r = __hfma(a, b, c); return __half2float(r) < 0.0f ? __float2half(0.0f) : r; }
inline bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
inline int __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u ? ((a.__x & 0x8000u) ? -1 : 1) : 0; }
// max/min return the other operand when one is NaN (fmaxf semantics); _nan variants propagate.
inline __half __hmax(__half a, __half b) { return __float2half(fmaxf(__half2float(a), __half2float(b))); }
inline __half __hmin(__half a, __half b) { return __float2half(fminf(__half2float(a), __half2float(b))); }
inline __half __hmax_nan(__half a, __half b) { return (__hisnan(a) || __hisnan(b)) ? __half(__half_raw{0x7fff}) : __hmax(a, b); }
inline __half __hmin_nan(__half a, __half b) { return (__hisnan(a) || __hisnan(b)) ? __half(__half_raw{0x7fff}) : __hmin(a, b); }
inline bool __heq(__half a, __half b) { return __half2float(a) == __half2float(b); }
inline bool __hne(__half a, __half b) { return __half2float(a) < __half2float(b) || __half2float(a) > __half2float(b); }
inline bool __hlt(__half a, __half b) { return __half2float(a) < __half2float(b); }
inline bool __hle(__half a, __half b) { return __half2float(a) <= __half2float(b); }
inline bool __hgt(__half a, __half b) { return __half2float(a) > __half2float(b); }
inline bool __hge(__half a, __half b) { return __half2float(a) >= __half2float(b); }
inline bool __hequ(__half a, __half b) { return !(__half2float(a) < __half2float(b) || __half2float(a) > __half2float(b)); }
inline bool __hneu(__half a, __half b) { return !(__half2float(a) == __half2float(b)); }
inline bool __hltu(__half a, __half b) { return !(__half2float(a) >= __half2float(b)); }
inline bool __hleu(__half a, __half b) { return !(__half2float(a) > __half2float(b)); }
inline bool __hgtu(__half a, __half b) { return !(__half2float(a) <= __half2float(b)); }
inline bool __hgeu(__half a, __half b) { return !(__half2float(a) < __half2float(b)); }

// ---- math (computed in float, rounded once) ----
#define CUDA_CPU_HALF_MATH(name, expr) \
    inline __half name(__half h) { float x = __half2float(h); return __float2half(expr); }
CUDA_CPU_HALF_MATH(hexp, expf(x))
CUDA_CPU_HALF_MATH(hexp2, exp2f(x))
CUDA_CPU_HALF_MATH(hexp10, powf(10.0f, x))
CUDA_CPU_HALF_MATH(hlog, logf(x))
CUDA_CPU_HALF_MATH(hlog2, log2f(x))
CUDA_CPU_HALF_MATH(hlog10, log10f(x))
CUDA_CPU_HALF_MATH(hsqrt, sqrtf(x))
CUDA_CPU_HALF_MATH(hrsqrt, 1.0f / sqrtf(x))
CUDA_CPU_HALF_MATH(hrcp, 1.0f / x)
CUDA_CPU_HALF_MATH(hsin, sinf(x))
CUDA_CPU_HALF_MATH(hcos, cosf(x))
CUDA_CPU_HALF_MATH(htanh, tanhf(x))
CUDA_CPU_HALF_MATH(htrunc, truncf(x))
CUDA_CPU_HALF_MATH(hceil, ceilf(x))
CUDA_CPU_HALF_MATH(hfloor, floorf(x))
CUDA_CPU_HALF_MATH(hrint, nearbyintf(x))
#undef CUDA_CPU_HALF_MATH

// ---- __half2: lane-wise ----
#define CUDA_CPU_HALF2_BINARY(name, scalar) \
    inline __half2 name(__half2 a, __half2 b) { return __half2(scalar(a.x, b.x), scalar(a.y, b.y)); }
CUDA_CPU_HALF2_BINARY(__hadd2, __hadd)
CUDA_CPU_HALF2_BINARY(__hsub2, __hsub)
CUDA_CPU_HALF2_BINARY(__hmul2, __hmul)
CUDA_CPU_HALF2_BINARY(__h2div, __hdiv)
CUDA_CPU_HALF2_BINARY(__hadd2_sat, __hadd_sat)
CUDA_CPU_HALF2_BINARY(__hsub2_sat, __hsub_sat)
CUDA_CPU_HALF2_BINARY(__hmul2_sat, __hmul_sat)
CUDA_CPU_HALF2_BINARY(__hmax2, __hmax)
CUDA_CPU_HALF2_BINARY(__hmin2, __hmin)
#undef CUDA_CPU_HALF2_BINARY
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
inline __half2 __heq2(__half2 a, __half2 b) { return __half2(__float2half(__heq(a.x, b.x) ? 1.0f : 0.0f), __float2half(__heq(a.y, b.y) ? 1.0f : 0.0f)); }
inline __half2 __hlt2(__half2 a, __half2 b) { return __half2(__float2half(__hlt(a.x, b.x) ? 1.0f : 0.0f), __float2half(__hlt(a.y, b.y) ? 1.0f : 0.0f)); }
inline __half2 __hgt2(__half2 a, __half2 b) { return __half2(__float2half(__hgt(a.x, b.x) ? 1.0f : 0.0f), __float2half(__hgt(a.y, b.y) ? 1.0f : 0.0f)); }
inline bool __hbeq2(__half2 a, __half2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
inline bool __hblt2(__half2 a, __half2 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }
inline bool __hbgt2(__half2 a, __half2 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }
inline __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
inline __half2 h2log(__half2 a) { return __half2(hlog(a.x), hlog(a.y)); }
inline __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
inline __half2 h2rsqrt(__half2 a) { return __half2(hrsqrt(a.x), hrsqrt(a.y)); }
inline __half2 h2rcp(__half2 a) { return __half2(hrcp(a.x), hrcp(a.y)); }
inline __half2 h2sin(__half2 a) { return __half2(hsin(a.x), hsin(a.y)); }
inline __half2 h2cos(__half2 a) { return __half2(hcos(a.x), hcos(a.y)); }

// ---- operators (as cuda_fp16.hpp defines them for __half and __half2) ----
#if !defined(__CUDA_NO_HALF_OPERATORS__)
inline __half operator+(const __half& a, const __half& b) { return __hadd(a, b); }
inline __half operator-(const __half& a, const __half& b) { return __hsub(a, b); }
inline __half operator*(const __half& a, const __half& b) { return __hmul(a, b); }
inline __half operator/(const __half& a, const __half& b) { return __hdiv(a, b); }
inline __half& operator+=(__half& a, const __half& b) { return a = __hadd(a, b); }
inline __half& operator-=(__half& a, const __half& b) { return a = __hsub(a, b); }
inline __half& operator*=(__half& a, const __half& b) { return a = __hmul(a, b); }
inline __half& operator/=(__half& a, const __half& b) { return a = __hdiv(a, b); }
inline __half operator+(const __half& a) { return a; }
inline __half operator-(const __half& a) { return __hneg(a); }
inline __half& operator++(__half& a) { return a = __hadd(a, __float2half(1.0f)); }
inline __half& operator--(__half& a) { return a = __hsub(a, __float2half(1.0f)); }
inline __half operator++(__half& a, int) { __half old = a; ++a; return old; }
inline __half operator--(__half& a, int) { __half old = a; --a; return old; }
inline bool operator==(const __half& a, const __half& b) { return __heq(a, b); }
inline bool operator!=(const __half& a, const __half& b) { return __hneu(a, b); }
inline bool operator<(const __half& a, const __half& b) { return __hlt(a, b); }
inline bool operator<=(const __half& a, const __half& b) { return __hle(a, b); }
inline bool operator>(const __half& a, const __half& b) { return __hgt(a, b); }
inline bool operator>=(const __half& a, const __half& b) { return __hge(a, b); }
#endif
#if !defined(__CUDA_NO_HALF2_OPERATORS__)
inline __half2 operator+(const __half2& a, const __half2& b) { return __hadd2(a, b); }
inline __half2 operator-(const __half2& a, const __half2& b) { return __hsub2(a, b); }
inline __half2 operator*(const __half2& a, const __half2& b) { return __hmul2(a, b); }
inline __half2 operator/(const __half2& a, const __half2& b) { return __h2div(a, b); }
inline __half2& operator+=(__half2& a, const __half2& b) { return a = __hadd2(a, b); }
inline __half2& operator-=(__half2& a, const __half2& b) { return a = __hsub2(a, b); }
inline __half2& operator*=(__half2& a, const __half2& b) { return a = __hmul2(a, b); }
inline __half2& operator/=(__half2& a, const __half2& b) { return a = __h2div(a, b); }
inline __half2 operator-(const __half2& a) { return __hneg2(a); }
inline bool operator==(const __half2& a, const __half2& b) { return __hbeq2(a, b); }
#endif

// ---- atomics ----
inline __half atomicAdd(__half* address, __half value) {
    return cuda_cpu::atomic_update(address, [value](__half old) { return __hadd(old, value); });
}
inline __half2 atomicAdd(__half2* address, __half2 value) {
    return cuda_cpu::atomic_update(address, [value](__half2 old) { return __hadd2(old, value); });
}

// Texture channel descriptors of half (as CUDA's cuda_fp16.hpp; fetches of them return float).
template <>
inline cudaChannelFormatDesc cudaCreateChannelDesc<__half>() { return cudaCreateChannelDescHalf(); }
template <>
inline cudaChannelFormatDesc cudaCreateChannelDesc<__half2>() { return cudaCreateChannelDescHalf2(); }
