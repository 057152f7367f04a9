"""inline_minmax: min/max/fminf/fmaxf as selects g++ can vectorize (the library calls cannot be,
without fast-math)."""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

INLINE_MINMAX_HEADER = """// ---- tools.optimize: min/max as vectorizable selects with the same NaN rules --------------------
// fmax(x, y): y when x is NaN, x when y is NaN, else the larger (fmin likewise). Only the sign
// of a zero result may differ from the library's (max(-0, +0)), which compares equal.
namespace cudacpu_kernels {
template <class A, class B>
inline auto max(A a, B b) -> decltype(::max(a, b)) {
  using R = decltype(::max(a, b));
  if constexpr (std::is_floating_point<R>::value) {
    R x = static_cast<R>(a), y = static_cast<R>(b);
    return (y != y || x > y) ? x : y;
  } else {
    return ::max(a, b);
  }
}
template <class A, class B>
inline auto min(A a, B b) -> decltype(::min(a, b)) {
  using R = decltype(::min(a, b));
  if constexpr (std::is_floating_point<R>::value) {
    R x = static_cast<R>(a), y = static_cast<R>(b);
    return (y != y || x < y) ? x : y;
  } else {
    return ::min(a, b);
  }
}
inline float fmaxf(float x, float y) { return (y != y || x > y) ? x : y; }
inline float fminf(float x, float y) { return (y != y || x < y) ? x : y; }
}  // namespace cudacpu_kernels
"""


def inline_minmax(ctx: Context, code: str) -> str | None:
    """Kernels that call min/max/fminf/fmaxf get exact inline versions (see INLINE_MINMAX_HEADER)."""
    kernels = C.kernels(code)
    if not any(re.search(r"(?<![\w.:])(min|max|fminf|fmaxf)\s*\(", C.strip_comments(k.body(code))) for k in kernels):
        return None
    return None if "tools.optimize: min/max" in code else C.with_support(code, INLINE_MINMAX_HEADER)


INLINE_MINMAX = Transform("inline_minmax", "min/max/fminf/fmaxf as vectorizable selects (same NaN rules)", inline_minmax)
