"""restrict: `__restrict__` on the pointer parameters that no two arguments of a launch alias."""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.launches import distinct_buffers
from ..base import Context, Transform


def restrict_pointers(ctx: Context, code: str) -> str | None:
    buffers = {b.name for b in ctx.task.buffers}
    changed = False
    for k in reversed(C.kernels(code)):
        params = C.split_params(k.params)
        launches = ctx.launches_of(k.name)
        if not launches or any(len(launch.args) != len(params) for launch in launches):
            continue
        pointer_idx = [i for i, p in enumerate(params) if p.count("*") == 1 and "__restrict" not in p and p.rstrip().split()[-1]
                       and re.search(r"\*\s*\w+$", p)]
        if not pointer_idx or not distinct_buffers(launches, pointer_idx, buffers):
            continue
        new_params = list(params)
        for i in pointer_idx:
            new_params[i] = re.sub(r"\*\s*(\w+)$", r"* __restrict__ \1", params[i])
        code = C.replace_span(code, k.params_start, k.params_start + len(k.params), "".join(", " + p for p in new_params))
        changed = True
    return code if changed else None


RESTRICT = Transform("restrict", "__restrict__ on non-aliased pointer parameters", restrict_pointers)
