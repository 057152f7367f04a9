"""vector_math: the kernels' calls of expf, logf, sinf, tanhf, pow, ... in vectorized loops made to
glibc's vector math library (libmvec), declared `#pragma omp declare simd` as glibc's own headers
do only under -ffast-math.

Without it a loop that calls expf vectorizes everything but the call: each lane's expf is a
scalar call (softmax_rows: half its time in __expf_fma). libmvec's functions are not the scalar
ones bit for bit: up to 4 ulp apart (expf: 3 ulp on 33M arguments, 11% of them differ at all;
NaN, infinities, overflow and underflow the same), as CUDA's own expf is 2 ulp from the exact
value and __expf more. So only where the task's tolerance is loose enough: rtol >= 1e-5, some 80
ulp of a float, 20 times the difference. No reassociation, no -ffast-math: every other operation
stays as it was.
"""

from __future__ import annotations

import functools
import os
import re

from ..analysis import code as C
from ..base import Context, Transform

# libmvec's functions (glibc 2.22; the second set since 2.35), float and double
_SINCE_2_22 = ("exp", "log", "sin", "cos", "pow")
_SINCE_2_35 = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cosh", "erf", "erfc", "exp10", "exp2",
               "expm1", "log10", "log1p", "log2", "sinh", "tan", "tanh", "atan2", "hypot")
_TWO_ARGS = {"pow", "atan2", "hypot"}
# the runtime's CUDA intrinsics and the libm functions they call (cuda_cpu/device_math.h)
_INTRINSICS = {"__expf": "expf", "__exp10f": "powf", "__logf": "logf", "__log2f": "log2f", "__log10f": "log10f",
               "__powf": "powf", "__sinf": "sinf", "__cosf": "cosf", "__tanf": "tanf", "__sincosf": "sinf cosf"}
_MARK = "// ---- tools.optimize: math calls from glibc's vector library"
MIN_RTOL = 1e-5


def vector_math(ctx: Context, code: str) -> str | None:
    if ctx.task.tolerance.rtol < MIN_RTOL or _MARK in code:
        return None
    kernels = code[code.find("// CUDA kernel"):] if "// CUDA kernel" in code else ""
    called = set(re.findall(r"(?<![\w.:])([a-z_][a-z0-9_]*)\s*\(", C.strip_comments(kernels)))
    for name in called & set(_INTRINSICS):
        called |= set(_INTRINSICS[name].split())
    declared = [(base, suffix, t) for base in _available() for suffix, t in (("f", "float"), ("", "double"))
                if base + suffix in called]
    if not declared:
        return None
    lines = [_MARK, 'extern "C" {']
    for base, suffix, t in declared:
        args = ", ".join([t] * (2 if base in _TWO_ARGS else 1))
        lines += ["#pragma omp declare simd notinbranch", f"{t} {base}{suffix}({args}) noexcept;"]
    return C.with_support(code, "\n".join(lines + ["}"]))


@functools.cache
def _available() -> tuple[str, ...]:
    """The functions this machine's glibc has vector versions of."""
    try:
        version = tuple(int(p) for p in os.confstr("CS_GNU_LIBC_VERSION").split()[1].split(".")[:2])
    except (ValueError, OSError, IndexError, AttributeError):
        return ()
    return _SINCE_2_22 + (_SINCE_2_35 if version >= (2, 35) else ()) if version >= (2, 22) else ()


VECTOR_MATH = Transform("vector_math", "expf, logf, tanhf, ... from glibc's vector math library in vectorized loops "
                        "(up to 4 ulp from the scalar ones; where the task's rtol >= 1e-5)", vector_math)
