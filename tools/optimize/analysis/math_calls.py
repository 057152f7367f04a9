"""The libm calls that passes tell apart: costly ones (worth computing once instead of per thread)
and pure ones (on values only, no side effect)."""

# libm calls worth a table lookup (single instructions such as sqrtf, fabsf, fminf are not)
FLOAT_CALLS = ("expf", "exp2f", "expm1f", "logf", "log2f", "log10f", "log1pf", "erff", "erfcf", "tanhf", "sinhf",
               "coshf", "sinf", "cosf", "tanf", "asinf", "acosf", "atanf", "atan2f", "powf", "cbrtf")
DOUBLE_CALLS = tuple(name[:-1] for name in FLOAT_CALLS)
# calls a shared expression may also contain: pure, on values only
PURE_CALLS = set(FLOAT_CALLS + DOUBLE_CALLS) | {"fminf", "fmaxf", "fmin", "fmax", "min", "max", "fabsf", "fabs", "sqrtf",
                                                "sqrt", "floorf", "floor", "ceilf", "ceil", "truncf", "trunc", "roundf",
                                                "round", "rsqrtf", "copysignf", "copysign", "fmaf", "fma"}
