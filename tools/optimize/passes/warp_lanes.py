"""Thread loops split into warps and lanes, where the kernel computes its lane and warp numbers.

`int lane = threadIdx.x % 32; int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;` is
how CUDA code maps rows to warps and columns to lanes. In the lowering's thread loop over `tx`,
g++ cannot see that `tx / 32` is the same for 32 threads in a row: a warp's row subscript
`A[warp * cols + c]` reads as a gather, and a test of the warp (`if (warp >= rows) return;`)
as a mask. Where every launch's blockDim.x is a multiple of 32 (and the launch extents are the
task's constants, as specialize writes them), each such loop becomes a loop over the warps around
a loop over the 32 lanes, with `threadIdx.x % 32` read as the lane, `threadIdx.x / 32` as the warp
(`&`/`>>` forms too) and the global warp number as `blockIdx.x * (blockDim.x / 32) + warp`: the
same values in the same order, the warp's work now uniform and its lanes contiguous.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

WARP = 32
_THREAD = r"(?:\(\s*\(int\)\s*threadIdx\.x\s*\)|\(int\)\s*threadIdx\.x|threadIdx\.x)"
_GLOBAL = r"\(\s*(?:blockIdx\.x\s*\*\s*blockDim\.x|blockDim\.x\s*\*\s*blockIdx\.x)\s*\+\s*threadIdx\.x\s*\)"
_LANE_OPS = r"(?:%\s*(?:32|warpSize)|&\s*31)\b"
_WARP_OPS = r"(?:/\s*(?:32|warpSize)|>>\s*5)\b"
# The thread index with its operator, where C's precedence gives the operator the index alone:
# after `(`, `[`, `,`, `=`, `?`, `:` or `return` (not `n * threadIdx.x / 32`, `-threadIdx.x % 32`);
# `&` and `>>` also only where the expression ends (not `threadIdx.x & 31 == 0`, see _binds)
_BEFORE = r"(?:(?<=[(\[,=?:])|(?<=\breturn))\s*"
_AFTER_TIGHT = r"(?=\s*[)\],;])"  # & and >>: only where the expression ends
_AFTER_LOOSE = r"(?!\s*(?:[\[(.]|->|\+\+|--))"  # % and /: anything but a postfix
_IDIOMS = [
    (re.compile(_BEFORE + f"(?P<x>{_GLOBAL})\\s*{_WARP_OPS}" + _AFTER_LOOSE), "global"),
    (re.compile(_BEFORE + f"(?P<x>{_THREAD})\\s*(?P<op>{_LANE_OPS})"), "lane"),
    (re.compile(_BEFORE + f"(?P<x>{_THREAD})\\s*(?P<op>{_WARP_OPS})"), "warp"),
]
_SIMD_X = re.compile(r"(?P<pragma>#pragma omp simd[^\n]*\n[ \t]*)?" + re.escape(C.THREAD_LOOP_X))


def _binds(text: str, start: int, end: int, op: str) -> bool:
    """Does the operator at text[start:end] apply to the thread index alone (C's precedence)?"""
    if not op.lstrip().startswith(("&", ">>")):
        return bool(re.match(_AFTER_LOOSE, text[end:]))
    before = text[:start].rstrip()
    if before.endswith("=") and before[-2:-1] in "=<>!":
        return False  # `a == threadIdx.x & 31` compares first
    return bool(re.match(_AFTER_TIGHT, text[end:]))


def _rewrite_idioms(body: str) -> str:
    for pattern, kind in _IDIOMS:
        text = body  # what this pattern's matches lie in

        def sub(m: re.Match, kind: str = kind, text: str = text) -> str:
            if kind != "global" and not _binds(text, m.start(), m.end(), m["op"]):
                return m[0]
            lead = m[0][:m.start("x") - m.start()]
            cast = "(int)" if "(int)" in m["x"] else ""
            if kind == "global":
                return f"{lead}(blockIdx.x * (blockDim.x / {WARP}) + cudaopt_warp)"
            return f"{lead}{cast}{'cudaopt_lane' if kind == 'lane' else 'cudaopt_warp'}"
        body = pattern.sub(sub, text)
    return body


def _fits(extents: re.Match | None) -> bool:
    """Blocks of whole warps along x, fixed as constants; and the global warp number as
    blockIdx.x * (blockDim.x / 32) + warp exact: the unsigned sum blockIdx.x * blockDim.x +
    threadIdx.x does not wrap."""
    if extents is None:
        return False
    grid_x, block_x = int(extents[1]), int(extents[4])
    return block_x % WARP == 0 and grid_x * block_x <= 2**32


def warp_lanes(ctx: Context, code: str) -> str | None:
    """Thread loops that compute lane or warp numbers as a loop over warps around one over lanes (module doc)."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        extents = C.CONSTANT_EXTENTS.search(body)
        if not _fits(extents):
            continue
        out, pos = [], 0
        for m in _SIMD_X.finditer(body):
            close = C.matching_brace(body, m.end() - 1)
            inner = _rewrite_idioms(body[m.end():close])
            if inner == body[m.end():close]:
                continue
            indent = re.search(r"[ \t]*$", body[:m.start()])[0]
            pragma = (m["pragma"] or "").strip()
            head = [f"for (unsigned int cudaopt_warp = 0; cudaopt_warp < blockDim.x / {WARP}; ++cudaopt_warp)",
                    *([f"    {pragma}"] if pragma else []),
                    f"    for (unsigned int cudaopt_lane = 0; cudaopt_lane < {WARP}; ++cudaopt_lane) {{",
                    f"        const unsigned int tx = cudaopt_warp * {WARP} + cudaopt_lane;"]
            out.append(body[pos:m.start()] + f"\n{indent}".join(head) + inner)
            pos = close
        if out:
            guard = f"\n    static_assert(blockDim.x % {WARP} == 0, \"warp_lanes: blocks of whole warps along x\");"
            at = body.index("\n", extents.end())  # after the extents' line
            body = "".join(out) + body[pos:]
            code = C.with_body(code, k, body[:at] + guard + body[at:])
            changed = True
    return code if changed else None


WARP_LANES = Transform("warp_lanes", "thread loops that compute lane and warp numbers split into warps and lanes "
                       "(a warp's rows uniform, its lanes contiguous)", warp_lanes)
