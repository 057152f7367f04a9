"""Schedules and compiler options carried by the code itself: `#pragma GCC optimize` (and
`target`) travel with the one translation unit."""

from __future__ import annotations

from ..analysis.machine import native_cpu
from ..base import Context, Transform


def dynamic_schedule(ctx: Context, code: str) -> str | None:
    """Blocks of unequal work (guards, data-dependent loops) balance better when handed out."""
    new = code.replace("collapse(3) schedule(static)", "collapse(3) schedule(dynamic, 4)")
    return new if new != code else None


def unroll_loops(ctx: Context, code: str) -> str | None:
    return _with_pragma(code, '#pragma GCC optimize("unroll-loops")')


def tune_cpu(ctx: Context, code: str) -> str | None:
    """Where g++ knows this CPU's instruction set but not its model, `-march=native` tunes for a
    generic x86, and with AVX-512 its vectorizer then refuses loops that mix masked and plain loads
    (TVM's guarded reads: "no vectype for stmt"); tuning for the family -march=native chose lets
    them vectorize. Placed first in the translation unit: a function whose target options differ
    from an inline helper's cannot inline it."""
    cpu = native_cpu()
    if cpu is None or cpu[0] == cpu[1] or cpu[0] in ("x86-64", "native"):
        return None
    pragma = f'#pragma GCC target("tune={cpu[0]}")'
    return None if pragma in code else f"{pragma}  // tools.optimize: -march=native tunes for a generic CPU here\n{code}"


def fast_math(ctx: Context, code: str) -> str | None:
    """Only where the configuration allows it and the task's tolerance is loose enough."""
    tol = ctx.task.tolerance
    if not ctx.fast_math_ok or tol.rtol < 1e-4:
        return None
    return _with_pragma(code, '#pragma GCC optimize("fast-math")')


def reassociate(ctx: Context, code: str) -> str | None:
    """Floating-point sums and products in another order (one chain split into vector lanes), as
    TVM's own CPU references do with rfactor; NaN and infinity keep their rules (not -ffast-math).
    Only where the task's tolerance is loose enough; the check on fresh seeds decides."""
    if ctx.task.tolerance.rtol < 1e-4:
        return None
    return _with_pragma(code, '#pragma GCC optimize("associative-math", "no-signed-zeros", "no-trapping-math")')


def _with_pragma(code: str, pragma: str) -> str | None:
    if pragma in code:
        return None
    first = code.find("// CUDA kernel")
    if first < 0:
        first = code.find("namespace cudacpu_kernels")
    if first < 0:
        return None
    return code[:first] + pragma + "\n" + code[first:]


UNROLL_LOOPS = Transform("unroll_loops", "-funroll-loops for the kernels", unroll_loops)
TUNE_CPU = Transform("tune_cpu", "tuned for the CPU family -march=native chose (its generic tuning refuses masked loads "
                     "next to plain ones)", tune_cpu)
DYNAMIC_SCHEDULE = Transform("dynamic_schedule", "blocks handed out dynamically", dynamic_schedule)
REASSOCIATE = Transform("reassociate", "floating-point reductions reassociated (tolerance allows it)", reassociate,
                        tested=True)
FAST_MATH = Transform("fast_math", "-ffast-math for the kernels (tolerance and configuration allow it)", fast_math,
                      tested=True)
