"""The passes in the order the search tries them (TRANSFORMS): launches that are matrix products or
block scans replaced whole (matrix_products.py, block_scans.py), the barrier/shuffle patterns
applied together (sync_transforms.py), work every block repeats done once per worker
(block_invariant.py), small blocks merged into SIMD lanes once their shuffles are plain loops
(merge_blocks.py), then the structural steps that pay off most (flat grid-stride loops,
specialize, the CPU's own tuning, exit flags nobody reads, work for a few threads split off
(exit_flags.py, thread_fission.py), shared calls, index runs: index runs leave no thread loop for
shared calls, shared calls leave index runs the other kernels; then 64-bit subscripts), then
interior blocks without their bound guards (full_blocks.py; after specialize, whose guard-free
thread ranges a kept interior copy would otherwise hide: hardsigmoid_1 4x instead of 27x) and
loops striding over the threads run trip by trip across them, then those with the same trips in
every thread (both stride_loops.py), a thread's own copies loaded and stored once around its
branches and inner loops (owned_stores.py; after stride_loops, whose loops it would wrap), libm
calls from the vector library (vector_math.py; after the steps that vectorize the loops calling
them), thread loops that compute lane and warp numbers split into warps and lanes (warp_lanes.py;
after the steps that look for the lowering's thread loops), butterfly steps over the pairs' lower
threads (xor_pairs.py), then the barrier/shuffle patterns one by one, then the rest: structural
changes first, compiler flags last. All passes are in tools/optimize/passes.

threads_parallel is a pass over the kernels' IR (base.ir_transform: how they compose
with the text passes); scripts/compare_ported_passes.py checks that a pass ported to the IR applies
where its text version did after every step the search may keep before it. A pass that runs after
text passes which rewrite its kernels (dense_exchange after specialize, wide_indices, full_blocks,
stride_loops, owned_stores, perthread_stack, serial_small_grids, ...) waits for those to be ported:
simd_on_y, ported, lost HPCTransEval's sum_0 and mean_0 after sync_together, wide_indices,
lane_arrays, perthread_stack, serial_launches, dense_exchange or launch_constants.
"""

from __future__ import annotations

from .base import Transform
from .passes.block_invariant import BLOCK_INVARIANT
from .passes.block_scans import BLOCK_SCANS
from .passes.compiler_options import DYNAMIC_SCHEDULE, FAST_MATH, REASSOCIATE, TUNE_CPU, UNROLL_LOOPS
from .passes.dense_exchange import DENSE_EXCHANGE
from .passes.direct_shuffles import DIRECT_SHUFFLES
from .passes.exit_flags import DEAD_EXIT_FLAGS
from .passes.full_blocks import FULL_BLOCKS
from .passes.grid_stride_flat import GRID_STRIDE_FLAT
from .passes.guarded_ranges import GUARDED_THREAD_RANGE, HOIST_GUARDS
from .passes.index_runs import INDEX_RUNS
from .passes.inline_minmax import INLINE_MINMAX
from .passes.launch_constants import LAUNCH_CONSTANTS
from .passes.live_lanes import LIVE_LANES
from .passes.matrix_products import MATRIX_PRODUCTS
from .passes.memo_calls import MEMO_CALLS
from .passes.merge_blocks import MERGE_BLOCKS
from .passes.own_lane_simd import OWN_LANE_SIMD
from .passes.owned_stores import OWNED_STORES
from .passes.restrict import RESTRICT
from .passes.serial_launches import PARALLEL_SMALL_GRIDS, SERIAL_LAUNCHES, SERIAL_SMALL_GRIDS
from .passes.simd_on_y import SIMD_ON_Y
from .passes.specialize import SPECIALIZE, SPECIALIZE_PARALLEL
from .passes.stride_loops import STRIDE_LOOPS, UNIFORM_LOOPS
from .passes.sync_transforms import LANE_ARRAYS, PERTHREAD_STACK, SHARED_ATOMICS_PLAIN, SYNC_TOGETHER, WARP_ROUNDS
from .passes.thread_fission import GUARDED_FISSION
from .passes.threads_parallel import THREADS_PARALLEL
from .passes.uniform_exits import UNIFORM_EXITS
from .passes.vector_math import VECTOR_MATH
from .passes.warp_lanes import WARP_LANES
from .passes.wide_indices import WIDE_INDICES
from .passes.xor_pairs import XOR_PAIRS

TRANSFORMS: tuple[Transform, ...] = (
    # launches replaced whole, the barrier/shuffle patterns together, work shared between blocks
    MATRIX_PRODUCTS, BLOCK_SCANS, SYNC_TOGETHER, BLOCK_INVARIANT, MERGE_BLOCKS,
    # the structural steps that pay off most
    GRID_STRIDE_FLAT, SPECIALIZE, SPECIALIZE_PARALLEL, PARALLEL_SMALL_GRIDS, TUNE_CPU, DEAD_EXIT_FLAGS, GUARDED_FISSION,
    MEMO_CALLS, INDEX_RUNS, WIDE_INDICES,
    # interior blocks, loops over the threads, own copies, vector libm, warps and lanes, butterflies
    FULL_BLOCKS, STRIDE_LOOPS, UNIFORM_LOOPS, OWNED_STORES, VECTOR_MATH, WARP_LANES, XOR_PAIRS,
    # the barrier/shuffle patterns one by one
    WARP_ROUNDS, SHARED_ATOMICS_PLAIN, LANE_ARRAYS, PERTHREAD_STACK, UNIFORM_EXITS, DIRECT_SHUFFLES, LIVE_LANES, OWN_LANE_SIMD,
    # the rest: structural changes first, compiler flags last
    THREADS_PARALLEL, INLINE_MINMAX, SERIAL_SMALL_GRIDS, SERIAL_LAUNCHES, DENSE_EXCHANGE, LAUNCH_CONSTANTS, SIMD_ON_Y, RESTRICT,
    UNROLL_LOOPS, HOIST_GUARDS, GUARDED_THREAD_RANGE, DYNAMIC_SCHEDULE, REASSOCIATE, FAST_MATH,
)
