// CPU CUDA runtime: the CUDA device math API on the host.
//
// The C99/C++ functions (sqrtf, expf, fmaf, ... and their float overloads sqrt(float))
// come from <math.h>, which in libstdc++ also brings std's float overloads into the global
// namespace, as CUDA does.  This file adds what CUDA has and C++ lacks: the fast
// intrinsics (__expf, __fdividef, ...), the rounding-suffixed arithmetic, conversions and
// bit casts, the integer intrinsics and the min/max overload set.
//
// Precision: the "fast" intrinsics are computed with the full-precision library function,
// which is within CUDA's documented error bounds for them.  Directed-rounding variants of
// conversions (_rz, _rd, _ru) are exact; arithmetic exists only in its _rn form.
#pragma once
#include "cuda_cpu/defines.h"

#include <math.h>
#include <cmath>
#include <climits>
#include <limits>
#include <type_traits>
#include <utility>
#include <cstdint>
#include <cstring>

namespace cuda_cpu {

__extension__ typedef __int128 int128;  // __extension__: no -Wpedantic warning
__extension__ typedef unsigned __int128 uint128;

template <class To, class From>
inline To bit_cast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
    To to;
    std::memcpy(&to, &from, sizeof(To));
    return to;
}

// Float-to-integer conversion with CUDA's semantics: NaN gives 0, out-of-range saturates.
template <class Int, class Real>
inline Int saturating_convert(Real rounded) {
    if (rounded != rounded) return 0;
    constexpr Real lowest = static_cast<Real>(std::numeric_limits<Int>::min());
    // 2^bits (exact in Real): the first value above the largest Int.
    constexpr Real above = static_cast<Real>(std::numeric_limits<Int>::max() / 2 + 1) * static_cast<Real>(2);
    if (rounded <= lowest) return std::numeric_limits<Int>::min();
    if (rounded >= above) return std::numeric_limits<Int>::max();
    return static_cast<Int>(rounded);
}

// Round a double to float toward zero, down or up (the default cast rounds to nearest).
inline float double_to_float_rz(double d) {
    float f = static_cast<float>(d);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    return f;
}
inline float double_to_float_rd(double d) {
    float f = static_cast<float>(d);
    if (static_cast<double>(f) > d) f = std::nextafter(f, -INFINITY);
    return f;
}
inline float double_to_float_ru(double d) {
    float f = static_cast<float>(d);
    if (static_cast<double>(f) < d) f = std::nextafter(f, INFINITY);
    return f;
}

// erfinv for double: a float-quality start refined by Newton steps on erf.
inline double erfinv(double y) {
    if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
    if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
    if (y != y) return y;
    // Giles' single-precision approximation as the starting point.
    double w = -std::log((1.0 - y) * (1.0 + y));
    double x;
    if (w < 5.0) {
        w -= 2.5;
        double p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w; p = -3.5233877e-06 + p * w; p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w; p = -0.00125372503 + p * w; p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w; p = 1.50140941 + p * w;
        x = p * y;
    } else {
        w = std::sqrt(w) - 3.0;
        double p = -0.000200214257;
        p = 0.000100950558 + p * w; p = 0.00134934322 + p * w; p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w; p = -0.0076224613 + p * w; p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w; p = 2.83297682 + p * w;
        x = p * y;
    }
    const double two_over_sqrt_pi = 1.1283791670955126;
    for (int step = 0; step < 3; ++step) {
        double slope = two_over_sqrt_pi * std::exp(-x * x);
        if (slope == 0.0) break;
        x -= (std::erf(x) - y) / slope;
    }
    return x;
}

// erfcinv for double: Newton on erfc, which keeps precision for tiny arguments.
inline double erfcinv(double y) {
    if (y != y || y < 0.0 || y > 2.0) return NAN;
    if (y == 0.0) return INFINITY;
    if (y == 2.0) return -INFINITY;
    if (y > 1e-3 && y < 2.0 - 1e-3) return erfinv(1.0 - y);  // start is accurate enough
    bool upper = y > 1.0;
    double t = upper ? 2.0 - y : y;  // erfcinv(2 - t) = -erfcinv(t)
    double x = std::sqrt(-std::log(t));  // asymptotic start, refined below
    const double two_over_sqrt_pi = 1.1283791670955126;
    for (int step = 0; step < 40; ++step) {
        double value = std::erfc(x);
        double slope = -two_over_sqrt_pi * std::exp(-x * x);
        if (slope == 0.0) break;
        // Newton in log space: log(erfc(x)) is close to quadratic, so this converges fast.
        double dx = (std::log(value) - std::log(t)) * value / slope;
        x -= dx;
        if (std::fabs(dx) <= 1e-16 * std::fabs(x)) break;
    }
    return upper ? -x : x;
}

inline double erfcx(double x) {
    if (x < 25.0) return std::exp(x * x) * std::erfc(x);
    // Asymptotic series: erfcx(x) ~ 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6)).
    double inv2 = 1.0 / (x * x);
    return 0.5641895835477563 / x * (1.0 - 0.5 * inv2 + 0.75 * inv2 * inv2 - 1.875 * inv2 * inv2 * inv2);
}

}  // namespace cuda_cpu

// ---- glibc declares __expf, __sinf, ... (extern "C", not exported): define them here ----
extern "C" {
inline float __expf(float x) noexcept { return expf(x); }
inline float __exp10f(float x) noexcept { return powf(10.0f, x); }
inline float __logf(float x) noexcept { return logf(x); }
inline float __log2f(float x) noexcept { return log2f(x); }
inline float __log10f(float x) noexcept { return log10f(x); }
inline float __powf(float x, float y) noexcept { return powf(x, y); }
inline float __sinf(float x) noexcept { return sinf(x); }
inline float __cosf(float x) noexcept { return cosf(x); }
inline float __tanf(float x) noexcept { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) noexcept { *s = sinf(x); *c = cosf(x); }
}

#if !defined(__USE_GNU)
// glibc provides these GNU extensions under _GNU_SOURCE (g++'s default); elsewhere define them.
inline float exp10f(float x) { return powf(10.0f, x); }
inline double exp10(double x) { return pow(10.0, x); }
inline void sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline void sincos(double x, double* s, double* c) { *s = sin(x); *c = cos(x); }
#endif

// ---- CUDA-only math functions ----
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline double fdivide(double a, double b) { return a / b; }
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
// A template for the same reason as min/max: helper_math.h defines its own rsqrtf on the host.
template <class T, std::enable_if_t<std::is_convertible<T, float>::value, int> = 0>
inline float rsqrtf(T x) { return 1.0f / sqrtf(static_cast<float>(x)); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float sinpif(float x) { return static_cast<float>(sin(M_PI * static_cast<double>(x))); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline float cospif(float x) { return static_cast<float>(cos(M_PI * static_cast<double>(x))); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * static_cast<float>(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline float erfinvf(float y) { return static_cast<float>(cuda_cpu::erfinv(y)); }
inline double erfinv(double y) { return cuda_cpu::erfinv(y); }
inline float erfcinvf(float y) { return static_cast<float>(cuda_cpu::erfcinv(y)); }
inline double erfcinv(double y) { return cuda_cpu::erfcinv(y); }
inline float normcdfinvf(float p) { return static_cast<float>(-M_SQRT2 * cuda_cpu::erfcinv(2.0 * double(p))); }
inline double normcdfinv(double p) { return -M_SQRT2 * cuda_cpu::erfcinv(2.0 * double(p)); }
inline float erfcxf(float x) { return static_cast<float>(cuda_cpu::erfcx(x)); }
inline double erfcx(double x) { return cuda_cpu::erfcx(x); }
inline float rhypotf(float x, float y) { return 1.0f / hypotf(x, y); }
inline double rhypot(double x, double y) { return 1.0 / hypot(x, y); }
inline float norm3df(float a, float b, float c) { return static_cast<float>(sqrt(double(a) * double(a) + double(b) * double(b) + double(c) * double(c))); }
inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
inline float norm4df(float a, float b, float c, float d) { return static_cast<float>(sqrt(double(a) * double(a) + double(b) * double(b) + double(c) * double(c) + double(d) * double(d))); }
inline double norm4d(double a, double b, double c, double d) { return sqrt(a * a + b * b + c * c + d * d); }
inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }
inline double rnorm4d(double a, double b, double c, double d) { return 1.0 / norm4d(a, b, c, d); }
inline float normf(int dim, const float* v) { double s = 0; for (int i = 0; i < dim; ++i) s += double(v[i]) * double(v[i]); return static_cast<float>(sqrt(s)); }
inline double norm(int dim, const double* v) { double s = 0; for (int i = 0; i < dim; ++i) s += v[i] * v[i]; return sqrt(s); }
inline float rnormf(int dim, const float* v) { return 1.0f / normf(dim, v); }
inline double rnorm(int dim, const double* v) { return 1.0 / norm(dim, v); }

// ---- arithmetic with explicit round-to-nearest (the default on the CPU) ----
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __frsqrt_rn(float a) { return 1.0f / sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }

// ---- conversions ----
inline int __float2int_rn(float x) { return cuda_cpu::saturating_convert<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return cuda_cpu::saturating_convert<int>(truncf(x)); }
inline int __float2int_rd(float x) { return cuda_cpu::saturating_convert<int>(floorf(x)); }
inline int __float2int_ru(float x) { return cuda_cpu::saturating_convert<int>(ceilf(x)); }
inline unsigned int __float2uint_rn(float x) { return cuda_cpu::saturating_convert<unsigned int>(nearbyintf(x)); }
inline unsigned int __float2uint_rz(float x) { return cuda_cpu::saturating_convert<unsigned int>(truncf(x)); }
inline unsigned int __float2uint_rd(float x) { return cuda_cpu::saturating_convert<unsigned int>(floorf(x)); }
inline unsigned int __float2uint_ru(float x) { return cuda_cpu::saturating_convert<unsigned int>(ceilf(x)); }
inline long long __float2ll_rn(float x) { return cuda_cpu::saturating_convert<long long>(nearbyintf(x)); }
inline long long __float2ll_rz(float x) { return cuda_cpu::saturating_convert<long long>(truncf(x)); }
inline long long __float2ll_rd(float x) { return cuda_cpu::saturating_convert<long long>(floorf(x)); }
inline long long __float2ll_ru(float x) { return cuda_cpu::saturating_convert<long long>(ceilf(x)); }
inline unsigned long long __float2ull_rn(float x) { return cuda_cpu::saturating_convert<unsigned long long>(nearbyintf(x)); }
inline unsigned long long __float2ull_rz(float x) { return cuda_cpu::saturating_convert<unsigned long long>(truncf(x)); }
inline int __double2int_rn(double x) { return cuda_cpu::saturating_convert<int>(nearbyint(x)); }
inline int __double2int_rz(double x) { return cuda_cpu::saturating_convert<int>(trunc(x)); }
inline int __double2int_rd(double x) { return cuda_cpu::saturating_convert<int>(floor(x)); }
inline int __double2int_ru(double x) { return cuda_cpu::saturating_convert<int>(ceil(x)); }
inline unsigned int __double2uint_rn(double x) { return cuda_cpu::saturating_convert<unsigned int>(nearbyint(x)); }
inline unsigned int __double2uint_rz(double x) { return cuda_cpu::saturating_convert<unsigned int>(trunc(x)); }
inline long long __double2ll_rn(double x) { return cuda_cpu::saturating_convert<long long>(nearbyint(x)); }
inline long long __double2ll_rz(double x) { return cuda_cpu::saturating_convert<long long>(trunc(x)); }
inline unsigned long long __double2ull_rn(double x) { return cuda_cpu::saturating_convert<unsigned long long>(nearbyint(x)); }
inline unsigned long long __double2ull_rz(double x) { return cuda_cpu::saturating_convert<unsigned long long>(trunc(x)); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline float __double2float_rz(double x) { return cuda_cpu::double_to_float_rz(x); }
inline float __double2float_rd(double x) { return cuda_cpu::double_to_float_rd(x); }
inline float __double2float_ru(double x) { return cuda_cpu::double_to_float_ru(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __int2float_rz(int x) { return cuda_cpu::double_to_float_rz(x); }
inline float __int2float_rd(int x) { return cuda_cpu::double_to_float_rd(x); }
inline float __int2float_ru(int x) { return cuda_cpu::double_to_float_ru(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline float __uint2float_rz(unsigned int x) { return cuda_cpu::double_to_float_rz(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return x; }
inline double __uint2double_rn(unsigned int x) { return x; }
inline double __ll2double_rn(long long x) { return static_cast<double>(x); }
inline double __ull2double_rn(unsigned long long x) { return static_cast<double>(x); }
inline int __float_as_int(float x) { return cuda_cpu::bit_cast<int>(x); }
inline float __int_as_float(int x) { return cuda_cpu::bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return cuda_cpu::bit_cast<unsigned int>(x); }
inline float __uint_as_float(unsigned int x) { return cuda_cpu::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return cuda_cpu::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return cuda_cpu::bit_cast<double>(x); }
inline int __double2hiint(double x) { return static_cast<int>(cuda_cpu::bit_cast<unsigned long long>(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(cuda_cpu::bit_cast<unsigned long long>(x) & 0xffffffffu); }
inline double __hiloint2double(int hi, int lo) {
    return cuda_cpu::bit_cast<double>((static_cast<unsigned long long>(static_cast<unsigned int>(hi)) << 32) | static_cast<unsigned int>(lo));
}

// ---- min / max ----
// CUDA overloads min/max for every pair of int, unsigned, long, long long (signed and
// unsigned), float and double; the result has the usual arithmetic conversion of the two
// (so min(-1, 2u) is 2u) and floating point follows fminf/fmin.  Here they are templates
// so that host code's own non-template min/max/rsqrtf (helper_math.h defines them when
// __CUDACC__ is undefined) and std::min under `using namespace std` coexist without
// redefinition or ambiguity.
namespace cuda_cpu {
template <class A, class B>
using min_max_result = std::enable_if_t<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value,
                                        std::common_type_t<decltype(+std::declval<A>()), decltype(+std::declval<B>())>>;
}  // namespace cuda_cpu

template <class A, class B>
inline cuda_cpu::min_max_result<A, B> min(A a, B b) {
    using R = cuda_cpu::min_max_result<A, B>;
    if constexpr (std::is_floating_point<R>::value) return std::fmin(static_cast<R>(a), static_cast<R>(b));
    else return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b);
}
template <class A, class B>
inline cuda_cpu::min_max_result<A, B> max(A a, B b) {
    using R = cuda_cpu::min_max_result<A, B>;
    if constexpr (std::is_floating_point<R>::value) return std::fmax(static_cast<R>(a), static_cast<R>(b));
    else return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b);
}
inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---- integer intrinsics ----
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32) | __brev(static_cast<unsigned int>(x >> 32));
}
inline int __mul24(int a, int b) {
    // Low 32 bits of the product of the sign-extended low 24 bits.
    long long a24 = static_cast<int>(static_cast<unsigned int>(a) << 8) >> 8;
    long long b24 = static_cast<int>(static_cast<unsigned int>(b) << 8) >> 8;
    return static_cast<int>(static_cast<unsigned int>(a24 * b24));
}
inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) { return static_cast<unsigned int>((static_cast<unsigned long long>(a) * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<cuda_cpu::int128>(a) * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return static_cast<unsigned long long>((static_cast<cuda_cpu::uint128>(a) * b) >> 64);
}
inline unsigned int __sad(int x, int y, unsigned int z) {
    return z + static_cast<unsigned int>(x > y ? static_cast<long long>(x) - y : static_cast<long long>(y) - x);
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned int result = 0;
    for (int i = 0; i < 4; ++i) {
        unsigned int selector = (s >> (4 * i)) & 7u;
        result |= static_cast<unsigned int>((bytes >> (8 * selector)) & 0xffu) << (8 * i);
    }
    return result;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((both << (shift & 31u)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((both << (shift < 32u ? shift : 32u)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(both >> (shift & 31u));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    unsigned long long both = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(both >> (shift < 32u ? shift : 32u));
}
inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
inline unsigned int __uhadd(unsigned int a, unsigned int b) { return static_cast<unsigned int>((static_cast<unsigned long long>(a) + b) >> 1); }
inline unsigned int __urhadd(unsigned int a, unsigned int b) { return static_cast<unsigned int>((static_cast<unsigned long long>(a) + b + 1) >> 1); }
inline int __dp4a(int a, int b, int c) {
    int sum = c;
    for (int i = 0; i < 4; ++i) sum += static_cast<signed char>(a >> (8 * i)) * static_cast<signed char>(b >> (8 * i));
    return sum;
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    unsigned int sum = c;
    for (int i = 0; i < 4; ++i) sum += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return sum;
}
