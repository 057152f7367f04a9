"""guarded_fission: a thread region that mixes work for a few threads (`if (threadIdx.x == 0) {
... }`) with work for all of them becomes one thread loop per part, so that the few threads'
part runs over those threads only (guarded_thread_range, applied with this step: only guards it
proves to admit one range of threads are split off) and the rest is a branch-free loop g++ can
vectorize.

early_return_tail's last region is `int t = ...; int i = ...; if (t == 0) { sum of the tile; }
if (i >= n) return; y[i] = ...;`: one scalar loop of 128 threads that tests `t == 0` in each,
with a serial sum inside. Split, the sum runs once and the rest vectorizes.

Exact: within a region (no barrier) CUDA threads run in any order, and each thread does what it
did, in its own order; running every thread's first part before any thread's second is one such
order (refused where atomics in two parts could meet: a float sum in another order rounds
differently; and around the lowering's warp exchanges, whose lanes meet inside one loop). The
parts share only the region's leading declarations of index arithmetic (repeated in
each loop: they read nothing the region writes) and the tests of the lowering's exit flags
(repeated too; no part before the last can set one: refused where a part before the last can
leave the thread's iteration, which would skip its later parts).
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.guards import guarded_region, kernel_shapes
from ..analysis.thread_locals import DECLARATION, LAUNCH_BUILTINS, STANDARD_DECLARATIONS, expanded, is_pure
from ..base import Context, Transform
from .guarded_ranges import guarded_thread_range

_NEST = re.compile(C.THREAD_NEST)
_EXIT_TEST = re.compile(r"if \(exited\w*\[tid\]\) continue;")
_ATOMIC = re.compile(r"\batomic\w*\s*\(")
_JUMP = re.compile(r"\b(continue|break|return|goto)\b")
_THREAD = re.compile(r"\b(threadIdx\.[xyz]|tid|tx|ty|tz)\b")
_QUALIFIED = re.compile(r"(?:(?:const|unsigned|signed|long|short|static|volatile)\s+)+[A-Za-z_]")  # `unsigned int x;`
_MARK = "// tools.optimize: the region's parts for a few threads and for all, one loop each"


def guarded_fission(ctx: Context, code: str) -> str | None:
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        params = C.split_params(k.params)
        shapes = kernel_shapes(code, k)
        allowed = LAUNCH_BUILTINS | {"tid"} | {p for p in map(C.param_name, params) if p and not C.changes(p, body)} | \
            C.constant_macros(code)
        new, pos, edits = [], 0, 0
        for m in _NEST.finditer(body):
            if m.start() < pos:
                continue
            close = C.matching_brace(body, m.end() - 1)
            parts = _parts(body[m.end():close], allowed, shapes)
            if parts is None:
                continue
            indent = body[body.rfind("\n", 0, m.start()) + 1:m.start()]
            inner = re.match(r"\s*", body[m.end():])[0].rsplit("\n", 1)[-1]  # the statements' own indentation
            last = body[body.rfind("\n", 0, close) + 1:close]
            loops = [_MARK] + [m[0] + "".join(f"\n{inner}{stmt}" for stmt in part) + f"\n{last}}}" for part in parts]
            new.append(body[pos:m.start()] + f"\n{indent}".join(loops))
            pos, edits = close + 1, edits + 1
        if edits:
            code, changed = C.with_body(code, k, "".join(new) + body[pos:]), True
    return (guarded_thread_range(ctx, code) or code) if changed else None


def _parts(text: str, allowed: set[str], shapes: dict) -> list[list[str]] | None:
    """The region's statements as loops' bodies (shared declarations repeated in each), or None."""
    spans = C.statements(text)
    if spans is None or "cudacpu::" in text:
        return None  # the lowering's warp exchanges: their lanes meet inside one thread loop
    shared, work, pure = [], [], {}
    for s, e, compound in spans:
        stmt = text[s:e].strip()
        d = None if compound else DECLARATION.fullmatch(stmt)
        if not work and (stmt in STANDARD_DECLARATIONS or _EXIT_TEST.fullmatch(stmt)):
            shared.append(stmt)
        elif not work and d and len(C.split_top_level(d["init"])) == 1 and is_pure(d["init"], allowed, pure) \
                and not C.changes(d["name"], text[e:]):
            shared.append(stmt)
            pure[d["name"]] = stmt
        else:
            work.append(stmt)
    guarded = [i for i, stmt in enumerate(work) if _few_threads(stmt, pure)
               and guarded_region("\n".join(shared + [stmt]), shapes) is not None]
    if len(work) < 2 or not guarded:
        return None
    first = guarded[0]
    groups = [g for g in (work[:first], [work[first]], work[first + 1:]) if g]
    if sum(bool(_ATOMIC.search("\n".join(group))) for group in groups) > 1:
        return None  # atomics of two parts would meet in another order (float sums round differently)
    for stmt in (stmt for group in groups[:-1] for stmt in group):
        if _JUMP.search(stmt):
            return None  # a thread leaving its iteration early would skip its later parts
        if DECLARATION.fullmatch(stmt) or C.declaration_type(stmt) or _QUALIFIED.match(stmt):
            return None  # a local the later parts would have to carry over
    return [shared + group for group in groups]


def _few_threads(stmt: str, pure: dict[str, str]) -> bool:
    """`if (G) {...}` (no else) whose guard depends on the thread: work for some threads only."""
    m = re.match(r"if\s*\(", stmt)
    if not m:
        return False
    close = C.call_end(stmt, m.end() - 1)
    rest = stmt[close + 1:].strip()
    if not rest.startswith("{") or C.matching_brace(rest, 0) != len(rest) - 1:
        return False
    return bool(_THREAD.search(expanded(stmt[m.end():close], pure)))


GUARDED_FISSION = Transform("guarded_fission", "a region's work for a few threads split from the work for all, one "
                            "thread loop each, the few threads' over those threads only", guarded_fission)
