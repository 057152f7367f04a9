"""dead_exit_flags: a thread's `return` remembered only as long as a later region can ask.

The lowering keeps `exited[tid]` for a kernel that returns before (or between) its barriers:
reset at the start of every block, set where a thread returns, tested at the top of every region.
In a region that runs once per block (not inside a loop of the block's body), the test is always
false when no earlier region of the block sets the flag, and setting it is dead when no later
code of the block reads it (the block's last region). Both go; the flag too once only its
declaration and reset are left. The branch and the byte stores they cost keep g++ from
vectorizing the thread loop (AVX2 has no masked byte store): early_return_tail's last region,
stencil_2d_jacobi's first.

Exact: the removed test read false for every thread, the removed store was never read.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_FLAG = re.compile(r"cudacpu::PerThread<bool> (?P<a>exited\w*)\(nthreads\);|cudaopt::Flag (?P<b>exited\w*)\[\d+\] = \{\};")
_NEST = re.compile(C.THREAD_NEST)
_LOOP_HEAD = re.compile(r"\b(for|while|switch)\s*$|\bdo\s*$")


def dead_exit_flags(ctx: Context, code: str) -> str | None:
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        new = body
        for m in _FLAG.finditer(body):
            new = _without_dead_uses(new, m["a"] or m["b"])
        if new != body:
            code, changed = C.with_body(code, k, new), True
    return code if changed else None


def _resets(flag: str) -> re.Pattern:
    return re.compile(rf"{flag}\.fill\(false\);|for \(unsigned int cudaopt_i = 0; cudaopt_i < nthreads; \+\+cudaopt_i\) "
                      rf"{flag}\[cudaopt_i\] = false;")


def _without_dead_uses(body: str, flag: str) -> str:
    test = f"if ({flag}[tid]) continue;"
    store = re.compile(rf"\b{flag}\[tid\] = true;\s*")
    mention = re.compile(rf"\b{flag}\b")
    resets = list(_resets(flag).finditer(body))
    for reset in reversed(resets):  # one per copy of the block's body (full_blocks makes two)
        scope_open = _enclosing_brace(body, reset.start())
        if scope_open is None:
            continue
        scope_close = C.matching_brace(body, scope_open)
        nests = [n for n in _NEST.finditer(body, reset.end(), scope_close)]
        for n in reversed(nests):  # later nests first: earlier positions stay valid
            if _in_loop(body, scope_open, n.start()):
                continue
            start, end = n.start(), C.matching_brace(body, n.end() - 1) + 1
            nest = body[start:end]
            before, after = body[reset.end():start], body[end:scope_close]
            if not store.search(before):
                nest = nest.replace(test, "")
            if not mention.search(after) and not mention.search(store.sub("", nest).replace(test, "")):
                nest = store.sub("", nest)
            body = body[:start] + nest + body[end:]
    if len(mention.findall(body)) == 1 + len(resets):  # the declaration and its resets: nothing reads it
        body = _FLAG.sub(lambda m: "" if (m["a"] or m["b"]) == flag else m[0], body)
        body = _resets(flag).sub("", body)
    return body


def _enclosing_brace(text: str, pos: int) -> int | None:
    depth = 0
    for i in range(pos - 1, -1, -1):
        if text[i] == "}":
            depth += 1
        elif text[i] == "{":
            if depth == 0:
                return i
            depth -= 1
    return None


def _in_loop(text: str, scope_open: int, pos: int) -> bool:
    """Whether pos may run more than once per run of the scope: inside a loop (or switch) of it, or
    the unbraced body of some statement (a nest that starts its own statement follows `;`, `{`, `}`)."""
    before = re.sub(r"(?:\n[ \t]*#pragma[^\n]*)+\s*$", "", text[:pos]).rstrip()
    if not before or before[-1] not in ";{}":
        return True
    opened = _enclosing_brace(text, pos)
    while opened is not None and opened > scope_open:
        head = text[:opened].rstrip()
        if head.endswith(")"):
            depth, i = 0, len(head) - 1
            while i >= 0:
                depth += {")": 1, "(": -1}.get(head[i], 0)
                if depth == 0:
                    break
                i -= 1
            head = head[:i]
        if _LOOP_HEAD.search(head):
            return True
        opened = _enclosing_brace(text, opened)
    return False


DEAD_EXIT_FLAGS = Transform("dead_exit_flags", "returned threads' flags neither tested where none is set yet nor set "
                            "where nothing reads them later", dead_exit_flags)
