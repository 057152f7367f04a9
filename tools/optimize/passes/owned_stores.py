"""owned_stores: a thread's own per-thread copies read once before a compound statement of its
thread loop and written once after it, instead of inside it (see tools/optimize/__init__.py).

`if (v[tid] != 1u) { v[tid] = f(v[tid]); steps[tid]++; }` in a `#pragma omp simd` thread loop
makes g++ store through masks (slow on some CPUs: the Collatz loop of barrier_while_break 4x
slower than with selects) or leave the loop scalar. With
`auto own_v = v[tid]; ... if (own_v != 1u) { own_v = f(own_v); ... } v[tid] = own_v;`
the branch only updates locals, which g++ turns into selects, and every lane stores. Exact: in a
thread loop where a per-thread copy is only ever indexed by the thread's own `tid`, no other
thread reads or writes that element there, so storing back the value just read changes nothing.
Statements that can leave the thread's iteration (`continue`, `goto`, `return`) are left alone.

In the same loop, a `__shared__` scalar that the threads only ever set to one literal
(`found = 1;`, never read there) is set once after the loop when some thread would have set it,
by an OR-reduced flag: the threads' writes all store that literal, so their order does not
matter.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_OWN_DECL = re.compile(r"(?:cudacpu::PerThread<(?P<pt>[^;]*)> (?P<a>\w+)\(nthreads\);|"
                       r"cudaopt::(?:Id<(?P<st>[^;]*)>|Flag) (?P<b>\w+)\[\d+\] = \{\};)")
_LEAVES = re.compile(r"\b(continue|goto|return)\b")
_LITERAL = r"(?:true|false|-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?[fFuUlL]*)"


def owned_stores(ctx: Context, code: str) -> str | None:
    """In every thread loop: own copies loaded and stored around its branches and inner loops, and
    shared flags set once after it (module docstring)."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        own = {m["a"] or m["b"] for m in _OWN_DECL.finditer(body) if "[" not in (m["pt"] or m["st"] or "")}
        flags = C.shared_scalars(body)
        new = body
        for open_index, close in reversed(C.thread_loop_bodies(body)):
            loop = _rewritten_loop(new, open_index, close, own, flags)
            if loop is not None:
                new = loop
        if new != body:
            code, changed = C.with_body(code, k, new), True
    return code if changed else None


def _rewritten_loop(body: str, open_index: int, close: int, own: set[str], flags: set[str]) -> str | None:
    loop = body[open_index + 1:close]
    mine = {x for x in own if re.search(rf"\b{x}\b", loop) and _only_own(loop, x)}
    new = _with_local_copies(loop, mine) if mine else loop
    before, after, reductions = [], [], []
    for flag in sorted(flags):
        sets = re.findall(rf"(?<![\w.]){flag}\s*=\s*({_LITERAL})\s*;", new)
        if not sets or len(set(sets)) != 1 or len(re.findall(rf"(?<![\w.]){flag}\b", new)) != len(sets):
            continue
        wrote = f"cudaopt_set_{flag}"
        new = re.sub(rf"(?<![\w.]){flag}\s*=\s*{re.escape(sets[0])}\s*;", f"{wrote} = 1;", new)
        before.append(f"int {wrote} = 0;")
        after.append(f"if ({wrote}) {flag} = {sets[0]};")
        reductions.append(wrote)
    if new == loop:
        return None
    nest = _nest_start(body, open_index)
    if nest is None:
        return None
    indent = body[body.rfind("\n", 0, nest) + 1:nest]
    head = body[nest:open_index + 1]
    if reductions and "#pragma omp simd" in head:
        head = head.replace("#pragma omp simd", f"#pragma omp simd reduction(|:{', '.join(reductions)})", 1)
    prologue = "".join(f"{line}\n{indent}" for line in before)
    epilogue = "".join(f"\n{indent}{line}" for line in after)
    if before:  # a scope of its own: the flags' names repeat from loop to loop
        prologue, epilogue = "{\n" + indent + prologue, epilogue + "\n" + indent + "}"
    return body[:nest] + prologue + head + new + body[close:close + 1] + epilogue + body[close + 1:]


def _nest_start(body: str, open_index: int) -> int | None:
    """Offset of the `for (unsigned int tz` that begins the nest of the tx loop opening at open_index."""
    start = body.rfind("for (unsigned int tz = 0; tz < blockDim.z; ++tz)", 0, open_index)
    if start < 0 or not re.fullmatch(C.THREAD_NEST, body[start:open_index + 1]):
        return None
    return start


def _only_own(loop: str, name: str) -> bool:
    """Is every use of `name` in the loop the thread's own element `name[tid]`?"""
    return len(re.findall(rf"(?<![\w.]){name}\b", loop)) == len(re.findall(rf"(?<![\w.]){name}\[tid\]", loop))


def _with_local_copies(loop: str, mine: set[str]) -> str:
    stmts = C.statements(loop)
    if stmts is None:
        return loop
    out, last = [], 0
    for start, end, compound in stmts:
        stmt = loop[start:end]
        if not compound or _LEAVES.search(stmt) or "cudaopt_own_" in stmt:  # (done already)
            continue
        written = sorted(x for x in mine if re.search(rf"(?<![\w.]){x}\[tid\](?:\.\w+)*\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                                                       rf"(?:\+\+|--)\s*{x}\[tid\]|(?<![\w.]){x}\[tid\](?:\.\w+)*\s*(?:\+\+|--)",
                                                       stmt))
        if not written:
            continue
        read = sorted(x for x in mine if x not in written and re.search(rf"(?<![\w.]){x}\[tid\]", stmt))
        indent = loop[loop.rfind("\n", 0, start) + 1:start]
        local = stmt
        for x in written + read:
            local = re.sub(rf"(?<![\w.]){x}\[tid\]", f"cudaopt_own_{x}", local)
        loads = "".join(f"auto cudaopt_own_{x} = {x}[tid];\n{indent}" for x in written)
        loads += "".join(f"const auto cudaopt_own_{x} = {x}[tid];\n{indent}" for x in read)
        stores = "".join(f"\n{indent}{x}[tid] = cudaopt_own_{x};" for x in written)
        out += [loop[last:start], "{\n", indent, loads, local, stores, "\n", indent, "}"]
        last = end
    return "".join(out) + loop[last:] if out else loop


OWNED_STORES = Transform("owned_stores", "a thread's own copies read before and written after each branch or inner loop of "
                         "its thread loop (selects, not masked stores), shared flags set once per loop", owned_stores)
