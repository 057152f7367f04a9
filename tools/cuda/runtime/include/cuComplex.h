// CPU CUDA runtime: cuComplex.h, single and double complex numbers as float2 / double2.
#pragma once
#include "vector_types.h"

#include <cmath>

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

inline float cuCrealf(cuFloatComplex z) { return z.x; }
inline float cuCimagf(cuFloatComplex z) { return z.y; }
inline cuFloatComplex make_cuFloatComplex(float re, float im) { return make_float2(re, im); }
inline cuFloatComplex make_cuComplex(float re, float im) { return make_float2(re, im); }
inline cuFloatComplex cuConjf(cuFloatComplex z) { return make_float2(z.x, -z.y); }
inline cuFloatComplex cuCaddf(cuFloatComplex a, cuFloatComplex b) { return make_float2(a.x + b.x, a.y + b.y); }
inline cuFloatComplex cuCsubf(cuFloatComplex a, cuFloatComplex b) { return make_float2(a.x - b.x, a.y - b.y); }
inline cuFloatComplex cuCmulf(cuFloatComplex a, cuFloatComplex b) {
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// Division scaled by the larger component, as cuComplex does, to avoid overflow.
inline cuFloatComplex cuCdivf(cuFloatComplex a, cuFloatComplex b) {
    float scale = 1.0f / (std::fabs(b.x) + std::fabs(b.y));
    float ar = a.x * scale, ai = a.y * scale, br = b.x * scale, bi = b.y * scale;
    float inv = 1.0f / (br * br + bi * bi);
    return make_float2((ar * br + ai * bi) * inv, (ai * br - ar * bi) * inv);
}
inline float cuCabsf(cuFloatComplex z) { return std::hypot(z.x, z.y); }
inline cuFloatComplex cuCfmaf(cuFloatComplex x, cuFloatComplex y, cuFloatComplex d) { return cuCaddf(cuCmulf(x, y), d); }

inline double cuCreal(cuDoubleComplex z) { return z.x; }
inline double cuCimag(cuDoubleComplex z) { return z.y; }
inline cuDoubleComplex make_cuDoubleComplex(double re, double im) { return make_double2(re, im); }
inline cuDoubleComplex cuConj(cuDoubleComplex z) { return make_double2(z.x, -z.y); }
inline cuDoubleComplex cuCadd(cuDoubleComplex a, cuDoubleComplex b) { return make_double2(a.x + b.x, a.y + b.y); }
inline cuDoubleComplex cuCsub(cuDoubleComplex a, cuDoubleComplex b) { return make_double2(a.x - b.x, a.y - b.y); }
inline cuDoubleComplex cuCmul(cuDoubleComplex a, cuDoubleComplex b) {
    return make_double2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
inline cuDoubleComplex cuCdiv(cuDoubleComplex a, cuDoubleComplex b) {
    double scale = 1.0 / (std::fabs(b.x) + std::fabs(b.y));
    double ar = a.x * scale, ai = a.y * scale, br = b.x * scale, bi = b.y * scale;
    double inv = 1.0 / (br * br + bi * bi);
    return make_double2((ar * br + ai * bi) * inv, (ai * br - ar * bi) * inv);
}
inline double cuCabs(cuDoubleComplex z) { return std::hypot(z.x, z.y); }
inline cuDoubleComplex cuCfma(cuDoubleComplex x, cuDoubleComplex y, cuDoubleComplex d) { return cuCadd(cuCmul(x, y), d); }

inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex z) { return make_double2(z.x, z.y); }
inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex z) { return make_float2(static_cast<float>(z.x), static_cast<float>(z.y)); }
