"""stride_loops: a thread's loop over the threads' stride (`for (int c = tid; c < n; c +=
blockDim.x)`, grid-stride loops inside a block) runs trip by trip across the threads, so that
the thread loop is the inner one (issue 8: "make the innermost loop walk contiguous memory
(interchange)").

The lowering runs each thread's whole loop before the next thread's: trip k of thread t reads
`row[t + k * blockDim.x]`, so the innermost loop strides by the block and stays scalar. Here the
thread region `PRE; for (T c = INIT; COND; c += STEP) BODY; POST` becomes three thread loops:
PRE (the values later statements read saved per thread), then for k = 0, 1, ... while some
thread is still in its loop, `c = INIT + k * STEP; if (COND) BODY` for every thread (contiguous
in t), then POST. Each thread does what it did, in its own order; only threads' steps are
interleaved, which CUDA allows anywhere between barriers (the region has none). Refused when
BODY stores anywhere but global memory through the kernel's pointers (or locals built from them),
non-volatile `__shared__` arrays at places that read the thread (another thread reading what a
trip stored would race with it on the GPU too: no barrier orders them) and the thread's own
locals, uses atomics, warp intrinsics or `break`/`continue`/`return`, assigns the counter, or
when INIT, STEP and the bound of COND are not index arithmetic of the thread's coordinates,
parameters the kernel never assigns, macros, template parameters and such locals (then the
trip's index is an affine function of the thread and g++ vectorizes the loads), or do not depend
on the thread at all (uniform_loops' case).
Threads that returned before the loop skip it and what follows; values that PRE leaves for the
loop and POST are kept per thread.

uniform_loops takes the loops stride_loops leaves, those whose trips are the same in every thread
(`for (int k = 0; k < BLOCK; ++k) a[tid] = interact(me[tid], sh[k], a[tid]);`, no guard): one
loop over the trips around the thread loop, which g++ then vectorizes across the threads (nbody's
interactions; the thread's own loop over the tile stayed scalar). Same refusals, same argument.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.guards import GUARD_RANGE, RANGED_TX_LOOP, guarded_region, kernel_shapes
from ..analysis.thread_locals import (DECLARATION, LAUNCH_BUILTINS, STANDARD_DECLARATIONS, THREAD_RANK_DECL,
                                      expanded, is_pure)
from ..base import Context, NotApplicable, Transform
from .specialize import specialize_parallel

_NEST = re.compile(C.THREAD_NEST)
_HEAD = re.compile(r"for\s*\(\s*(?P<type>(?:unsigned\s+)?(?:int|long|long long|size_t|std::size_t|unsigned))\s+(?P<var>\w+)\s*="
                   r"\s*(?P<init>[^;]+);\s*(?P=var)\s*(?P<op><=?)\s*(?P<bound>[^;]+);\s*"
                   r"(?:(?P=var)\s*\+=\s*(?P<step>[^)]+)|\+\+\s*(?P=var)|(?P=var)\s*\+\+)\s*\)", re.S)
_FORBIDDEN = re.compile(r"\b(break|continue|return|goto|atomic\w*|__syncthreads|printf)\b|cudacpu::|cudaopt::")
_MARK = "// tools.optimize: trip by trip across the threads"
_PERTHREAD = re.compile(r"(?:cudacpu::PerThread<[^>]+>|cudaopt::Id<[^>]+>|cudaopt::Flag) (\w+)[(\[]")


def stride_loops(ctx: Context, code: str, uniform: bool = False) -> str | None:
    changed = False
    for k in reversed(C.kernels(code)):
        block = ctx.largest_block(k.name)
        if not block:
            continue
        body = k.body(code)
        params = C.split_params(k.params)
        names = {C.param_name(p) for p in params}
        templates = C.template_values(code, k)
        allowed = LAUNCH_BUILTINS | {p for p in names if p and not C.changes(p, body)} | C.constant_macros(code) | set(templates)
        pointers = {C.param_name(p) for p in params if "*" in p} & allowed
        shared = _shared_arrays(body)
        new, count = body, 0
        perthread = set(_PERTHREAD.findall(body))
        shapes = kernel_shapes(code, k)
        while count < 8 and (step := _first_region(new, allowed, pointers, shared, perthread, shapes, block, count,
                                                   uniform)) is not None:
            new, count = step, count + 1
        if count:
            code, changed = C.with_body(code, k, new), True
    if not changed:
        shape = "with the same trips in every thread" if uniform else "striding over the block's or the grid's threads"
        raise NotApplicable(f"no thread loop holds a loop {shape} that can run trip by trip across the threads (one "
                            "that uses atomics, warp intrinsics, printf, break, continue or return, or assigns its "
                            "counter, cannot)")
    if "cudaopt::first_true" in code and "CUDAOPT_GUARD_RANGE" not in code:
        code = C.with_support(code, GUARD_RANGE)  # the helpers of the trips' thread ranges
    return code


def uniform_loops(ctx: Context, code: str) -> str | None:
    return stride_loops(ctx, code, uniform=True)


def _first_region(body: str, allowed: set[str], pointers: set[str], shared: set[str], perthread: set[str], shapes: dict, block: int,
                  number: int, uniform: bool) -> str | None:
    for m in _NEST.finditer(body):
        open_brace = m.end() - 1
        close = C.matching_brace(body, open_brace)
        new = _region(body[open_brace + 1:close], allowed, pointers, shared, perthread, shapes, block, number,
                      "#pragma omp simd" in m[0], uniform)
        if new is not None:
            line = body.rfind("\n", 0, m.start()) + 1
            indent = body[line:m.start()]
            text = _reindent(new, indent)
            return body[:line] + text + body[close + 1:]
    return None


def _region(text: str, allowed: set[str], pointers: set[str], shared: set[str], perthread: set[str], shapes: dict, block: int,
            number: int, simd: bool, uniform: bool) -> list[str] | None:
    """The three thread loops (as lines, indented from 0) replacing a region, or None."""
    spans = C.statements(text)
    if spans is None:
        return None
    pure: dict[str, str] = {}  # locals recomputed in every loop (name -> declaration)
    carried: dict[str, str] = {}  # locals saved per thread (name -> type)
    for i, (s, e, compound) in enumerate(spans):
        stmt = text[s:e].strip()
        guard, looped = _guarded(stmt)
        head = _HEAD.match(looped)
        if compound and head and (guard is None or is_pure(guard, allowed, pure)):
            loop = _loop(looped, head, pure, allowed, pointers, shared, perthread, guard, uniform)
            if loop is not None:
                std = [text[a:b].strip() for a, b, _ in spans if text[a:b].strip() in STANDARD_DECLARATIONS]
                pre = [text[a:b].strip() for a, b, _ in spans[:i] if text[a:b].strip() not in STANDARD_DECLARATIONS]
                post = [text[a:b].strip() for a, b, _ in spans[i + 1:]]
                return _loops(std, pre, loop, post, pure, carried, block, number, simd, shapes)
        if compound or stmt in STANDARD_DECLARATIONS:
            continue
        d = DECLARATION.fullmatch(stmt)
        if d is None:
            if C.declaration_type(stmt):
                return None  # a declaration the later loops could not see (an array, no initialiser)
            continue
        if len(C.split_top_level(d["init"])) > 1:
            return None  # several declarators
        name = d["name"]
        if is_pure(d["init"], allowed, pure) and not C.changes(name, text[e:]):
            pure[name] = _int_locals(stmt)
        else:
            carried[name] = _unqualified(d["type"])
    return None


_LAUNCH_WORD = re.compile(r"(?<![\w.])(?:(?:threadIdx|blockIdx|blockDim|gridDim)\.[xyz]|[tb][xyz])(?![\w.])")
_RING_ARITHMETIC = re.compile(r"[\w.\s()+*-]+")  # + - *: unsigned arithmetic converted to int is int arithmetic mod 2^32


def _unqualified(type_: str) -> str:
    return re.sub(r"^const\s+", "", type_.strip())


def _int_locals(text: str) -> str:
    """`int col = blockIdx.x * 32 + threadIdx.x;` (each plain `int` declared in text) recomputed in
    int arithmetic, its launch coordinates cast to int: computed in unsigned arithmetic and
    converted, the value is not affine in the thread loop for g++, and every access through it
    became a gather (column_sums_2d_block). The same value wherever nothing overflows, as for the
    trip's counter (see _loops). Only sums, differences and products."""
    return _INT_LOCAL.sub(lambda m: f"{m['head']}{_in_int(m['init'])};", text)


_INT_LOCAL = re.compile(r"(?P<head>(?<![\w.])(?<!unsigned )(?<!signed )(?<!long )(?<!short )(?:const\s+)?int\s+\w+\s*=\s*)"
                        r"(?P<init>[^;{}]+);")  # a plain `int`, not `unsigned int` (whose wrap-around is meant)


def _in_int(expr: str) -> str:
    """Sums, differences and products with their launch coordinates cast to int and their unsigned
    literals signed (see _int_locals); any other expression as it is."""
    if not _RING_ARITHMETIC.fullmatch(expr):
        return expr
    return re.sub(r"(?<![\w.])(\d+)[uU]\b", r"\1", _LAUNCH_WORD.sub(lambda m: f"(int){m[0]}", expr))


def _guarded(stmt: str) -> tuple[str | None, str]:
    """`if (G) for (...) ...` (no else) as (G, the loop); (None, stmt) for anything else."""
    m = re.match(r"if\s*\(", stmt)
    if not m:
        return None, stmt
    close = C.call_end(stmt, m.end() - 1)
    rest = stmt[close + 1:].strip()
    if rest.startswith("{") and rest.endswith("}"):
        rest = rest[1:-1].strip()
    spans = C.statements(rest)
    if not spans or len(spans) != 1 or not _HEAD.match(rest):
        return None, stmt
    return stmt[m.end():close], rest


def _loop(stmt, match, pure, allowed, pointers, shared, perthread, guard, uniform) -> dict | None:
    head = {**match.groupdict(), "step": match["step"] or "1"}
    body = stmt[match.end():].strip()
    if _FORBIDDEN.search(body) or C.changes(head["var"], body):
        return None
    if not all(is_pure(head[p], allowed, pure) for p in ("init", "bound", "step")):
        return None
    threads = [bool(_THREAD.search(expanded(head[p], pure))) for p in ("init", "bound", "step")]
    if uniform and (any(threads) or guard is not None):
        return None  # uniform_loops: only loops whose trips are the same in every thread
    if not uniform and not threads[0]:
        return None  # every thread runs the same trips: nothing to interleave (uniform_loops' case)
    # a shared store must differ between the threads of a trip, which the vectorized trip runs at once
    varying = {name for name in pure if _THREAD.search(expanded(name, pure))} | ({head["var"]} if threads[0] else set())
    if not _writes_global_or_own(body, pointers | set(pure), perthread, shared, varying):
        return None
    body = _int_locals(body)  # `int src = blockIdx.x * B + j - H;`
    return {"head": head, "body": body, "guard": guard, "uniform": uniform}


_ASSIGN = re.compile(r"(?<![=!<>])(?:[-+*/%&|^]|<<|>>)?=(?!=)")
_THREAD = re.compile(r"\b(threadIdx\.[xyz]|tx|ty|tz|tid)\b")


def _shared_arrays(body: str) -> set[str]:
    """The block's `__shared__` arrays but volatile ones (warp-synchronous code: a lane reads what
    another wrote with no barrier between, which only the threads' lockstep orders)."""
    return {a or b for m in C.SHARED_DECL.finditer(body) for a, b in [m.groups()]
            if "volatile" not in body[body.rfind("\n", 0, m.start()) + 1:m.start()]}


def _writes_global_or_own(body: str, bases: set[str], perthread: set[str], shared: set[str], varying: set[str]) -> bool:
    """Every store of the loop's body goes through a pointer parameter or a local built from
    one, or into a `__shared__` array at a subscript that reads the thread (memory another thread
    reading within the region would race with on the GPU too; one place for all threads would be
    stored by every lane of the vectorized trip at once), or into the thread's own per-thread copy
    (`v[tid]`, `v[tid].x`), or is a plain local's; writes through other pointers are refused."""
    for target in _store_targets(body):
        if target is None:
            return False
        base = re.match(r"[A-Za-z_]\w*", target)
        if base is None:
            return False
        place = re.sub(r"(?:(?:\.|->)\w+)+$", "", target)  # `v[tid].x` is stored where `v[tid]` is
        if base[0] in shared:
            words = set(re.findall(r"[A-Za-z_]\w*", place[base.end():]))
            if _THREAD.search(place[base.end():]) or words & varying:
                continue
            return False
        if place == base[0] or base[0] in bases or (base[0] in perthread and place == f"{base[0]}[tid]"):
            continue
        return False
    return True


def _store_targets(body: str):
    """The assigned (or incremented) expression of every store in body, without spaces (`a[i].x`);
    None for a target this reader does not follow (through `*`, or a parenthesised expression)."""
    for m in _ASSIGN.finditer(body):
        yield _target_before(body, m.start())
    for m in re.finditer(r"\+\+|--", body):
        before = body[:m.start()].rstrip()
        if before and (before[-1].isalnum() or before[-1] in "_]"):
            yield _target_before(body, m.start())  # x++
        else:
            yield _target_after(body, m.end())  # ++x


def _target_before(body: str, end: int) -> str | None:
    while end > 0 and body[end - 1].isspace():
        end -= 1
    i = end
    while i > 0:
        ch = body[i - 1]
        if ch == "]":
            depth = 0
            while i > 0:
                i -= 1
                depth += {"]": 1, "[": -1}.get(body[i], 0)
                if depth == 0:
                    break
        elif ch.isalnum() or ch in "_.":
            i -= 1
        elif body[i - 2:i] == "->":
            i -= 2
        else:
            break
    target = re.sub(r"\s+", "", body[i:end])
    return None if not target or body[:i].rstrip().endswith(("*", "&")) else target  # `*p = v`, `&r = v`


def _target_after(body: str, start: int) -> str | None:
    m = re.match(r"\s*[A-Za-z_][\w.]*", body[start:])
    if m is None:
        return None
    i = start + m.end()
    while i < len(body) and body[i] == "[":
        i = _bracket_end(body, i)
    return re.sub(r"\s+", "", body[start:i])


def _bracket_end(text: str, i: int) -> int:
    depth = 0
    while i < len(text):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    return i


def _loops(std, pre, loop, post, pure, carried, block, number, simd, shapes) -> list[str]:
    head, body = loop["head"], loop["body"]
    n = f"cudaopt_n{number}"
    on, any_ = f"cudaopt_on{number}", f"cudaopt_any{number}"
    saved = {name: f"cudaopt_s{number}_{name}" for name in carried}
    nest = ["for (unsigned int tz = 0; tz < blockDim.z; ++tz)", "    for (unsigned int ty = 0; ty < blockDim.y; ++ty)",
            *(["        #pragma omp simd"] if simd else []), "        for (unsigned int tx = 0; tx < blockDim.x; ++tx) {"]
    inner = "            "
    std = [inner + line for line in std + ([] if THREAD_RANK_DECL in std else [THREAD_RANK_DECL])]
    restore = [f"{inner}{carried[name]} {name} = {saved[name]}[cudaopt_t];" for name in carried]
    recompute = [inner + pure[name] for name in pure]
    # Only where PRE can leave the thread early (a thread that returned) do the later loops test that it got there:
    # the test is a branch that keeps g++ from vectorizing a body with calls or struct stores.
    leaves = any(re.search(r"\b(continue|break|return)\b", s) for s in pre)
    active = [f"{inner}if (!{on}[cudaopt_t]) continue;"] if leaves else []
    lines = [f"{{  {_MARK}", *([f"    unsigned char {on}[{block}];"] if leaves else [])]
    lines += [f"    {carried[name]} {saved[name]}[{block}];" for name in carried]
    lines += [f"    if (blockDim.x * blockDim.y * blockDim.z > {block}u) "
              f"cudacpu::unsupported(\"stride_loops: optimized for blocks of at most {block} threads\");"]
    if leaves or pre or carried:
        first = nest + std + ([f"{inner}{on}[cudaopt_t] = 0;"] if leaves else []) + [inner + s for s in pre] + \
            ([f"{inner}{on}[cudaopt_t] = 1;"] if leaves else []) + \
            [f"{inner}{saved[name]}[cudaopt_t] = {name};" for name in carried] + ["        }"]
        lines += ["    " + line for line in first]
    saves = [f"{inner}{saved[name]}[cudaopt_t] = {name};" for name in carried if C.changes(name, body)]
    counter = f"const {head['type']} {head['var']} = ({head['init']}) + ({head['type']}){n} * ({head['step']});"
    if head["type"] == "int":
        # `threadIdx.x + n * blockDim.x` is unsigned arithmetic converted back to int: g++ cannot prove
        # it affine in the thread loop, and every load through the counter became a gather (layernorm_rows
        # 1.4x slower). In int arithmetic it is the same value wherever the counter does not overflow,
        # which the trip-by-trip order assumes anyway (analysis/guards.py: no overflow, as in the CUDA source).
        counter = f"const int {head['var']} = (int)({_in_int(head['init'])}) + (int){n} * (int)({_in_int(head['step'])});"
    if loop["uniform"]:  # the same trips in every thread: one loop around the thread loop
        bound = {p: expanded(head[p], pure) for p in ("init", "bound", "step")}
        var = head["var"]
        trip = active + recompute + restore + [f"{inner}{body}"] + saves
        lines += [f"    for ({head['type']} {var} = {bound['init']}; {var} {head['op']} {bound['bound']}; "
                  f"{var} += {bound['step']}) {{"]
        lines += ["        " + line for line in nest + std + trip + ["        }"]] + ["    }"]
    elif (ranged := _ranged_trip(std + recompute + restore + [counter], loop, saves, shapes) if not leaves else None):
        # the threads whose trip n is in the loop, found per trip (analysis/guards.py proves them one range of
        # threadIdx.x): no test left in the thread loop, whose calls and stores then vectorize
        lines += [f"    for (unsigned long long {n} = 0;; ++{n}) {{", f"        unsigned char {any_} = 0;",
                  "        for (unsigned int tz = 0; tz < blockDim.z; ++tz)",
                  "            for (unsigned int ty = 0; ty < blockDim.y; ++ty) {"]
        lines += ["                " + line for line in ranged.bounds]
        lines += [f"                {any_} |= tx_lo < tx_hi;", *(["                #pragma omp simd"] if simd else []),
                  "                " + RANGED_TX_LOOP]
        lines += ["                    " + line.strip() for line in ranged.body.split("\n")]
        lines += ["                }", "            }", f"        if (!{any_}) break;", "    }"]
    else:
        trip = active + recompute + restore + [
            inner + counter,
            *([f"{inner}if (!({loop['guard']})) continue;"] if loop["guard"] else []),
            f"{inner}if (!({head['var']} {head['op']} {head['bound']})) continue;",
            f"{inner}{any_} |= 1;",
            f"{inner}{body}"] + saves
        lines += [f"    for (unsigned long long {n} = 0;; ++{n}) {{", f"        unsigned char {any_} = 0;"]
        trip_nest = [line.replace("#pragma omp simd", f"#pragma omp simd reduction(|:{any_})") for line in nest]
        lines += ["        " + line for line in trip_nest + std + trip + ["        }"]]
        lines += [f"        if (!{any_}) break;", "    }"]
    if post:
        last = nest + std + active + recompute + restore + [inner + s for s in post] + ["        }"]
        lines += ["    " + line for line in last]
    return lines + ["}"]


def _ranged_trip(decls, loop, saves, shapes):
    """A trip's thread loop (its declarations up to the trip's counter, then the loop's test and
    body) as analysis/guards.py's Region: the admitted threads' range and the body without its test; None
    where the test is not proven to admit one range of threadIdx.x."""
    head = loop["head"]
    test = f"{head['var']} {head['op']} {head['bound']}"
    if loop["guard"]:
        test = f"({loop['guard']}) && ({test})"
    lines = [line.strip() for line in decls] + [f"if ({test}) {{", loop["body"], *(line.strip() for line in saves), "}"]
    return guarded_region("\n".join(lines), shapes)


def _reindent(lines: list[str], indent: str) -> str:
    return "\n".join(indent + line for line in lines)


def specialized_stride_loops(ctx: Context, code: str) -> str | None:
    """stride_loops on code with the launch extents as constants, made so first (specialize_parallel)
    where no step kept so far did: the trip-by-trip loops and the per-thread arrays they save to
    vectorize with constant block extents, and the search may have timed specialize alone as
    slower (column_sums_2d_block: 24 us on the faithful lowering, 4.6 us specialized, 1 thread)."""
    if not C.CONSTANT_EXTENTS.search(code):
        try:
            code = specialize_parallel(ctx, code)
        except NotApplicable:
            pass  # stride_loops on the code as it is
    return stride_loops(ctx, code)


STRIDE_LOOPS = Transform("stride_loops", "loops striding over the threads run trip by trip across the threads "
                         "(the thread loop innermost, contiguous; launch extents as constants first)",
                         specialized_stride_loops, fresh=True)
UNIFORM_LOOPS = Transform("uniform_loops", "loops with the same trips in every thread run trip by trip across the "
                          "threads (the thread loop innermost, vectorized across the threads)", uniform_loops)
