"""Shared memory that threads exchange between two barriers, relying on lockstep warps.

Code written for warps that run in lockstep passes values between neighbouring threads through
shared memory with no barrier between the read and the write: `x = s[tx - 1]; ...; s[tx] = y;`
(a filter's pipeline of sections, a scan written for one warp). Every thread of a warp reads
before any of them writes. The lowering runs a block's threads one after another between two
barriers, so thread `tx` would read what thread `tx - 1` has already written in this interval.

The two orders differ exactly where, between the same two barriers, a thread reads a slot that a
thread running *before* it in the thread loop writes *after* that read in program order, or
reads, after a write, a slot of a thread running after it. With indices affine in the thread
coordinates (same coefficients in the read and the write), that is a read at an offset of the
written index whose sign says which thread's slot it is: `s[tx - 1]` read before `s[tx]` is
written. Such memory is run in lockstep, one statement at a time for the whole block, as the
lowering already does for `volatile` memory. Reads of a later thread's slot before it writes it
(`s[tid] += s[tid + stride]`, the tree reduction) agree in both orders and keep the fast form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from clang import cindex as ci

from . import frontend as fe

K = ci.CursorKind
THREAD = ("threadIdx.x", "threadIdx.y", "threadIdx.z")
Affine = dict[str, int]  # term -> coefficient; "" is the constant


@dataclass
class _Access:
    memory: int  # the variable's hash
    indices: list[Affine | None]
    at: int  # source offset where it happens (a store: the end of its assignment)
    epoch: int  # barriers passed before it
    write: bool


def exchanged_between_barriers(kernel: ci.Cursor, memory: set[int], written: set[int],
                               is_cut: Callable[[ci.Cursor], bool]) -> set[int]:
    """The variables of `memory` (shared arrays and pointers into them) through which a thread
    reads another thread's slot between two cuts (barriers, warp exchanges) in an order the
    lowering's thread loop would not reproduce. `written`: the hashes of variables assigned
    anywhere in the kernel (the others stand for their initializers)."""
    accesses = _accesses(kernel, memory, written, is_cut)
    found: set[int] = set()
    for w in (a for a in accesses if a.write):
        for r in accesses:
            if r.write or r.memory != w.memory or r.epoch != w.epoch or r.memory in found:
                continue
            sign = _offset_sign(w.indices, r.indices)
            if sign is not None and (sign < 0) == (r.at < w.at):
                found.add(r.memory)
    return found


def _accesses(kernel: ci.Cursor, memory: set[int], written: set[int], is_cut) -> list[_Access]:
    out: list[_Access] = []
    epoch = 0
    stores: dict[tuple[int, int], tuple[int, bool]] = {}  # a target's extent -> (where it is stored, also read)
    for c in kernel.walk_preorder():  # source order: a cut after an access comes later in the walk
        if c.kind == K.CALL_EXPR and is_cut(c):
            epoch += 1
        elif c.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR, K.UNARY_OPERATOR):
            op = fe.operator_of(c)
            if op in ("++", "--") or op.endswith("=") and op not in ("==", "!=", "<=", ">="):
                target = fe.strip(next(c.get_children()))
                stores[(target.extent.start.offset, target.extent.end.offset)] = (c.extent.end.offset, op != "=")
        elif c.kind == K.ARRAY_SUBSCRIPT_EXPR:
            base, indices = _subscripts(c)
            if base is None or base.referenced is None or base.referenced.hash not in memory:
                continue
            forms = [_affine(i, written, 0) for i in indices]
            store, read = stores.get((c.extent.start.offset, c.extent.end.offset), (None, True))
            if read:
                out.append(_Access(base.referenced.hash, forms, c.extent.start.offset, epoch, False))
            if store is not None:
                out.append(_Access(base.referenced.hash, forms, store, epoch, True))
    return out


def _subscripts(c: ci.Cursor) -> tuple[ci.Cursor | None, list[ci.Cursor]]:
    """`s[a][b]` -> (the reference to s, [a, b]); None where the base is no variable."""
    indices: list[ci.Cursor] = []
    while c.kind == K.ARRAY_SUBSCRIPT_EXPR:
        parts = list(c.get_children())
        if len(parts) != 2:
            return None, []
        indices.insert(0, parts[1])
        c = fe.strip(parts[0])
    return (c, indices) if c.kind == K.DECL_REF_EXPR else (None, [])


def _offset_sign(written: list[Affine | None], read: list[Affine | None]) -> int | None:
    """-1 where the read index is the written one moved to an earlier thread's slot, +1 to a
    later one's, None where it is the same slot or that cannot be told. Thread coordinates must
    have the same non-negative coefficients in both, so that a smaller index is an earlier thread."""
    if len(written) != len(read) or any(f is None for f in written + read):
        return None
    if not any(t in w for w in written for t in THREAD):
        return None  # every thread stores to the same place: no thread order to get wrong
    for w, r in zip(written, read):
        threads = {t: w[t] for t in THREAD if t in w}
        if threads != {t: r[t] for t in THREAD if t in r} or any(v < 0 for v in threads.values()):
            return None
        offset = {k: r.get(k, 0) - w.get(k, 0) for k in (set(w) | set(r)) - set(THREAD)}
        offset = {k: v for k, v in offset.items() if v}
        if offset:  # the first dimension that differs decides
            return -1 if all(v < 0 for v in offset.values()) else 1 if all(v > 0 for v in offset.values()) else None
    return None


def _affine(c: ci.Cursor, written: set[int], depth: int) -> Affine | None:
    """`c` as a sum of terms times integer coefficients: integer literals, thread coordinates,
    variables (a local never assigned again stands for its initializer), other subexpressions
    as opaque terms spelled by their tokens."""
    c = fe.strip(c)
    text = " ".join(t.spelling for t in c.get_tokens())
    if text in ("threadIdx . x", "threadIdx . y", "threadIdx . z"):
        return {text.replace(" ", ""): 1}
    if c.kind == K.INTEGER_LITERAL:
        try:
            return {"": int(text.rstrip("uUlL"), 0)}
        except ValueError:
            return None
    if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
        ref = c.referenced
        if ref.kind == K.VAR_DECL and ref.hash not in written and depth < 8 and not fe.is_shared(ref):
            init = [x for x in ref.get_children() if x.kind.is_expression()]
            if len(init) == 1:
                form = _affine(init[0], written, depth + 1)
                if form is not None:
                    return form
        return {f"var {ref.hash}": 1}
    parts = list(c.get_children())
    if c.kind == K.UNARY_OPERATOR and len(parts) == 1 and fe.operator_of(c) in ("-", "+"):
        inner = _affine(parts[0], written, depth)
        return None if inner is None else _scaled(inner, -1 if fe.operator_of(c) == "-" else 1)
    if c.kind == K.BINARY_OPERATOR and len(parts) == 2:
        op = fe.operator_of(c)
        a, b = (_affine(p, written, depth) for p in parts)
        if a is None or b is None:
            return None
        if op in ("+", "-"):
            out = dict(a)
            for k, v in b.items():
                out[k] = out.get(k, 0) + (v if op == "+" else -v)
            return {k: v for k, v in out.items() if v}
        if op == "*" and (set(a) <= {""} or set(b) <= {""}):
            factor, other = (a, b) if set(a) <= {""} else (b, a)
            return _scaled(other, factor.get("", 0))
        if op == "<<" and set(b) <= {""} and 0 <= b.get("", 0) < 31:
            return _scaled(a, 1 << b.get("", 0))
    return {f"expr {text}": 1} if text else None


def _scaled(form: Affine, by: int) -> Affine:
    return {k: v * by for k, v in form.items() if v * by}
