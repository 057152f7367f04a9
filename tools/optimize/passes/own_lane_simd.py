"""Thread loops that touch only their own thread's copies get `#pragma omp simd` back.

The lowering leaves a thread loop scalar when it hands values to other threads (a warp
exchange's `put`). Once the sync transformations have turned those exchanges into plain
per-thread arrays, a loop whose body indexes them only as `[tid]` is the kind of loop the
lowering vectorizes itself: apply its own test (no atomics, I/O, fences, allocation, goto or
labels) and add the pragma. A loop that reads another thread's copy (`v[tid + 16]`, a lane-0
broadcast) or still calls the runtime's warp helpers stays as it is.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_NEST = re.compile(r"(?P<head>for \(unsigned int tz = 0; tz < blockDim\.z; \+\+tz\)\s*"
                   r"for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\s*)"
                   r"(?P<tx>for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{)")
# the lowering's test (tools/cuda/lowering.py: _simd_safe), plus what the sync transformations add
_UNSAFE = re.compile(r"\b(atomic\w*|printf|fprintf|goto|asm|__threadfence\w*|put|get|rand|malloc|new|break|cudaopt)\b"
                     r"|#pragma|\w+:;")
_TID_SUBSCRIPT = re.compile(r"\[([^\[\]]*\btid\b[^\[\]]*)\]")
MIN_SIMD_ROW = 8  # threads along x below which the loop stays scalar


def _own_lanes_only(body: str) -> bool:
    text = C.strip_comments(body)
    return not _UNSAFE.search(text) and all(m[1].strip() == "tid" for m in _TID_SUBSCRIPT.finditer(text))


def own_lane_simd(ctx: Context, code: str) -> str | None:
    """`#pragma omp simd` on thread loops that read and write only their own copies (module doc)."""
    changed = False
    for k in reversed(C.kernels(code)):
        launches = ctx.launches_of(k.name)
        if launches and all(launch.dims()[1][0] < MIN_SIMD_ROW for launch in launches):
            continue  # rows of a thread or two (blocks of shape (1, n)): a vector loop would only add overhead
        body = k.body(code)
        out, pos = [], 0
        for m in _NEST.finditer(body):
            close = C.matching_brace(body, m.end() - 1)
            if m.start() < pos or "tid" not in body[m.end():close] or not _own_lanes_only(body[m.end():close]):
                continue
            indent = re.search(r"[ \t]*$", m["head"])[0]
            out.append(body[pos:m.start("tx")] + f"#pragma omp simd\n{indent}")
            pos = m.start("tx")
        if out:
            code = C.with_body(code, k, "".join(out) + body[pos:])
            changed = True
    return code if changed else None


OWN_LANE_SIMD = Transform("own_lane_simd", "thread loops that touch only their own thread's copies vectorized",
                          own_lane_simd)
