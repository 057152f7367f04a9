"""Kernel parameters that the kernel assigns become locals of each thread.

In CUDA every thread has its own copy of a kernel's parameters, and real code moves them:
`d_psi = &d_psi[offset(blockIdx)]` shifts a pointer to the block's tile. The lowered kernel is
one C++ function whose parameters all blocks and threads share, so such an assignment would
be made by every thread of every block, on the same variable. `localize_assigned_parameters`
renames each assigned parameter in the kernel's signature and declares the original name at
the top of its body, initialised from it: the lowering then gives it one copy per thread, as it
does any local.
"""

from __future__ import annotations

import clang.cindex as ci

from . import frontend as fe

K = ci.CursorKind
ARG_SUFFIX = "_cudacpu_arg"
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="}
_QUALIFIERS = {"__restrict__", "__restrict", "restrict"}


def localize_assigned_parameters(tr) -> str | None:
    """The file's text with every kernel parameter the kernel assigns turned into a local copy;
    None where no kernel assigns one."""
    edits = fe.SourceEdits(tr)
    for kernel in tr.walk_main():
        if kernel.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) or not kernel.is_definition() \
                or not tr.in_main(kernel) or not fe.is_kernel(kernel):
            continue
        body = fe.body_of(kernel)
        if body is None:
            continue
        params = [c for c in kernel.get_children() if c.kind == K.PARM_DECL and c.spelling]
        assigned = _assigned(body, {p.hash for p in params})
        declarations = []
        for param in (p for p in params if p.hash in assigned):
            tokens = list(param.get_tokens())
            name = next((t for t in reversed(tokens) if t.spelling == param.spelling), None)
            if name is None:
                continue
            edits.replace(name.extent.start.offset, name.extent.end.offset, param.spelling + ARG_SUFFIX)
            declaration = " ".join(t.spelling for t in tokens if t.spelling not in _QUALIFIERS)
            declarations.append(f"{declaration} = {param.spelling}{ARG_SUFFIX};")
        if declarations:
            brace = body.extent.start.offset + 1
            edits.replace(brace, brace, " " + " ".join(declarations))
    return edits.apply() if edits.edits else None


def _assigned(body: ci.Cursor, params: set[int]) -> set[int]:
    """The parameters (by cursor hash of their declaration) that `body` assigns or increments."""
    found: set[int] = set()

    def target(expr: ci.Cursor) -> ci.Cursor | None:
        while expr is not None and expr.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
            children = list(expr.get_children())
            expr = children[0] if children else None
        return expr.referenced if expr is not None and expr.kind == K.DECL_REF_EXPR else None

    def visit(c: ci.Cursor) -> None:
        children = list(c.get_children())
        assigns = (c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR) and len(children) == 2
                   and fe.operator_of(c) in _ASSIGNMENTS) or (
            c.kind == K.UNARY_OPERATOR and children and fe.operator_of(c) in ("++", "--"))
        if assigns:
            ref = target(children[0])
            if ref is not None and ref.hash in params:
                found.add(ref.hash)
        elif c.kind == K.CALL_EXPR and (operand := _dependent_assignment(c, children)) is not None:
            ref = target(operand)
            if ref is not None and ref.hash in params:
                found.add(ref.hash)
        for child in children:
            visit(child)

    visit(body)
    return found


def _dependent_assignment(call: ci.Cursor, children: list[ci.Cursor]) -> ci.Cursor | None:
    """What `x += i`, `x = y`, `++x` or `x++` assigns where x's type depends on a template parameter
    (libclang shows such an operator as a call: the operand, the operator's name, the other operand)."""
    if len(children) not in (2, 3) or call.spelling not in ("", *(f"operator{op}" for op in (*_ASSIGNMENTS, "++", "--"))):
        return None
    tokens = list(call.get_tokens())
    if tokens and tokens[0].spelling in ("++", "--") and len(children) == 2:
        return children[-1]
    after = [t.spelling for t in tokens if t.extent.start.offset >= children[0].extent.end.offset]
    return children[0] if after and after[0] in (*_ASSIGNMENTS, "++", "--") else None
