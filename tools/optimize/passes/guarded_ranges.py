"""hoist_guards and guarded_thread_range: thread loops whose body is guarded run only the admitted
threads, with no condition left (the guards proven by analysis/guards.py)."""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.guards import GUARD_RANGE, RANGED_TX_LOOP, guarded_region, hoisted_guards, kernel_shapes
from ..base import Context, Transform

_TY_LOOP = re.compile(r"(?P<ind>[ \t]*)for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\n(?P<simd>[ \t]*#pragma omp simd\n)?"
                      r"(?P<pind>[ \t]*)for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{")


def hoist_guards(ctx: Context, code: str) -> str | None:
    """Guards that a counted loop in a thread loop re-tests every trip, moved out of it and joined
    with the same guard before it (guards.hoisted_guards): the region guarded_thread_range knows."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        new_body = body
        for open_index, close in reversed(C.thread_loop_bodies(body)):
            hoisted = hoisted_guards(body[open_index + 1:close])
            if hoisted is not None:
                new_body = new_body[:open_index + 1] + hoisted + new_body[close:]
        if new_body != body:
            code, changed = C.with_body(code, k, new_body), True
    return code if changed else None


def guarded_thread_range(ctx: Context, code: str) -> str | None:
    """A thread region `decls; if (G) S` (or `if (G) continue; S`) whose guard is proven to
    admit one contiguous range of threadIdx.x (tools/optimize/analysis/guards.py) runs over that range
    only, found per block by binary search on the guard, with the condition gone from the loop
    (vectorized where the region was: a loop without `omp simd` stays without it)."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        params = kernel_shapes(code, k)
        new, pos, edits = [], 0, 0
        for m in _TY_LOOP.finditer(body):
            close = C.matching_brace(body, m.end() - 1)
            region = guarded_region(body[m.end():close], params)
            if region is None:
                continue
            ind, pind = m["ind"], m["pind"]
            inner = pind + "    "
            loop = "\n".join([f"{ind}for (unsigned int ty = 0; ty < blockDim.y; ++ty) {{",
                              *(pind + line for line in region.bounds),
                              *([f"{pind}#pragma omp simd"] if m["simd"] else []),
                              pind + RANGED_TX_LOOP,
                              *(inner + line for line in region.body.split("\n")),
                              f"{pind}}}", f"{ind}}}"])
            new.append(body[pos:m.start()] + loop)
            pos, edits = close + 1, edits + 1
        if edits:
            new.append(body[pos:])
            code = C.with_body(code, k, "".join(new))
            changed = True
    if not changed:
        return None
    if "CUDAOPT_GUARD_RANGE" in code:
        return code
    return C.with_support(code, GUARD_RANGE)


HOIST_GUARDS = Transform("hoist_guards", "guards re-tested in every trip of a loop tested once", hoist_guards)
GUARDED_THREAD_RANGE = Transform("guarded_thread_range", "regions guarded by threadIdx.x run only the admitted threads",
                                 guarded_thread_range)
