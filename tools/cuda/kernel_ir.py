"""The typed IR of one lowered kernel: what `lowering.KernelLowering` decides, made explicit.

`tools/cuda/printer.py` prints it as C++ text (one printer, the lowering's output byte for byte).
The IR is self-contained: plain dataclasses, no libclang cursor, no reference to the lowering.

- `Kernel`: the lowered function (its name, template header, parameters as typed symbols, the
  compile-time declarations it repeats above the block loop), the block's state (per-thread
  copies, exit flags, the warp exchange, dynamic shared memory), the `__shared__` buffers, and the
  body: block-level nodes.
- Block-level nodes: `Region` (the statements between two cuts, run in one loop nest over the
  block's threads, with the declarations hoisted above it), `Scope`, `If`, `Loop`, `Jump`,
  `ResetFlag`, `BarrierCheck`, `GridBarrier`, `AnyThread`.
- Thread-level nodes (inside a region's thread loops): `Statement` (the user's statement),
  `Declare`/`Assign` (a variable the lowering tracks), `SetFlag`, `LoopCondition`,
  `LockstepLoad`/`LockstepStore` (warp-synchronous volatile stores), `ExchangePut` (a lane's value
  for a warp exchange).
- Symbols: `Symbol` names a variable with its C++ type; `per_thread` marks one stored per
  thread (`v[tid]`), `reference` one that is an lvalue reference (stored as the address it binds).

Leaves are text in this step: the user's statements and expressions (conditions, initial values,
declarations as the kernel wrote them, with the lowering's renamings and per-thread references
already applied) are strings, rendered by the lowering while it builds the IR from libclang's
cursors. What the printer derives from the printed text (whether a region reads `threadIdx` or the
flat thread id, whether it is safe for `#pragma omp simd`, whether the block reads `blockIdx`) is
derived from these leaves, as before.

Facts that the emitted C++ carries as comments are attributes here (`SharedBuffer.dynamic`: the
`// extern __shared__` buffer carved from the launch's dynamic shared memory; a static one is
`// __shared__: one per block`); the printer still prints the comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Symbol:
    """A variable: its name as printed and its C++ type as written ("" where none is spelled)."""

    name: str
    type: str = ""
    per_thread: bool = False  # one copy per thread of the block: read as `name[tid]`
    reference: bool = False  # an lvalue reference kept per thread as the address it binds to


@dataclass(frozen=True)
class Names:
    """The lowering's own variables (names.py keeps device code off them)."""

    bx: str = "bx"
    by: str = "by"
    bz: str = "bz"
    tx: str = "tx"
    ty: str = "ty"
    tz: str = "tz"
    tid: str = "tid"
    nthreads: str = "nthreads"
    exited: str = "exited"
    warp: str = "warp"
    dynamic_shared: str = "dynamic_shared"


# ---- block state -------------------------------------------------------------------------


@dataclass(eq=False)
class PerThread:
    """`cudacpu::PerThread<element_type> symbol(nthreads);`: a variable live across a cut."""

    symbol: Symbol
    element_type: str


@dataclass(eq=False)
class WarpExchange:
    """`cudacpu::WarpExchange warp(sites, nthreads);`: the slots of the kernel's warp exchanges."""

    symbol: Symbol
    sites: int


@dataclass(eq=False)
class DynamicSharedStorage:
    """`cudacpu::SharedBuffer dynamic_shared(dynamicSharedBytes);`"""

    symbol: Symbol


@dataclass(eq=False)
class SharedBuffer:
    """A `__shared__` variable: one per block. `dynamic`: an `extern __shared__` array, a pointer
    (`symbol.type`) into the launch's dynamic shared memory; else `declaration` declares it (as
    written, or from its type) and `extents` are its array extents (of `symbol.type`)."""

    symbol: Symbol
    element_type: str
    extents: list[str] = field(default_factory=list)
    dynamic: bool = False
    declaration: str = ""


# ---- thread-level nodes -------------------------------------------------------------------


@dataclass(eq=False)
class Statement:
    """A user's statement (leaf text), written at `column` in its file (the printer re-indents it)."""

    text: str
    column: int = 1


@dataclass(eq=False)
class Declare:
    """The variable's declaration with its initial value (a per-thread copy takes the value)."""

    var: Symbol
    value: str


@dataclass(eq=False)
class Assign:
    """`var = value` where var is per thread (a non-per-thread var is declared with the value)."""

    var: Symbol
    value: str


@dataclass(eq=False)
class SetFlag:
    flag: Symbol
    value: str


@dataclass(eq=False)
class LoopCondition:
    """A masked loop's condition, for the threads still in it: `if (flag) flag = cond;`."""

    flag: Symbol
    condition: str


@dataclass(eq=False)
class LockstepLoad:
    """Every thread computes the value of a store to volatile memory (the first of two regions)."""

    temporary: Symbol
    value: str


@dataclass(eq=False)
class LockstepStore:
    """... then every thread stores it."""

    target: str
    temporary: Symbol


@dataclass(eq=False)
class ExchangePut:
    """A lane's value for warp exchange `site` (`intrinsic`, e.g. `__shfl_down_sync`). `value_type`
    None: a predicate (ballot, any, all, syncthreads_count...), put as an int."""

    site: int
    intrinsic: str
    value: str
    value_type: str | None


ThreadNode = Statement | Declare | Assign | SetFlag | LoopCondition | LockstepLoad | LockstepStore | ExchangePut


# ---- block-level nodes --------------------------------------------------------------------


@dataclass(eq=False)
class Mask:
    """A per-thread flag a region's threads must have (`taken`) or not have set to run."""

    flag: Symbol
    taken: bool


@dataclass(eq=False)
class Region:
    """The statements between two cuts (barriers, warp exchanges), run for each thread of the block
    in one loop nest (z, y, x). `hoisted`: declarations of block-level variables above the loops;
    `recomputed`: declarations repeated in this region's thread loop; `guards`: the masks a thread
    must pass; `exchange_begins`: the exchange sites opened before the loops; `needs_label`: a
    `return` in a loop jumps to `label` at the end of the thread's iteration; `sets_coordinates`: it
    calls a function that reads the global thread coordinates."""

    id: int
    items: list[ThreadNode] = field(default_factory=list)
    guards: list[Mask] = field(default_factory=list)
    hoisted: list[str] = field(default_factory=list)
    recomputed: list[str] = field(default_factory=list)
    exchange_begins: list[int] = field(default_factory=list)
    needs_label: bool = False
    sets_coordinates: bool = False

    @property
    def label(self) -> str:
        return f"next_thread_{self.id}"


@dataclass(eq=False)
class Scope:
    items: list["BlockNode"]


@dataclass(eq=False)
class If:
    """A block-uniform branch that contains cuts."""

    condition: str
    then: list["BlockNode"]
    orelse: list["BlockNode"] | None = None


@dataclass(eq=False)
class Loop:
    """A block-uniform loop that contains cuts: kind for | while | do (init, cond, inc as leaves)."""

    kind: str
    init: str | None
    condition: str | None
    increment: str | None
    body: list["BlockNode"]


@dataclass(eq=False)
class Jump:
    """`break` or `continue` of a block-level loop."""

    kind: str


@dataclass(eq=False)
class ResetFlag:
    """`flag.fill(false);`: a per-thread flag cleared for every thread."""

    flag: Symbol


@dataclass(eq=False)
class BarrierCheck:
    """A barrier under conditions that may differ between threads: count the threads that reached
    it; where some but not all did, say so, naming the barrier's `where` (file:line)."""

    masks: list[Mask]
    where: str


@dataclass(eq=False)
class GridBarrier:
    """Cooperative groups' grid.sync(), between two regions: the block waits for every other block
    of the grid (the kernel's `grid_sync`: each block runs on a thread of its own)."""


@dataclass(eq=False)
class AnyThread:
    """Leave a masked loop when no thread is still in it."""

    flag: Symbol


BlockNode = Region | Scope | If | Loop | Jump | ResetFlag | BarrierCheck | GridBarrier | AnyThread


# ---- the kernel ---------------------------------------------------------------------------


@dataclass(eq=False)
class Kernel:
    """One lowered kernel: `template_header` (with its newline, "" for a plain kernel) and
    `void name(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, parameters...)`.
    `parameters_as_written`: the parameter list's text (comments and line breaks kept).
    `sets_coordinates`: it calls functions that read the global `threadIdx`/`blockIdx`.
    `spins_on_blocks`: it waits on memory other blocks write (its blocks must run together).
    `grid_sync`: its blocks wait for each other at grid barriers (each runs on a thread of its own).
    `parallel_threads`: the blocks run in order and each region's thread loop is the parallel
    (and simd) loop instead (the optimizer's threads_parallel, for launches of few blocks; only
    for a kernel without block state, whose blocks are one parallel loop)."""

    name: str
    names: Names = field(default_factory=Names)
    template_header: str = ""
    parameters: list[Symbol] = field(default_factory=list)
    parameters_as_written: str = ""
    compile_time: list[str] = field(default_factory=list)
    per_thread: list[PerThread] = field(default_factory=list)
    exit_flags: PerThread | None = None
    warp_exchange: WarpExchange | None = None
    dynamic_shared: DynamicSharedStorage | None = None
    shared: list[SharedBuffer] = field(default_factory=list)
    sets_coordinates: bool = False
    spins_on_blocks: bool = False
    grid_sync: bool = False
    parallel_threads: bool = False
    body: list[BlockNode] = field(default_factory=list)

    def regions(self) -> list[Region]:
        """The regions, in order, at any depth."""
        found: list[Region] = []

        def walk(nodes) -> None:
            for node in nodes:
                if isinstance(node, Region):
                    found.append(node)
                elif isinstance(node, Scope):
                    walk(node.items)
                elif isinstance(node, If):
                    walk(node.then)
                    walk(node.orelse or [])
                elif isinstance(node, Loop):
                    walk(node.body)

        walk(self.body)
        return found
