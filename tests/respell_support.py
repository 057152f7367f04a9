"""Respelled twins of CUDA kernels: the same program, spelled as another author would.

`respell(source)` renames each kernel's locals to the names the lowering gives its own loop
counters (`tx`, `ty`, `bx`, ...: the lowering then renames its counters `tx_2`, as it must on any
such clash), writes a for loop's `++i` as `i++` (and `i++` as `++i`), and `for (`/`if (`/`while (`
without the space. It edits the kernels' tokens where libclang's cursors say what they are, so
the twin means exactly what the original means. Issue 29: which optimizer passes apply to a
kernel must not depend on any of this.
"""

from __future__ import annotations

from clang import cindex as ci

from tools.cuda.frontend import parse_translation

K = ci.CursorKind

# the lowering's own names (tools/cuda/lowering.py, Lowering.n): a user local with one of them
# moves the lowering's counter to a fresh name
COUNTER_NAMES = ("tx", "ty", "tz", "bx", "by", "bz", "tid")
KEYWORD_STATEMENTS = {K.FOR_STMT: "for", K.IF_STMT: "if", K.WHILE_STMT: "while", K.SWITCH_STMT: "switch"}


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
        for loop in (c for c in kernel.walk_preorder() if c.kind == K.FOR_STMT):
            _swap_increment(loop, data, edits)
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


def _swap_increment(loop: ci.Cursor, data: bytes, edits: dict) -> None:
    """`++i` <-> `i++` in the increment of a for loop (its last child before the body)."""
    children = list(loop.get_children())
    if len(children) < 2:
        return
    step = children[-2]
    if step.kind != K.UNARY_OPERATOR:
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
