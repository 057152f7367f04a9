"""Respelled twins of CUDA kernels: the same program, spelled as another author would.

`respell(source)` renames each kernel's locals to the names the lowering gives its own variables
(`tx`, `bx`, `tid`, `warp`, `exited`, ...), writes a for loop's `++i` as `i++` (and `i++` as `++i`), a
loop's stride over the block or grid (`i += blockDim.x * gridDim.x`) as a local declared before
the loop, and `for (`/`if (`/`while (` without the space. It edits the kernels' tokens where
libclang's cursors say what they are, so the twin means exactly what the original means. Issue 29: which optimizer passes apply to a
kernel must not depend on any of this.
"""

from __future__ import annotations

from clang import cindex as ci

from tools.cuda.frontend import parse_translation, walk_with_parents
from tools.cuda.lowering import KEYWORD_STATEMENTS, LOWERING_NAMES

K = ci.CursorKind

# every name the lowering gives its own variables (counters, thread id, exit flags, warp exchange, ...)
COUNTER_NAMES = tuple(LOWERING_NAMES)


def respell(source: str, filename: str = "kernel.cu") -> str:
    tr = parse_translation(source, filename)
    data = tr.source
    edits: dict[tuple[int, int], str] = {}  # (start, end) byte offsets -> replacement
    taken = set(tr.identifiers)
    spare = [n for n in COUNTER_NAMES if n not in taken]
    for kernel in tr.kernel_definitions:
        renames = {}
        for cursor in kernel.walk_preorder():
            if cursor.kind == K.VAR_DECL and spare and _spelled_at(cursor, data):
                renames[cursor.hash] = spare.pop(0)
                _replace_name(cursor, renames[cursor.hash], edits)
        for cursor in kernel.walk_preorder():
            ref = cursor.referenced
            if cursor.kind == K.DECL_REF_EXPR and ref is not None and ref.hash in renames:
                if not _spelled_at(cursor, data):  # a use inside a macro's expansion: leave the local's name
                    raise ValueError(f"{filename}: {cursor.spelling} is used in a macro")
                _replace_name(cursor, renames[ref.hash], edits)
        for loop, parent in walk_with_parents(kernel):
            if loop.kind == K.FOR_STMT:
                _swap_increment(loop, data, edits)
                if parent is not None and parent.kind == K.COMPOUND_STMT:
                    _stride_in_a_local(loop, data, edits, taken)
        for statement in (c for c in kernel.walk_preorder() if c.kind in KEYWORD_STATEMENTS):
            after = statement.extent.start.offset + len(KEYWORD_STATEMENTS[statement.kind])
            gap = len(data[after:]) - len(data[after:].lstrip(b" \t"))
            if gap and data[after + gap:after + gap + 1] == b"(":
                edits[(after, after + gap)] = ""
    out = data
    for (start, end), text in sorted(edits.items(), reverse=True):
        out = out[:start] + text.encode() + out[end:]
    return out.decode()


def _spelled_at(cursor: ci.Cursor, data: bytes) -> bool:
    """The cursor's name is written at its location (not produced by a macro)."""
    name = cursor.spelling.encode()
    start = cursor.location.offset
    return bool(name) and cursor.location.file is not None and data[start:start + len(name)] == name


def _replace_name(cursor: ci.Cursor, name: str, edits: dict) -> None:
    start = cursor.location.offset
    edits[(start, start + len(cursor.spelling.encode()))] = name


LAUNCH_EXTENTS = {"blockDim", "gridDim", "x", "y", "z"}


def _stride_in_a_local(loop: ci.Cursor, data: bytes, edits: dict, taken: set[str]) -> None:
    """`for (...; i += blockDim.x * gridDim.x)` as `const unsigned int stride = blockDim.x *
    gridDim.x; for (...; i += stride)`: a stride made of launch extents and literals only."""
    step = _increment(loop)
    if step is None or step.kind != K.COMPOUND_ASSIGNMENT_OPERATOR:
        return
    stride = list(step.get_children())[-1]
    start, end = stride.extent.start.offset, stride.extent.end.offset
    text = data[start:end].decode()
    words = {w for w in text.replace(".", " ").replace("*", " ").replace("(", " ").replace(")", " ").split()}
    if "+=" not in data[step.extent.start.offset:start].decode() or not words & {"blockDim", "gridDim"} \
            or not all(w in LAUNCH_EXTENTS or w.isdigit() for w in words):
        return
    name = next(f"stride{i}" for i in range(1, 100) if f"stride{i}" not in taken)
    taken.add(name)
    at = loop.extent.start.offset
    edits[(at, at)] = f"const unsigned int {name} = {text}; "
    edits[(start, end)] = name


def _swap_increment(loop: ci.Cursor, data: bytes, edits: dict) -> None:
    """`++i` <-> `i++` in the increment of a for loop."""
    step = _increment(loop)
    if step is None or step.kind != K.UNARY_OPERATOR:
        return
    start, end = step.extent.start.offset, step.extent.end.offset
    text = data[start:end].decode()
    for op in ("++", "--"):
        # the operator moves; the operand's own edits (a rename) stay where they are
        if text.startswith(op) and text[2:].strip().isidentifier():
            edits[(start, start + 2)] = ""
            edits[(end, end)] = op
        elif text.endswith(op) and text[:-2].strip().isidentifier():
            edits[(end - 2, end)] = ""
            edits[(start, start)] = op


def _increment(loop: ci.Cursor) -> ci.Cursor | None:
    """A for loop's increment: its last child before the body (None for a loop of one child)."""
    children = list(loop.get_children())
    return children[-2] if len(children) >= 2 else None
