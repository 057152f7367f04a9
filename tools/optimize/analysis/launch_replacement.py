"""Replacing a task's launches by functions of our own (matrix products, block scans).

The lowered translation unit ends with the task's entry point, one `cudacpu_kernels::K(...)`
call per launch. A replacement function goes right after the lowering's own support code: that
is before the CUDA file's text, whose macros (a `#define N 1024`, a `#define T 16`) would rename
its variables. A lowered kernel that no launch calls any more is removed (its declaration stays).
"""

from __future__ import annotations

import re
from itertools import product
from typing import Callable

import clang.cindex as ci

from tools.cuda import frontend as fe
from tools.spec import Launch, Task

from . import code as C

SUPPORT_END = "#endif  // CUDACPU_LOWERING_SUPPORT\n"
# A replacement is proven by random tests: two different low-degree polynomials agree on inputs
# drawn from k values with probability at most degree/k. Inputs must take at least this many.
MIN_DISTINCT = 64
ENTRY = "// Entry point of the task"
K = ci.CursorKind


def launch_calls(code: str, task: Task) -> list[re.Match] | None:
    """The entry point's kernel calls (offsets from the entry's comment), one per launch in order;
    None where the code is not shaped that way."""
    entry = code.find(ENTRY)
    calls = list(re.finditer(r"^[ \t]*cudacpu_kernels::(\w+)\(.*\);[ \t]*$", code[max(entry, 0):], re.M))
    if entry < 0 or SUPPORT_END not in code or [c[1] for c in calls] != [launch.kernel for launch in task.launches]:
        return None
    return calls


def replaced(code: str, task: Task, calls: list[re.Match], replacements: dict[int, tuple[str, str]], what: str) -> str:
    """The code with launch i's call replaced: replacements[i] = (the function's definition, the
    statement calling it). `what` names the replacement in the comment left where a kernel was."""
    entry, support = code.find(ENTRY), code.find(SUPPORT_END) + len(SUPPORT_END)
    functions, new_calls = [], {}
    for i, (function, call) in replacements.items():
        functions.append(function)
        new_calls[i] = re.match(r"[ \t]*", calls[i][0])[0] + call
    called = {launch.kernel for i, launch in enumerate(task.launches) if i not in replacements}
    launched = {launch.kernel for launch in task.launches}
    gone = [k for k in C.kernels(code[:entry]) if k.name not in called and k.name in launched]
    pieces, pos = [code[:support], "".join(functions)], support
    for k in sorted(gone, key=lambda k: k.start):
        if k.start < support:
            raise ValueError("a lowered kernel before the support code")
        pieces += [code[pos:k.start], f"// replaced by {what} (above)"]
        pos = k.end
    pieces.append(code[pos:entry])
    tail, last = code[entry:], 0
    for i, c in enumerate(calls):
        if i in new_calls:
            pieces += [tail[last:c.start()], new_calls[i]]
            last = c.end()
    pieces.append(tail[last:])
    return "".join(pieces)


def alternatives(code: str, task: Task, calls: list[re.Match], candidates: Callable[[Launch, ci.Cursor], list],
                 functions: Callable[[dict[int, object]], dict[int, tuple[str, str]]], what: str) -> list[str] | None:
    """The code with launches replaced, one version per combination of the launches' candidates
    (`candidates(launch, kernel)`, the likeliest first), at most 8, the likeliest combinations
    first; `functions` turns {launch index: candidate} into replacements. None where no launch has one."""
    tr = fe.parse_translation(task.source(), str(task.source_path() or f"{task.name}.cu"))
    choices = {}  # launch index -> its candidates
    for i, launch in enumerate(task.launches):
        kernel = tr.kernels.get(launch.kernel)
        found = candidates(launch, kernel) if kernel is not None else []
        if found:
            choices[i] = found
    if not choices:
        return None
    combos = sorted(product(*choices.values()), key=lambda combo: sum(choices[i].index(c) for i, c in zip(choices, combo)))
    return [replaced(code, task, calls, functions(dict(zip(choices, combo))), what) for combo in combos[:8]]


def stored_params(kernel: ci.Cursor) -> tuple[set[str], set[str]] | None:
    """(parameters the kernel stores through, parameters it uses otherwise); None where a local
    pointer could alias a parameter."""
    params = {p.spelling for p in fe.params_of(kernel)}
    body = fe.body_of(kernel)
    if body is None:
        return None
    stored: set[str] = set()
    store_refs: set[tuple[int, int]] = set()
    for node in body.walk_preorder():
        if node.kind == K.VAR_DECL and node.type.get_canonical().kind == ci.TypeKind.POINTER:
            return None
        target = _store_target(node)
        if target is not None:
            root = _pointer_root(target)
            if root is not None and root.spelling in params:
                stored.add(root.spelling)
                store_refs.add((root.extent.start.offset, root.extent.end.offset))
    used = {n.spelling for n in body.walk_preorder() if n.kind == K.DECL_REF_EXPR and n.spelling in params
            and (n.extent.start.offset, n.extent.end.offset) not in store_refs}
    return stored, used


def _store_target(node: ci.Cursor) -> ci.Cursor | None:
    """The left-hand side of an assignment (a struct copy included)."""
    if node.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and (
            node.kind == K.COMPOUND_ASSIGNMENT_OPERATOR or fe.operator_of(node) == "="):
        return next(node.get_children(), None)
    if node.kind == K.CALL_EXPR and fe.call_name(node) == "operator=":
        return next(node.get_children(), None)
    return None


def _pointer_root(node: ci.Cursor) -> ci.Cursor | None:
    """The variable a store target addresses: through subscripts, dereferences, casts and pointer
    arithmetic (never through a member of a local value: that is a local store)."""
    while True:
        if node.kind == K.DECL_REF_EXPR:
            return node if node.type.get_canonical().kind == ci.TypeKind.POINTER else None
        children = [c for c in node.get_children() if c.kind != K.TYPE_REF]  # a cast's type comes first
        if node.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.PAREN_EXPR, K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR) and children:
            node = children[0]
        elif node.kind == K.UNARY_OPERATOR and fe.operator_of(node) == "*" and children:
            node = children[0]
        elif node.kind == K.BINARY_OPERATOR and fe.operator_of(node) in ("+", "-") and len(children) == 2:
            pointers = [c for c in children if c.type.get_canonical().kind == ci.TypeKind.POINTER]
            if len(pointers) != 1:
                return None
            node = pointers[0]
        else:
            return None
