"""Device-code locals named like the lowering's own variables are renamed before it runs.

The lowering names its block and thread counters `bx`..`tz`, the flat thread id `tid`, and so
on (lowering.LOWERING_NAMES). A kernel that declares `int tx = threadIdx.x;`, the textbook
idiom, would push the counter to `tx_2`, and every later reader of the lowered code that knows
the counters by name (the optimizer's passes) would see another program. Renaming the user's
local instead (`tx` -> `tx_2`, every use with it) leaves the lowered code spelled the same
whatever the kernel's authors called their variables. Locals only: a parameter or a file-scope
variable keeps its name (host code and other files see those), and so does a local that a
macro's expansion names (its text is not where the cursor says).
"""

from __future__ import annotations

import clang.cindex as ci

from . import frontend as fe
from .lowering import LOWERING_NAMES

K = ci.CursorKind


def rename_clashing_locals(tr: fe.Translation) -> str | None:
    """The file's text with each device-code local named like one of the lowering's variables
    renamed; None where no local is."""
    edits = fe.SourceEdits(tr)
    taken = set(tr.identifiers) | set(LOWERING_NAMES)
    for fn in tr.walk_main():
        if fn.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) or not fn.is_definition() or not tr.in_main(fn) \
                or not (fe.is_kernel(fn) or fe.is_device(fn)):
            continue
        body = fe.body_of(fn)
        if body is None:
            continue
        uses: dict[int, list[ci.Cursor]] = {}  # a local's declaration, then its uses (which come after it)
        for c in body.walk_preorder():
            if c.kind == K.VAR_DECL and c.spelling in LOWERING_NAMES:
                uses[c.hash] = [c]
            elif c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.hash in uses:
                uses[c.referenced.hash].append(c)
        for cursors in uses.values():
            if not all(_named_here(tr, c) for c in cursors):
                continue
            name = _unused(cursors[0].spelling, taken)
            for c in cursors:
                start = c.location.offset
                edits.replace(start, start + len(c.spelling.encode()), name)
    return edits.apply() if edits.edits else None


def _named_here(tr: fe.Translation, cursor: ci.Cursor) -> bool:
    """The cursor's name is written in the parsed file where the cursor is (not by a macro)."""
    name = cursor.spelling.encode()
    start = cursor.location.offset
    return tr.in_main(cursor) and tr.source[start:start + len(name)] == name


def _unused(base: str, taken: set[str]) -> str:
    i = 2
    while f"{base}_{i}" in taken:
        i += 1
    taken.add(f"{base}_{i}")
    return f"{base}_{i}"
