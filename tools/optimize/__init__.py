"""The optimizer behind the `compiler` translator (issue 8).

    optimize(task, code, observations) -> (code, notes) | None     the translator's seam
    search(task, code, sandbox, budget=..., threads=...) -> SearchResult

The search applies transformations of the lowered code (the passes of tools/optimize/passes, in the
order of tools/optimize/pipeline.py), checks each variant against the task's reference
(tools.verify.check: several seeds, 1 and N threads), times the correct ones against the best so
far in the same run (both in one process, their calls alternating: tools/optimize/timing.py), and
keeps the fastest. What it learned comes back as `Observation(kind="optimization")`.

Layers, each importing only those below it (pyproject.toml's import-linter contracts check it):
search.py and timing.py; pipeline.py (TRANSFORMS, the passes in order); passes/ (one module per
pass or family; a composite pass such as specialize imports its members, no other pass); base.py
(Context, Transform) and analysis/ (what several passes share: the lowered code's text, guards,
expressions, the machine).

Transformations, in the order tried (each exact by construction, and still checked):
matrix_products first (a launch whose kernel is a polynomial of its float inputs and whose shapes
fit a matrix product, computed by a register-tiled loop nest: matrix_products.py; a step may
offer alternatives, here one per layout the shapes allow, and the first correct one is timed),
block_scans (a launch linear in its data that fits a segmented prefix sum, computed by one
running sum per segment: block_scans.py), the barrier/shuffle ones of sync_transforms.py, then
block_invariant (a stretch of a block's body that every block repeats identically, such as the
column sums of a fused `sum_broadcast`, run once per OpenMP thread and its shared and per-thread
results copied: block_invariant.py),
merge_blocks (consecutive blocks whose reads are contiguous across blockIdx.x run together as the
lanes of one SIMD loop, each with its own per-thread and shared state: merge_blocks.py),
grid_stride_flat (grid-stride loops -> one `omp parallel for simd` over the index space), specialize
(dead_exit_flags, the following six and vector_math together, because they pay off together: a guard-free loop vectorizes only with
the launch extents known and min/max as selects), specialize_parallel (the same without
serial_small_grids, where specialize was not kept: a small launch with much work per thread keeps
its cores), parallel_small_grids (where it was kept: the serial twin removed again, the launch
parallel, since serial_small_grids counts CUDA threads and not their work), tune_cpu (where g++
knows the CPU's instruction set but not its model, -march=native tunes for a generic x86 whose vectorizer refuses TVM's guarded reads next to plain ones: `#pragma
GCC target("tune=<the family it chose>")` first in the file), dead_exit_flags (the lowering's flags
for threads that returned neither tested where no region before has set one nor set where no later
region reads them: exit_flags.py), guarded_fission (a region's work for a few threads, `if
(threadIdx.x == 0) {...}` next to every thread's work, split into a loop of its own over just those
threads: thread_fission.py), memo_calls (expressions around costly
math calls that threads repeat with the same operands, computed once per block: memo_calls.py;
before index_runs, which takes the other kernels of a file but leaves no thread loop memo_calls
knows), index_runs (index_runs.py), wide_indices (subscripts built in unsigned 32-bit arithmetic
computed in 64 bits where their bound, checked per call, is below 2^31: wide_indices.py),
full_blocks (blocks where every bound guard such as `i < n` holds as in the interior of the problem,
checked per block for all its threads, run a copy with those guards folded to constants, then
wide_indices on it: full_blocks.py), stride_loops (a thread's loop over the block's or grid's
stride, `for (c = tid; c < n; c += blockDim.x)`, run trip by trip across the threads, the thread
loop innermost, each trip's thread loop over the threads whose trip it is where analysis/guards.py proves
them one range: stride_loops.py), uniform_loops (a thread's loop with the same trips in every thread,
such as nbody's over a shared tile, run around the thread loop, vectorized across the threads:
stride_loops.py), vector_math (calls of expf, logf, tanhf, pow, ... in vectorized loops made to
glibc's vector math library, up to 4 ulp from the scalar functions: only where the task's rtol >= 1e-5;
vector_math.py), owned_stores (a thread's own per-thread copies loaded before and
stored after each branch or inner loop of its thread loop, so that g++ updates locals with selects
instead of storing through masks, and a `__shared__` flag the threads only set to one literal set
once after the loop from an OR-reduced local: owned_stores.py; after stride_loops, whose loops it
would wrap), warp_lanes (a thread loop that computes lane and warp numbers, `threadIdx.x % 32`,
`(blockIdx.x * blockDim.x + threadIdx.x) / 32`, as a loop over the warps around one over the 32
lanes, the numbers read from the counters: warp_lanes.py; after the steps that look for the
lowering's thread loops), xor_pairs (a butterfly step `p = t ^ j; if (p > t) ...`, j proven a
power of two, runs over the pairs' lower threads only, run by run, the partner `t + j` affine;
short runs as groups with j a constant and a guarded swap as selects: xor_pairs.py), the barrier/shuffle ones one by one (uniform_exits among them: a loop with barriers
left on a shared flag by the whole block at once, without per-thread loop flags: uniform_exits.py),
threads_parallel (few blocks: the thread loop is the parallel loop), inline_minmax
(min/max/fminf/fmaxf as vectorizable selects with fmax's NaN rules),
serial_small_grids (a serial twin of the parallel loop nest taken for small launches: no OpenMP call
at all), dense_exchange (warp shuffles without round stamps where every lane writes),
launch_constants (the task's launch extents as constexpr), simd_on_y (blocks of shape (1, n, 1)),
restrict, unroll_loops, hoist_guards (a guard re-tested in every trip of a counted loop tested once
before it and joined with the same guard there: TVM's reductions become one guarded region),
guarded_thread_range (a region guarded by comparisons proven monotone in threadIdx.x runs over the
admitted range only, with no condition left, seeing through TVM's loops of one trip: analysis/guards.py),
dynamic_schedule, fast_math (only when the configuration allows it and the task's rtol >= 1e-4).
Compiler options travel in the code as `#pragma GCC optimize` (and `target`), since the result is
one translation unit. Every build has -fno-math-errno (tools/build.py: CUDA's math never sets
errno, and the check for it kept loops with sqrtf scalar); g++ 12 ignores it in a pragma.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

from tools.observations import Observation
from tools.spec import Task

from .analysis.code import applied, is_marked
from .base import Context, Transform
from .pipeline import TRANSFORMS
from .search import Budget, SearchResult, Step, search

__all__ = ["Budget", "Context", "Proposal", "SearchResult", "Step", "TRANSFORMS", "Transform", "applied",
           "exact_for_any_arguments", "optimize", "search"]


class Proposal(tuple):
    """`(code, notes)` as the translator's seam unpacks it, plus the search's observations and
    whether the code is faster than the input (else it is the input, marked as searched) and
    which budget, if any, ended the search."""

    observations: list[Observation]
    improved: bool
    stopped: str | None  # the budget that ended the search before it tried everything

    def __new__(cls, code: str, notes: str, observations: list[Observation], improved: bool = True,
                stopped: str | None = None):
        self = super().__new__(cls, (code, notes))
        self.observations = observations
        self.improved = improved
        self.stopped = stopped
        return self


def optimize(task: Task, code: str, observations: Sequence[Observation] = (), *, sandbox=None, budget: Budget | None = None,
             threads: int | None = None, fast_math_ok: bool = False, max_seconds: float | None = None) -> Proposal | None:
    """The seam of agent/translators/compiler.py: the fastest correct version found (the input
    itself, marked as searched, when no variant was both correct and faster) with notes and the
    search's observations; None when the code was already searched or no transformation applies.
    `fast_math_ok` is the configuration's `compiler.fast_math_ok` (never assumed); `max_seconds`
    shortens the search's wall time (what is left of the caller's budget). The task's
    `optimize_first` transformations are searched alone first; the whole search runs only where
    they gain nothing."""
    if is_marked(code):
        return None
    budget = budget or Budget()
    if max_seconds is not None:
        budget = replace(budget, max_seconds=min(budget.max_seconds, max_seconds))
    own = sandbox is None
    if own:
        from sandboxes import open_sandbox

        sandbox = open_sandbox("local")
    first = [t for name in task.optimize_first for t in TRANSFORMS if t.name == name]
    try:
        result = None
        if first:  # what paid on a sibling, alone: where it pays here too, the rest of the search is not needed
            started = time.monotonic()
            result = search(task, code, sandbox, budget=budget, threads=threads, fast_math_ok=fast_math_ok, transforms=first)
            if not result.improved:
                budget = replace(budget, max_seconds=max(0.0, budget.max_seconds - (time.monotonic() - started)))
                result = None
        from_sibling = result is not None
        if result is None:
            result = search(task, code, sandbox, budget=budget, threads=threads, fast_math_ok=fast_math_ok)
    finally:
        if own:
            sandbox.close()
    if not is_marked(result.code):
        return None
    summary = result.summary() + (" (what paid on a sibling specialization, tried first)" if from_sibling else "")
    notes = "\n".join([summary] + [o.message for o in result.observations])
    return Proposal(result.code, notes, result.observations, result.improved, result.stopped)


def exact_for_any_arguments(code: str) -> bool:
    """Whether the optimizer's output is correct for every argument value of the launch shape it
    was specialized to: each transformation it names is exact by construction (none `tested`).
    False for code the optimizer did not mark (an LLM's: it may have specialized on anything)."""
    names = applied(code)
    if names is None:
        return False
    by_name = {t.name: t for t in TRANSFORMS}
    return all(name in by_name and not by_name[name].tested for name in names)
