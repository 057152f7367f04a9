// CPU CUDA runtime: bit-exact conversions between float/double and the 16-bit formats
// (IEEE binary16 for __half, bfloat16 for __nv_bfloat16), in all four rounding modes, and
// the 8-bit formats of cuda_fp8.h (E4M3, E5M2), rounded to nearest even.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#ifdef __F16C__
#include <immintrin.h>  // hardware float <-> binary16 conversions (-mf16c, -march=native)
#endif

namespace cuda_cpu {

enum class Rounding { nearest_even, toward_zero, down, up };

inline uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof(u));
    return u;
}
inline float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
}

// A 16-bit format with `mantissa_bits` stored fraction bits and minimum normal exponent
// `min_exponent` (binary16: 10, -14; bfloat16: 7, -126).
struct NarrowFormat {
    int mantissa_bits;
    int min_exponent;
    double max_finite;
};
constexpr NarrowFormat binary16{10, -14, 65504.0};
constexpr NarrowFormat bfloat16{7, -126, 3.3895313892515355e38};

// Round d to the nearest value of the format in the given mode; the result is exactly
// representable as a float (and in the format), or +-inf, or NaN.
inline double round_to_format(double d, NarrowFormat format, Rounding mode) {
    if (std::isnan(d) || std::isinf(d) || d == 0.0) return d;
    int exponent = std::ilogb(d);
    if (exponent < format.min_exponent) exponent = format.min_exponent;  // subnormal spacing
    double ulp = std::ldexp(1.0, exponent - format.mantissa_bits);
    double scaled = d / ulp;  // exact: ulp is a power of two
    double whole;
    switch (mode) {
        case Rounding::nearest_even: whole = std::nearbyint(scaled); break;
        case Rounding::toward_zero: whole = std::trunc(scaled); break;
        case Rounding::down: whole = std::floor(scaled); break;
        default: whole = std::ceil(scaled); break;
    }
    double r = std::copysign(whole * ulp, d);
    if (std::fabs(r) > format.max_finite) {
        bool to_infinity = mode == Rounding::nearest_even || (mode == Rounding::up && d > 0) || (mode == Rounding::down && d < 0);
        r = std::copysign(to_infinity ? HUGE_VAL : format.max_finite, d);
    }
    return r;
}

// Exact float -> binary16 bits for a float that is representable (or inf/NaN).
inline uint16_t representable_float_to_half_bits(float f) {
    uint32_t x = float_bits(f);
    uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return 0x7fff;  // NaN: CUDA's canonical half NaN
    if (magnitude == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
    if (magnitude < 0x38800000u) {  // half subnormal: a multiple of 2^-24
        float units = bits_float(magnitude) * 16777216.0f;  // exact
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(units));
    }
    return static_cast<uint16_t>(sign | ((magnitude - 0x38000000u) >> 13));
}

// float -> binary16, round to nearest even: the hot path, by bit manipulation.
inline uint16_t float_to_half_bits_soft(float f) {
    uint32_t x = float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return 0x7fff;
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
    if (magnitude < 0x38800000u) {  // below 2^-14: subnormal or zero
        if (magnitude <= 0x33000000u) return static_cast<uint16_t>(sign);  // <= 2^-25 ties to zero
        uint32_t exponent = magnitude >> 23;
        uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - exponent;  // result in units of 2^-24
        uint32_t result = significand >> shift;
        uint32_t rest = significand & ((1u << shift) - 1u);
        uint32_t half_way = 1u << (shift - 1u);
        if (rest > half_way || (rest == half_way && (result & 1u))) ++result;
        return static_cast<uint16_t>(sign | result);
    }
    uint32_t result = (magnitude - 0x38000000u) >> 13;
    uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;  // carries into the exponent
    return static_cast<uint16_t>(sign | result);
}

inline float half_bits_to_float_soft(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t fraction = h & 0x3ffu;
    if (exponent == 0) {
        float value = static_cast<float>(fraction) * 5.9604644775390625e-8f;  // 2^-24
        return sign ? -value : value;
    }
    if (exponent == 31) return bits_float(sign | 0x7f800000u | (fraction << 13));
    return bits_float(sign | ((exponent + 112u) << 23) | (fraction << 13));
}

#ifdef __F16C__
inline uint16_t float_to_half_bits(float f) {
    if (f != f) return 0x7fff;  // CUDA's canonical NaN; the instruction would keep the payload
    return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline float half_bits_to_float(uint16_t h) { return _cvtsh_ss(h); }
#else
inline uint16_t float_to_half_bits(float f) { return float_to_half_bits_soft(f); }
inline float half_bits_to_float(uint16_t h) { return half_bits_to_float_soft(h); }
#endif

// d as a float rounded "to odd": toward zero, the last bit set where inexact. Rounding that float to
// nearest even in a format of at most 22 significant bits (binary16, bfloat16) rounds d itself: the
// float keeps whether d lay above, below or on a tie, so the two roundings make one (no double
// rounding), at the cost of a float conversion where round_to_format takes ilogb, ldexp, nearbyint.
inline float double_to_float_odd(double d) {
    float f = static_cast<float>(d);
    if (static_cast<double>(f) == d || d != d) return f;
    uint32_t bits = float_bits(f);
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --bits;  // rounded away from zero: one step back
    return bits_float(bits | 1u);
}

inline uint16_t double_to_half_bits(double d, Rounding mode) {
    if (mode == Rounding::nearest_even) return float_to_half_bits(double_to_float_odd(d));
    return representable_float_to_half_bits(static_cast<float>(round_to_format(d, binary16, mode)));
}

inline uint16_t float_to_bfloat16_bits(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;  // NaN: CUDA's canonical bfloat16 NaN
    x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even; overflow carries into inf
    return static_cast<uint16_t>(x >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

inline uint16_t double_to_bfloat16_bits(double d, Rounding mode) {
    if (std::isnan(d)) return 0x7fff;
    if (mode == Rounding::nearest_even) return float_to_bfloat16_bits(double_to_float_odd(d));
    return static_cast<uint16_t>(float_bits(static_cast<float>(round_to_format(d, bfloat16, mode))) >> 16);
}


// ---- 8-bit floats (cuda_fp8.h) ----
// E4M3: bias 7, no infinities, S.1111.111 is NaN, largest finite 448 (0x7E).
// E5M2: bias 15, IEEE-like (binary16 with the low 8 fraction bits cut): inf 0x7C, NaN above,
// largest finite 57344 (0x7B).
struct Fp8Format {
    int mantissa_bits;
    int exponent_bias;
    uint8_t max_finite_code;  // magnitude bits of the largest finite value
    uint8_t overflow_code;    // what overflow gives without saturation: NaN (E4M3) or inf (E5M2)
    uint8_t nan_code;         // the NaN a conversion produces (the sign bit is added)
};
constexpr Fp8Format fp8_e4m3{3, 7, 0x7E, 0x7F, 0x7F};
constexpr Fp8Format fp8_e5m2{2, 15, 0x7B, 0x7C, 0x7E};

// double -> fp8, rounded once to nearest even.  Out of range (after rounding, infinities
// included) gives the largest finite value with `saturate_finite`, else overflow_code; NaN
// stays NaN; the sign is kept, zeros included.
inline uint8_t double_to_fp8_bits(double d, Fp8Format format, bool saturate_finite) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    const uint8_t sign = static_cast<uint8_t>((bits >> 56) & 0x80u);
    const uint64_t magnitude = bits & 0x7fffffffffffffffull;
    if (magnitude > 0x7ff0000000000000ull) return static_cast<uint8_t>(sign | format.nan_code);
    const int exponent = static_cast<int>(magnitude >> 52) - 1023;
    const int min_normal_exponent = 1 - format.exponent_bias;
    uint64_t code;
    if (exponent > format.exponent_bias + 1) {
        code = 0xff;  // beyond every exponent field (infinity too): overflow below
    } else if (exponent >= min_normal_exponent) {
        // Keep exponent field and the top mantissa bits; round on the dropped bits.  A carry
        // out of the mantissa moves into the exponent field, which is the next value up.
        const int dropped_bits = 52 - format.mantissa_bits;
        code = (static_cast<uint64_t>(exponent + format.exponent_bias) << format.mantissa_bits) |
               ((magnitude & 0xfffffffffffffull) >> dropped_bits);
        const uint64_t rest = magnitude & ((1ull << dropped_bits) - 1);
        const uint64_t half_way = 1ull << (dropped_bits - 1);
        if (rest > half_way || (rest == half_way && (code & 1u))) ++code;
    } else {
        // Subnormal: a count of the smallest subnormal; scaling by a power of two is exact, and
        // rounding up to the smallest normal gives its code (exponent field 1, mantissa 0).
        const double smallest_subnormal_units = std::ldexp(std::fabs(d), format.mantissa_bits - min_normal_exponent);
        code = static_cast<uint64_t>(std::nearbyint(smallest_subnormal_units));
    }
    if (code > format.max_finite_code) code = saturate_finite ? format.max_finite_code : format.overflow_code;
    return static_cast<uint8_t>(sign | code);
}

// fp8 -> binary16 bits, exact (every fp8 value is a half).  As CUDA does: E5M2 is the top
// byte of a half; an E4M3 NaN becomes the canonical half NaN 0x7FFF.
inline uint16_t fp8_bits_to_half_bits(uint8_t b, Fp8Format format) {
    if (format.mantissa_bits == fp8_e5m2.mantissa_bits) return static_cast<uint16_t>(b << 8);
    const uint16_t sign = static_cast<uint16_t>((b & 0x80u) << 8);
    const unsigned exponent_field = (b >> 3) & 0xfu, fraction = b & 0x7u;
    if ((b & 0x7fu) == 0x7fu) return 0x7fff;
    if (exponent_field == 0) {
        if (fraction == 0) return sign;
        // fraction * 2^-9: a normal half; normalize on the leading bit of the fraction.
        unsigned leading = 2;
        while (!(fraction >> leading)) --leading;
        const unsigned half_exponent_field = leading - 9 + 15;
        const unsigned half_fraction = (fraction << (10 - leading)) & 0x3ffu;
        return static_cast<uint16_t>(sign | (half_exponent_field << 10) | half_fraction);
    }
    return static_cast<uint16_t>(sign | ((exponent_field - 7 + 15) << 10) | (fraction << 7));
}

inline float fp8_bits_to_float(uint8_t b, Fp8Format format) { return half_bits_to_float_soft(fp8_bits_to_half_bits(b, format)); }

}  // namespace cuda_cpu
