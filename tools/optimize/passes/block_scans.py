"""Block scans recognized and computed as sequential scans per block (issue 8: "scans into
sequential scans per block").

On a GPU a block computes prefix sums of its segment in log-depth rounds: Hillis-Steele's
doubling offsets, Blelloch's up- and down-sweeps, warp shuffles. Emulated on a CPU, each round is
a pass over the block's threads, with barriers between. One running sum per segment does the
same job in one pass.

A launch is replaced by a scan when three things hold:
- the kernel is linear in the data it reads, and adds data to data (`is_linear`). A value read from memory, and every
  variable it flows into, only meets +, -, a product with a value that is not data, conversions
  to numbers, stores, and warp shuffles (data movement). It never meets a comparison, a condition,
  a subscript, a division or another call. So control flow and addresses depend on indices
  alone, and each output is an affine function of the inputs;
- it reads one buffer and stores one other buffer of the same element type. It reads the stored
  buffer back only where that buffer is an output or scratch, which hold nothing before the
  launch;
- a segmented scan fits the launch: segments of one or two elements per thread of a block, or
  the rows of a multi-dimensional output (a cumulative sum along its last axis), inclusive or
  exclusive, over the whole buffer or the first n elements for an integer argument n.
Each fitting scan is one alternative, and the search checks them in turn against the reference on
fresh random inputs. Two different affine functions of float inputs agree at random points with
probability zero, so the alternative that passes computes the kernel's scan. Of integer inputs, a
wrong one passes a seed with probability at most 1/64: the task's inputs must take at least 64
values (MIN_DISTINCT), and constant or arange fills are refused. Integer sums wrap as they do on the
GPU: they are computed in the unsigned type of the same width. Float sums are added in order,
where the GPU added them in a tree. Whether that stays within the task's tolerance is what the
check decides.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import product

import clang.cindex as ci

from tools.cuda import frontend as fe
from tools.spec import Task, c_type
from tools.verify.inputs import distinct_values

from ..analysis.launch_replacement import MIN_DISTINCT, alternatives, launch_calls, stored_params
from ..base import Context, Transform

K = ci.CursorKind
_SHUFFLES = re.compile(r"__shfl(?:_up|_down|_xor)?(?:_sync)?")
_CASTS = (K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.PAREN_EXPR)
_HOLDERS = (K.COMPOUND_STMT, K.DECL_STMT, K.VAR_DECL, K.MEMBER_REF_EXPR, K.INIT_LIST_EXPR)
_ADDRESSES = (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY, ci.TypeKind.POINTER)
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_STATEMENTS = (K.IF_STMT, K.WHILE_STMT, K.FOR_STMT, K.DO_STMT, K.SWITCH_STMT)
# Calls a linear kernel may make: barriers and fences, warp shuffles (data movement) and, on
# indices only, min and max. Any other function could read memory and hand back data unseen.
_CALLS = re.compile(r"__syncthreads|__syncwarp|__threadfence(?:_block)?|__activemask|min|max|umin|umax|"
                    + _SHUFFLES.pattern)
_DTYPES = {"int32": "uint32_t", "int64": "uint64_t", "uint32": "uint32_t", "uint64": "uint64_t",
           "float32": None, "float64": None}


# ---------------------------------------------------------------------------------------
# linearity


def is_linear(kernel: ci.Cursor) -> bool:
    """Whether every value the kernel reads from memory, and every variable it flows into, only
    meets what keeps the outputs affine functions of the inputs (see the module's docstring), and
    somewhere two such values are added (a copy, transpose or scaling is no scan)."""
    body = fe.body_of(kernel)
    if body is None:
        return False
    nodes = list(fe.walk_with_parents(body))
    if any(node.kind == K.CALL_EXPR and not _CALLS.fullmatch(fe.call_name(node) or "") for node, _ in nodes):
        return False
    data_vars = _data_variables(nodes)
    sums = False
    for node, parent in nodes:
        if parent is not None and node.kind.is_expression() and _is_data(node, data_vars):
            if not _data_use_ok(node, parent, data_vars):
                return False
        if node.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and fe.operator_of(node) in ("+", "+="):
            sums = sums or all(_is_data(c, data_vars) for c in node.get_children())
    return sums


def _key(decl: ci.Cursor) -> tuple:
    return (decl.spelling, decl.extent.start.offset)


def _is_data(node: ci.Cursor, data_vars: set) -> bool:
    """Whether an expression's value depends on what memory holds."""
    if node.kind == K.ARRAY_SUBSCRIPT_EXPR or (node.kind == K.UNARY_OPERATOR and fe.operator_of(node) == "*"):
        return node.type.get_canonical().kind not in _ADDRESSES  # buf[i] of `int buf[2][N]` is a row, not a read
    if node.kind == K.DECL_REF_EXPR:
        return node.referenced is not None and _key(node.referenced) in data_vars
    if not node.kind.is_expression():
        return False
    if node.kind == K.CONDITIONAL_OPERATOR:
        return any(_is_data(c, data_vars) for c in list(node.get_children())[1:])
    return any(_is_data(c, data_vars) for c in node.get_children())


def _data_variables(nodes) -> set:
    """Variables that hold data: initialized or assigned from data (to a fixed point)."""
    found: set = set()
    while True:
        before = len(found)
        for node, _ in nodes:
            if node.kind == K.VAR_DECL:
                init = [c for c in node.get_children() if c.kind.is_expression()]
                if init and _is_data(init[-1], found):
                    found.add(_key(node))
            elif node.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and fe.operator_of(node) in _ASSIGNMENTS:
                target, value = list(node.get_children())
                if target.kind == K.DECL_REF_EXPR and target.referenced is not None and _is_data(value, found):
                    found.add(_key(target.referenced))
        if len(found) == before:
            return found


def _data_use_ok(node: ci.Cursor, parent: ci.Cursor, data_vars: set) -> bool:
    kind = parent.kind
    if kind in _HOLDERS:
        return True
    if kind in _STATEMENTS:  # a statement of a branch or loop body: fine; its condition or header: not
        children = list(parent.get_children())
        if kind == K.IF_STMT:
            return node != children[0]
        return node == (children[0] if kind == K.DO_STMT else children[-1])
    if kind in _CASTS:
        return parent.type.get_canonical().kind != ci.TypeKind.BOOL
    if kind == K.CONDITIONAL_OPERATOR:
        return node != next(parent.get_children())  # a branch, not the condition
    if kind == K.BINARY_OPERATOR:
        op = fe.operator_of(parent)
        if op == "*":
            return sum(_is_data(c, data_vars) for c in parent.get_children()) == 1
        return op in ("+", "-", "=")
    if kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
        return fe.operator_of(parent) in ("+=", "-=")
    if kind == K.UNARY_OPERATOR:
        return fe.operator_of(parent) in ("-", "+", "++", "--")
    called = fe.called_function(parent)
    if called is not None and _SHUFFLES.fullmatch(called):
        args = [c for c in parent.get_children() if c.kind.is_expression()][1:]
        return len(args) >= 2 and node == args[1]  # the value moved, not the mask, lane or width
    return False


# ---------------------------------------------------------------------------------------
# the scans


@dataclass(frozen=True)
class Scan:
    """out[j] = sum of src over its segment up to j (inclusive) or before j (exclusive), for the
    first `count` elements, in segments of `segment` elements."""

    out: str
    src: str
    count: int
    segment: int
    inclusive: bool

    def describe(self) -> str:
        kind = "inclusive" if self.inclusive else "exclusive"
        return f"{self.out} = {kind} scan of {self.src} in segments of {self.segment} (first {self.count} elements)"


def scan_function(name: str, s: Scan, ctype: str, wrap: str | None) -> str:
    """Segments in parallel (where there are enough elements to pay for the threads), each one
    running sum; integer sums in the unsigned type `wrap`, so that they wrap as on the GPU."""
    acc = wrap or ctype
    step = "out[j] = (T)(sum += (A)in[j]);" if s.inclusive else "out[j] = (T)sum; sum += (A)in[j];"
    omp = "#pragma omp parallel for schedule(static)" if s.count >= 1 << 18 else ""
    return f"""
// tools.optimize: {s.describe()}
static void {name}(const {ctype}* __restrict__ in, {ctype}* __restrict__ out) {{
    typedef {ctype} T;
    typedef {acc} A;
    constexpr long N = {s.count}, L = {s.segment};
    {omp}
    for (long first = 0; first < N; first += L) {{
        A sum = 0;
        const long end = first + L < N ? first + L : N;
        for (long j = first; j < end; ++j) {{
            {step}
        }}
    }}
}}
"""


def _launch_scans(task: Task, launch, kernel: ci.Cursor) -> list[Scan]:
    buffers = {b.name: b for b in task.buffers}
    int_scalars = {s.name: s.value for s in task.scalars if s.dtype.startswith(("int", "uint"))}
    cursors = fe.params_of(kernel)
    params = [p.spelling for p in cursors]
    if len(params) != len(launch.args) or not _two_buffers(task, launch):
        return []
    by_param = {p: a for p, a in zip(params, launch.args) if isinstance(a, str) and a in buffers}
    if len(by_param) != 2:
        return []  # each of the two buffers passed once
    access = stored_params(kernel)
    if access is None:
        return []
    stored, used = access
    pointers = {p.spelling for p in cursors if p.type.get_canonical().kind == ci.TypeKind.POINTER}
    if len(stored) != 1 or not (stored | (used & pointers)) <= by_param.keys():
        return []  # one buffer stored, and every pointer it uses one of the task's buffers
    out = buffers[by_param[next(iter(stored))]]
    ins = [buffers[by_param[p]] for p in by_param if p not in stored and p in used]
    if len(ins) != 1 or out.dtype not in _DTYPES:
        return []
    if stored & used and out.role not in ("output", "scratch"):
        return []
    if not is_linear(kernel) or distinct_values(task, ins[0]) < MIN_DISTINCT:
        return []  # inputs of a few values could let a wrong affine map pass the random tests
    src, size = ins[0], out.size
    counts = [size] + sorted({int_scalars[a] for a in launch.args if isinstance(a, str) and a in int_scalars
                              and 0 < int_scalars[a] < size})
    grid, block = launch.dims()
    threads = math.prod(block)
    # a block's threads with one or two elements each, or the rows of the output (a cumsum's axis)
    segments = dict.fromkeys([threads, 2 * threads] + ([out.shape[-1]] if len(out.shape) > 1 else []))
    scans = []
    for count, segment, inclusive in product(counts, segments, (True, False)):
        covered = count if segment == out.shape[-1] else min(count, segment * math.prod(grid))
        scans.append(Scan(out.name, src.name, covered, segment, inclusive))
    return list(dict.fromkeys(scans))[:8]


def block_scans(ctx: Context, code: str) -> list[str] | None:
    """Every launch that reads one buffer, stores another of the same type, is linear in its data
    and fits a segmented scan, computed by a running sum per segment instead: one alternative per
    scan that fits (at most 8 in all); the search keeps the first that matches the reference."""
    task = ctx.task
    calls = launch_calls(code, task)
    if calls is None or not any(_two_buffers(task, launch) for launch in task.launches):
        return None  # no parse for a task without a launch that could be a scan
    return alternatives(code, task, calls, lambda launch, kernel: _launch_scans(task, launch, kernel),
                        lambda scans: _functions(task, scans), "a block scan")


def _two_buffers(task: Task, launch) -> bool:
    """Whether the launch uses two buffers of one type and size (a scan's input and output)."""
    names = {b.name: b for b in task.buffers}
    used = {a for a in launch.args if isinstance(a, str) and a in names}
    return len(used) == 2 and len({(names[a].dtype, names[a].size) for a in used}) == 1


def _functions(task: Task, scans: dict[int, Scan]) -> dict[int, tuple[str, str]]:
    dtypes = {b.name: b.dtype for b in task.buffers}
    out = {}
    for i, s in scans.items():
        name = f"cudaopt_scan_{i}"
        dtype = dtypes[s.out]
        out[i] = (scan_function(name, s, c_type(dtype), _DTYPES[dtype]), f"{name}({s.src}, {s.out});")
    return out


BLOCK_SCANS = Transform("block_scans", "the launch recognized as a block scan (linear in its data, a segmented "
                        "prefix sum fits it) and computed by one running sum per segment", block_scans, tested=True)
