"""simd_on_y: blocks of shape (1, n, 1) vectorize over threadIdx.y. A pass over the IR
(base.ir_transform)."""

from __future__ import annotations

import copy

from tools.cuda import kernel_ir as ir

from ..analysis import kernel_ir as K
from ..base import Context, NotApplicable, ir_transform


def simd_on_y(ctx: Context, kernel: ir.Kernel) -> ir.Kernel:
    """Blocks of shape (1, n, 1): the simd loop of a region is the y loop, not the 1-trip x loop."""
    launches = ctx.launches_of(kernel.name)
    if not launches or any(launch.dims()[1][0] != 1 or launch.dims()[1][1] < 4 for launch in launches):
        raise NotApplicable("its launches' blocks are not of shape (1, n, 1) with n >= 4")
    if kernel.parallel_threads:
        raise NotApplicable("its thread loop is the parallel loop (threads_parallel)")
    new = copy.deepcopy(kernel)
    regions = [r for r in K.simd_regions(new) if r.simd_axis == "x"]
    if not regions:
        raise NotApplicable("no thread loop that may be a simd loop over threadIdx.x")
    for region in regions:
        region.simd_axis = "y"
    return new


SIMD_ON_Y = ir_transform("simd_on_y", "simd over threadIdx.y for blocks of shape (1, n, 1)", simd_on_y)
