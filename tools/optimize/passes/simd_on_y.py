"""simd_on_y: blocks of shape (1, n, 1) vectorize over threadIdx.y."""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_SIMD_TX = re.compile(r"(?P<ty>[ \t]*for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\n)(?P<ind>[ \t]*)#pragma omp simd\n")


def simd_on_y(ctx: Context, code: str) -> str | None:
    """Blocks of shape (1, n, 1): the simd loop of a region is the y loop, not the 1-trip x loop."""
    changed = False
    for k in reversed(C.kernels(code)):
        launches = ctx.launches_of(k.name)
        if not launches or any(launch.dims()[1][0] != 1 or launch.dims()[1][1] < 4 for launch in launches):
            continue
        body = k.body(code)
        new = _SIMD_TX.sub(lambda m: m["ind"][:-4] + "#pragma omp simd\n" + m["ty"], body)
        if new != body:
            code = C.with_body(code, k, new)
            changed = True
    return code if changed else None


SIMD_ON_Y = Transform("simd_on_y", "simd over threadIdx.y for blocks of shape (1, n, 1)", simd_on_y)
