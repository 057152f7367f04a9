"""specialize and specialize_parallel: the passes that pay off together more than one by one,
applied as one variant (a composite pass: it imports its members)."""

from __future__ import annotations

from ..base import Context, Transform, together
from .exit_flags import DEAD_EXIT_FLAGS
from .guarded_ranges import GUARDED_THREAD_RANGE, HOIST_GUARDS
from .inline_minmax import INLINE_MINMAX
from .launch_constants import LAUNCH_CONSTANTS
from .restrict import RESTRICT
from .serial_launches import SERIAL_SMALL_GRIDS
from .vector_math import VECTOR_MATH

MEMBERS = {t.name: t for t in (DEAD_EXIT_FLAGS, HOIST_GUARDS, GUARDED_THREAD_RANGE, LAUNCH_CONSTANTS, INLINE_MINMAX,
                               SERIAL_SMALL_GRIDS, RESTRICT, VECTOR_MATH)}
SPECIALIZE_MEMBERS = tuple(MEMBERS)  # their names, in the order applied


def specialize(ctx: Context, code: str, members: tuple[str, ...] = SPECIALIZE_MEMBERS) -> str:
    """The transformations that pay off together more than one by one (a guard-free thread loop
    only vectorizes with the launch extents known and min/max as selects; a small launch only
    gains once the OpenMP call is gone) applied as one variant: every member named that applies."""
    return together(ctx, code, (MEMBERS[name] for name in members))


def specialize_parallel(ctx: Context, code: str) -> str:
    """specialize without serial_small_grids: tried where specialize was not kept (a launch with few
    threads but much work per thread loses its second core when run serially)."""
    return specialize(ctx, code, tuple(name for name in SPECIALIZE_MEMBERS if name != "serial_small_grids"))


SPECIALIZE = Transform("specialize", "launch extents as constants, guard-free thread ranges, min/max as selects, small "
                       "launches serial, __restrict__, vector math where the tolerance allows, together", specialize)
SPECIALIZE_PARALLEL = Transform("specialize_parallel", "launch extents as constants, guard-free thread ranges, min/max as "
                                "selects, __restrict__, vector math where the tolerance allows, together (launches stay "
                                "parallel)", specialize_parallel)
