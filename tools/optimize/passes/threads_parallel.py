"""threads_parallel: barrier-free kernels run the threads of a block in parallel when blocks are
too few for the cores."""

from __future__ import annotations

from ..analysis import code as C
from ..analysis.machine import cores
from ..base import Context, NotApplicable, Transform


def threads_parallel(ctx: Context, code: str) -> str | None:
    """With fewer blocks than cores, a barrier-free kernel without block state runs its thread
    loop as the parallel (and simd) loop instead of the block loop."""
    changed, why = False, []
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        if "cudacpu::" in body or "__shared__" in body or "tools.optimize" in body or len(C.thread_loop_bodies(body)) != 1:
            why.append(f"{k.name}: it has barriers, warp exchanges or shared memory, or was transformed already")
            continue
        if body.count("#pragma omp parallel for collapse(3) schedule(static)") != 1 or body.count("#pragma omp simd") != 1:
            why.append(f"{k.name}: its loops are not the lowering's one block loop and one thread loop")
            continue
        launches = ctx.launches_of(k.name)
        if not launches or any(_blocks(launch) >= cores() for launch in launches):
            why.append(f"{k.name}: its launches have at least as many blocks as the machine has cores ({cores()})")
            continue
        new = body.replace("#pragma omp parallel for collapse(3) schedule(static)", "// blocks in order: too few to share", 1)
        new = new.replace("#pragma omp simd", "#pragma omp parallel for simd schedule(static)", 1)
        code = C.with_body(code, k, new)
        changed = True
    if not changed:
        raise NotApplicable("; ".join(why) or "no kernel")
    return code


def _blocks(launch) -> int:
    (gx, gy, gz), _ = launch.dims()
    return gx * gy * gz


THREADS_PARALLEL = Transform("threads_parallel", "thread loop as the parallel loop (few blocks)", threads_parallel)
