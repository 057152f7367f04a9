"""threads_parallel: barrier-free kernels run the threads of a block in parallel when blocks are
too few for the cores. A pass over the IR (base.ir_transform)."""

from __future__ import annotations

from dataclasses import replace

from tools.cuda import kernel_ir as ir

from ..analysis import kernel_ir as K
from ..analysis.machine import cores
from ..base import Context, NotApplicable, ir_transform


def threads_parallel(ctx: Context, kernel: ir.Kernel) -> ir.Kernel:
    """With fewer blocks than cores, a kernel without block state whose threads run in one loop
    nest (no barrier splits them) runs that thread loop as the parallel (and simd) loop, the
    blocks in order, instead of the block loop."""
    if kernel.parallel_threads:
        raise NotApplicable("its thread loop is the parallel loop already")
    state = K.block_state(kernel)
    if kernel.spins_on_blocks or kernel.grid_sync:
        state.append("blocks that wait on each other")
    if any("cudacpu::" in leaf for leaf in K.leaves(kernel)) or any("cudacpu::" in c for c in kernel.compile_time):
        state.append("warp operations of the runtime")
    loops = K.thread_loops(kernel)
    if state or len(loops) != 1:
        why = ", ".join(state) if state else f"its threads run in {len(loops)} loop nests (barriers split them)"
        raise NotApplicable(f"it has {why}" if state else why)
    if not K.simd_regions(kernel) or any("#pragma omp" in leaf for leaf in K.leaves(kernel)):
        raise NotApplicable("its thread loop cannot be a simd loop (atomics, I/O, a jump, or an OpenMP pragma of its own)")
    launches = ctx.launches_of(kernel.name)
    if not launches or any(_blocks(launch) >= cores() for launch in launches):
        raise NotApplicable(f"its launches have at least as many blocks as the machine has cores ({cores()})")
    return replace(kernel, parallel_threads=True)


def _blocks(launch) -> int:
    (gx, gy, gz), _ = launch.dims()
    return gx * gy * gz


THREADS_PARALLEL = ir_transform("threads_parallel", "thread loop as the parallel loop (few blocks)", threads_parallel)
