// CPU CUDA runtime: __nv_bfloat16 (bfloat16) and __nv_bfloat162.
//
// Storage is 16 bits; conversions are bit-exact in every rounding mode.  Arithmetic is
// done in float and rounded once (correctly rounded for + - * / sqrt; fma via double).
// The scalar and pair functions overload CUDA's names (__hadd, hexp, __hadd2, ...).
// __CUDA_NO_BFLOAT16_CONVERSIONS__, __CUDA_NO_BFLOAT16_OPERATORS__ and
// __CUDA_NO_BFLOAT162_OPERATORS__ remove the implicit conversions and operators, as in CUDA.
#pragma once
#define __CUDA_BF16_H__
#define __CUDA_BF16_TYPES_EXIST__
#include "cuda_runtime.h"
#include "cuda_cpu/narrow_float.h"

struct __nv_bfloat16_raw {
    unsigned short x;
};
struct __nv_bfloat162_raw {
    unsigned short x, y;
};

struct __align__(2) __nv_bfloat16 {
    unsigned short __x;

    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw& raw) : __x(raw.x) {}
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
    __nv_bfloat16(float f) : __x(cuda_cpu::float_to_bfloat16_bits(f)) {}
    __nv_bfloat16(double d) : __x(cuda_cpu::double_to_bfloat16_bits(d, cuda_cpu::Rounding::nearest_even)) {}
    __nv_bfloat16(short i) : __nv_bfloat16(static_cast<float>(i)) {}
    __nv_bfloat16(unsigned short i) : __nv_bfloat16(static_cast<float>(i)) {}
    __nv_bfloat16(int i) : __nv_bfloat16(static_cast<double>(i)) {}
    __nv_bfloat16(unsigned int i) : __nv_bfloat16(static_cast<double>(i)) {}
    __nv_bfloat16(long i) : __nv_bfloat16(static_cast<double>(i)) {}
    __nv_bfloat16(unsigned long i) : __nv_bfloat16(static_cast<double>(i)) {}
    __nv_bfloat16(long long i) : __nv_bfloat16(static_cast<double>(i)) {}
    __nv_bfloat16(unsigned long long i) : __nv_bfloat16(static_cast<double>(i)) {}
#endif
    __nv_bfloat16& operator=(const __nv_bfloat16_raw& raw) { __x = raw.x; return *this; }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
    operator float() const { return cuda_cpu::bfloat16_bits_to_float(__x); }
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
    Int to_integer() const { return cuda_cpu::saturating_convert<Int>(truncf(cuda_cpu::bfloat16_bits_to_float(__x))); }
#endif
};
typedef __nv_bfloat16 nv_bfloat16;

struct __align__(4) __nv_bfloat162 {
    __nv_bfloat16 x, y;

    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
    constexpr __nv_bfloat162(const __nv_bfloat162_raw& raw) : x(__nv_bfloat16_raw{raw.x}), y(__nv_bfloat16_raw{raw.y}) {}
    operator __nv_bfloat162_raw() const { return __nv_bfloat162_raw{x.__x, y.__x}; }
};
typedef __nv_bfloat162 nv_bfloat162;

namespace cuda_cpu {
inline __nv_bfloat16 make_bfloat16_bits(unsigned short bits) { return __nv_bfloat16(__nv_bfloat16_raw{bits}); }
inline __nv_bfloat16 bfloat16_from_double(double d, Rounding mode) { return make_bfloat16_bits(double_to_bfloat16_bits(d, mode)); }
}  // namespace cuda_cpu

// ---- conversions ----
inline __nv_bfloat16 __float2bfloat16(float f) { return cuda_cpu::make_bfloat16_bits(cuda_cpu::float_to_bfloat16_bits(f)); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __float2bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rz(float f) { return cuda_cpu::bfloat16_from_double(f, cuda_cpu::Rounding::toward_zero); }
inline __nv_bfloat16 __float2bfloat16_rd(float f) { return cuda_cpu::bfloat16_from_double(f, cuda_cpu::Rounding::down); }
inline __nv_bfloat16 __float2bfloat16_ru(float f) { return cuda_cpu::bfloat16_from_double(f, cuda_cpu::Rounding::up); }
inline __nv_bfloat16 __double2bfloat16(double d) { return cuda_cpu::make_bfloat16_bits(cuda_cpu::double_to_bfloat16_bits(d, cuda_cpu::Rounding::nearest_even)); }
inline float __bfloat162float(__nv_bfloat16 b) { return cuda_cpu::bfloat16_bits_to_float(b.__x); }
inline __nv_bfloat16 __int2bfloat16_rn(int i) { return cuda_cpu::bfloat16_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __nv_bfloat16 __int2bfloat16_rz(int i) { return cuda_cpu::bfloat16_from_double(i, cuda_cpu::Rounding::toward_zero); }
inline __nv_bfloat16 __uint2bfloat16_rn(unsigned int i) { return cuda_cpu::bfloat16_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __nv_bfloat16 __short2bfloat16_rn(short i) { return cuda_cpu::bfloat16_from_double(i, cuda_cpu::Rounding::nearest_even); }
inline __nv_bfloat16 __ll2bfloat16_rn(long long i) { return cuda_cpu::bfloat16_from_double(static_cast<double>(i), cuda_cpu::Rounding::nearest_even); }
inline int __bfloat162int_rn(__nv_bfloat16 b) { return __float2int_rn(__bfloat162float(b)); }
inline int __bfloat162int_rz(__nv_bfloat16 b) { return __float2int_rz(__bfloat162float(b)); }
inline int __bfloat162int_rd(__nv_bfloat16 b) { return __float2int_rd(__bfloat162float(b)); }
inline int __bfloat162int_ru(__nv_bfloat16 b) { return __float2int_ru(__bfloat162float(b)); }
inline unsigned int __bfloat162uint_rz(__nv_bfloat16 b) { return __float2uint_rz(__bfloat162float(b)); }
inline signed char __bfloat162char_rz(__nv_bfloat16 b) { return cuda_cpu::saturating_convert<signed char>(truncf(__bfloat162float(b))); }
inline unsigned char __bfloat162uchar_rz(__nv_bfloat16 b) { return cuda_cpu::saturating_convert<unsigned char>(truncf(__bfloat162float(b))); }
inline short __bfloat162short_rz(__nv_bfloat16 b) { return cuda_cpu::saturating_convert<short>(truncf(__bfloat162float(b))); }
inline unsigned short __bfloat162ushort_rz(__nv_bfloat16 b) { return cuda_cpu::saturating_convert<unsigned short>(truncf(__bfloat162float(b))); }
inline unsigned long long __bfloat162ull_rz(__nv_bfloat16 b) { return __float2ull_rz(__bfloat162float(b)); }
inline long long __bfloat162ll_rz(__nv_bfloat16 b) { return __float2ll_rz(__bfloat162float(b)); }
inline short __bfloat16_as_short(__nv_bfloat16 b) { return static_cast<short>(b.__x); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
inline __nv_bfloat16 __short_as_bfloat16(short i) { return cuda_cpu::make_bfloat16_bits(static_cast<unsigned short>(i)); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short i) { return cuda_cpu::make_bfloat16_bits(i); }

inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 x, __nv_bfloat16 y) { return __nv_bfloat162(x, y); }
inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 x) { return __nv_bfloat162(x, x); }
inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__float2bfloat16(f), __float2bfloat16(f)); }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__float2bfloat16(a), __float2bfloat16(b)); }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __nv_bfloat162(__float2bfloat16(f.x), __float2bfloat16(f.y)); }
inline float2 __bfloat1622float2(__nv_bfloat162 b) { return make_float2(__bfloat162float(b.x), __bfloat162float(b.y)); }
inline float __low2float(__nv_bfloat162 b) { return __bfloat162float(b.x); }
inline float __high2float(__nv_bfloat162 b) { return __bfloat162float(b.y); }
inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) { return b.x; }
inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) { return b.y; }
inline __nv_bfloat162 __lowhigh2highlow(__nv_bfloat162 b) { return __nv_bfloat162(b.y, b.x); }

namespace cuda_cpu {
inline __nv_bfloat16 saturate_bfloat16(float f) { return __float2bfloat16(__saturatef(f)); }
}  // namespace cuda_cpu

// ---- arithmetic and comparison (scalar) ----
inline __nv_bfloat16 __hadd(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) + __bfloat162float(b)); }
inline __nv_bfloat16 __hsub(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) - __bfloat162float(b)); }
inline __nv_bfloat16 __hmul(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) * __bfloat162float(b)); }
inline __nv_bfloat16 __hdiv(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(__bfloat162float(a) / __bfloat162float(b)); }
inline __nv_bfloat16 __hadd_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
inline __nv_bfloat16 __hsub_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
inline __nv_bfloat16 __hmul_rn(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) { return __double2bfloat16(std::fma(double(__bfloat162float(a)), double(__bfloat162float(b)), double(__bfloat162float(c)))); }
inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return cuda_cpu::make_bfloat16_bits(static_cast<unsigned short>(a.__x ^ 0x8000u)); }
inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return cuda_cpu::make_bfloat16_bits(static_cast<unsigned short>(a.__x & 0x7fffu)); }
inline __nv_bfloat16 __hadd_sat(__nv_bfloat16 a, __nv_bfloat16 b) { return cuda_cpu::saturate_bfloat16(__bfloat162float(__hadd(a, b))); }
inline __nv_bfloat16 __hsub_sat(__nv_bfloat16 a, __nv_bfloat16 b) { return cuda_cpu::saturate_bfloat16(__bfloat162float(__hsub(a, b))); }
inline __nv_bfloat16 __hmul_sat(__nv_bfloat16 a, __nv_bfloat16 b) { return cuda_cpu::saturate_bfloat16(__bfloat162float(__hmul(a, b))); }
inline __nv_bfloat16 __hfma_sat(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) { return cuda_cpu::saturate_bfloat16(__bfloat162float(__hfma(a, b, c))); }
inline __nv_bfloat16 __hfma_relu(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) { __nv_bfloat16 r = __hfma(a, b, c); return __bfloat162float(r) < 0.0f ? __float2bfloat16(0.0f) : r; }
inline bool __hisnan(__nv_bfloat16 a) { return (a.__x & 0x7fffu) > 0x7f80u; }
inline int __hisinf(__nv_bfloat16 a) { return (a.__x & 0x7fffu) == 0x7f80u ? ((a.__x & 0x8000u) ? -1 : 1) : 0; }
// max/min return the other operand when one is NaN (fmaxf semantics); _nan variants propagate.
inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(fmaxf(__bfloat162float(a), __bfloat162float(b))); }
inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(fminf(__bfloat162float(a), __bfloat162float(b))); }
inline __nv_bfloat16 __hmax_nan(__nv_bfloat16 a, __nv_bfloat16 b) { return (__hisnan(a) || __hisnan(b)) ? __nv_bfloat16(__nv_bfloat16_raw{0x7fff}) : __hmax(a, b); }
inline __nv_bfloat16 __hmin_nan(__nv_bfloat16 a, __nv_bfloat16 b) { return (__hisnan(a) || __hisnan(b)) ? __nv_bfloat16(__nv_bfloat16_raw{0x7fff}) : __hmin(a, b); }
inline bool __heq(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) == __bfloat162float(b); }
inline bool __hne(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) < __bfloat162float(b) || __bfloat162float(a) > __bfloat162float(b); }
inline bool __hlt(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) < __bfloat162float(b); }
inline bool __hle(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) <= __bfloat162float(b); }
inline bool __hgt(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) > __bfloat162float(b); }
inline bool __hge(__nv_bfloat16 a, __nv_bfloat16 b) { return __bfloat162float(a) >= __bfloat162float(b); }
inline bool __hequ(__nv_bfloat16 a, __nv_bfloat16 b) { return !(__bfloat162float(a) < __bfloat162float(b) || __bfloat162float(a) > __bfloat162float(b)); }
inline bool __hneu(__nv_bfloat16 a, __nv_bfloat16 b) { return !(__bfloat162float(a) == __bfloat162float(b)); }
inline bool __hltu(__nv_bfloat16 a, __nv_bfloat16 b) { return !(__bfloat162float(a) >= __bfloat162float(b)); }
inline bool __hleu(__nv_bfloat16 a, __nv_bfloat16 b) { return !(__bfloat162float(a) > __bfloat162float(b)); }
inline bool __hgtu(__nv_bfloat16 a, __nv_bfloat16 b) { return !(__bfloat162float(a) <= __bfloat162float(b)); }
inline bool __hgeu(__nv_bfloat16 a, __nv_bfloat16 b) { return !(__bfloat162float(a) < __bfloat162float(b)); }

// ---- math (computed in float, rounded once) ----
#define CUDA_CPU_BF16_MATH(name, expr) \
    inline __nv_bfloat16 name(__nv_bfloat16 h) { float x = __bfloat162float(h); return __float2bfloat16(expr); }
CUDA_CPU_BF16_MATH(hexp, expf(x))
CUDA_CPU_BF16_MATH(hexp2, exp2f(x))
CUDA_CPU_BF16_MATH(hexp10, powf(10.0f, x))
CUDA_CPU_BF16_MATH(hlog, logf(x))
CUDA_CPU_BF16_MATH(hlog2, log2f(x))
CUDA_CPU_BF16_MATH(hlog10, log10f(x))
CUDA_CPU_BF16_MATH(hsqrt, sqrtf(x))
CUDA_CPU_BF16_MATH(hrsqrt, 1.0f / sqrtf(x))
CUDA_CPU_BF16_MATH(hrcp, 1.0f / x)
CUDA_CPU_BF16_MATH(hsin, sinf(x))
CUDA_CPU_BF16_MATH(hcos, cosf(x))
CUDA_CPU_BF16_MATH(htanh, tanhf(x))
CUDA_CPU_BF16_MATH(htrunc, truncf(x))
CUDA_CPU_BF16_MATH(hceil, ceilf(x))
CUDA_CPU_BF16_MATH(hfloor, floorf(x))
CUDA_CPU_BF16_MATH(hrint, nearbyintf(x))
#undef CUDA_CPU_BF16_MATH

// ---- __nv_bfloat162: lane-wise ----
#define CUDA_CPU_BF162_BINARY(name, scalar) \
    inline __nv_bfloat162 name(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(scalar(a.x, b.x), scalar(a.y, b.y)); }
CUDA_CPU_BF162_BINARY(__hadd2, __hadd)
CUDA_CPU_BF162_BINARY(__hsub2, __hsub)
CUDA_CPU_BF162_BINARY(__hmul2, __hmul)
CUDA_CPU_BF162_BINARY(__h2div, __hdiv)
CUDA_CPU_BF162_BINARY(__hadd2_sat, __hadd_sat)
CUDA_CPU_BF162_BINARY(__hsub2_sat, __hsub_sat)
CUDA_CPU_BF162_BINARY(__hmul2_sat, __hmul_sat)
CUDA_CPU_BF162_BINARY(__hmax2, __hmax)
CUDA_CPU_BF162_BINARY(__hmin2, __hmin)
#undef CUDA_CPU_BF162_BINARY
inline __nv_bfloat162 __hfma2(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) { return __nv_bfloat162(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); }
inline __nv_bfloat162 __hneg2(__nv_bfloat162 a) { return __nv_bfloat162(__hneg(a.x), __hneg(a.y)); }
inline __nv_bfloat162 __habs2(__nv_bfloat162 a) { return __nv_bfloat162(__habs(a.x), __habs(a.y)); }
inline __nv_bfloat162 __heq2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(__float2bfloat16(__heq(a.x, b.x) ? 1.0f : 0.0f), __float2bfloat16(__heq(a.y, b.y) ? 1.0f : 0.0f)); }
inline __nv_bfloat162 __hlt2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(__float2bfloat16(__hlt(a.x, b.x) ? 1.0f : 0.0f), __float2bfloat16(__hlt(a.y, b.y) ? 1.0f : 0.0f)); }
inline __nv_bfloat162 __hgt2(__nv_bfloat162 a, __nv_bfloat162 b) { return __nv_bfloat162(__float2bfloat16(__hgt(a.x, b.x) ? 1.0f : 0.0f), __float2bfloat16(__hgt(a.y, b.y) ? 1.0f : 0.0f)); }
inline bool __hbeq2(__nv_bfloat162 a, __nv_bfloat162 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
inline bool __hblt2(__nv_bfloat162 a, __nv_bfloat162 b) { return __hlt(a.x, b.x) && __hlt(a.y, b.y); }
inline bool __hbgt2(__nv_bfloat162 a, __nv_bfloat162 b) { return __hgt(a.x, b.x) && __hgt(a.y, b.y); }
inline __nv_bfloat162 h2exp(__nv_bfloat162 a) { return __nv_bfloat162(hexp(a.x), hexp(a.y)); }
inline __nv_bfloat162 h2log(__nv_bfloat162 a) { return __nv_bfloat162(hlog(a.x), hlog(a.y)); }
inline __nv_bfloat162 h2sqrt(__nv_bfloat162 a) { return __nv_bfloat162(hsqrt(a.x), hsqrt(a.y)); }
inline __nv_bfloat162 h2rsqrt(__nv_bfloat162 a) { return __nv_bfloat162(hrsqrt(a.x), hrsqrt(a.y)); }
inline __nv_bfloat162 h2rcp(__nv_bfloat162 a) { return __nv_bfloat162(hrcp(a.x), hrcp(a.y)); }
inline __nv_bfloat162 h2sin(__nv_bfloat162 a) { return __nv_bfloat162(hsin(a.x), hsin(a.y)); }
inline __nv_bfloat162 h2cos(__nv_bfloat162 a) { return __nv_bfloat162(hcos(a.x), hcos(a.y)); }

// ---- operators (as cuda_bf16.hpp defines them for __nv_bfloat16 and __nv_bfloat162) ----
#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
inline __nv_bfloat16 operator+(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hadd(a, b); }
inline __nv_bfloat16 operator-(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hsub(a, b); }
inline __nv_bfloat16 operator*(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hmul(a, b); }
inline __nv_bfloat16 operator/(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hdiv(a, b); }
inline __nv_bfloat16& operator+=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hadd(a, b); }
inline __nv_bfloat16& operator-=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hsub(a, b); }
inline __nv_bfloat16& operator*=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hmul(a, b); }
inline __nv_bfloat16& operator/=(__nv_bfloat16& a, const __nv_bfloat16& b) { return a = __hdiv(a, b); }
inline __nv_bfloat16 operator+(const __nv_bfloat16& a) { return a; }
inline __nv_bfloat16 operator-(const __nv_bfloat16& a) { return __hneg(a); }
inline __nv_bfloat16& operator++(__nv_bfloat16& a) { return a = __hadd(a, __float2bfloat16(1.0f)); }
inline __nv_bfloat16& operator--(__nv_bfloat16& a) { return a = __hsub(a, __float2bfloat16(1.0f)); }
inline __nv_bfloat16 operator++(__nv_bfloat16& a, int) { __nv_bfloat16 old = a; ++a; return old; }
inline __nv_bfloat16 operator--(__nv_bfloat16& a, int) { __nv_bfloat16 old = a; --a; return old; }
inline bool operator==(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __heq(a, b); }
inline bool operator!=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hneu(a, b); }
inline bool operator<(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hlt(a, b); }
inline bool operator<=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hle(a, b); }
inline bool operator>(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hgt(a, b); }
inline bool operator>=(const __nv_bfloat16& a, const __nv_bfloat16& b) { return __hge(a, b); }
#endif
#if !defined(__CUDA_NO_BFLOAT162_OPERATORS__)
inline __nv_bfloat162 operator+(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hadd2(a, b); }
inline __nv_bfloat162 operator-(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hsub2(a, b); }
inline __nv_bfloat162 operator*(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hmul2(a, b); }
inline __nv_bfloat162 operator/(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __h2div(a, b); }
inline __nv_bfloat162& operator+=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hadd2(a, b); }
inline __nv_bfloat162& operator-=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hsub2(a, b); }
inline __nv_bfloat162& operator*=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __hmul2(a, b); }
inline __nv_bfloat162& operator/=(__nv_bfloat162& a, const __nv_bfloat162& b) { return a = __h2div(a, b); }
inline __nv_bfloat162 operator-(const __nv_bfloat162& a) { return __hneg2(a); }
inline bool operator==(const __nv_bfloat162& a, const __nv_bfloat162& b) { return __hbeq2(a, b); }
#endif

// ---- atomics ----
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* address, __nv_bfloat16 value) {
    return cuda_cpu::atomic_update(address, [value](__nv_bfloat16 old) { return __hadd(old, value); });
}
inline __nv_bfloat162 atomicAdd(__nv_bfloat162* address, __nv_bfloat162 value) {
    return cuda_cpu::atomic_update(address, [value](__nv_bfloat162 old) { return __hadd2(old, value); });
}
