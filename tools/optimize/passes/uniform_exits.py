"""uniform_exits: a loop with a barrier whose every exit tests only values all of a block's threads
share leaves for the whole block at once (see tools/optimize/__init__.py).

The lowering runs such a loop (`while (true) { ...; __syncthreads(); if (done_shared) break; }`)
as a masked loop, because a `break` might be taken by some threads only: every thread keeps a flag
`in_loop[tid]`, every region of the body skips the threads that left, and the block asks each
iteration whether some thread is still in. Where the threads all entered (the flag was set for
every thread, with no condition), the loop's condition is uniform, and each `break` is the first
statement of its region with a condition that reads only `__shared__` scalars (no pointer to them
kept), scalar parameters, launch extents and constant macros, none of which the rest of its
region touches, all threads evaluate that condition on the same values (the regions before it
ended for every thread, and nothing in its own region writes them), so they all leave in the
same iteration, at the same place. The flag then carries no information: the break happens once
per block, before its region, and the flag, its checks and the per-iteration question go.

Not where a thread can return inside the loop (the block might wait on a flag no thread sets any
more), nor where the flag is used in any other way than the lowering's.

The condition may also read uniform counters: a thread's own integer copies (`r[tid]`) that every
thread sets alike (`r = 0` and `++r` in a do-while with barriers: the lowering cannot tell they
stay equal). A copy is a counter when each of its writes assigns a uniform value or steps it
(++, --, += and -= of uniform values), as a statement of its thread loop's own body that no jump
can skip, the loop testing no flag but this loop's: every thread then runs each write, and the
copies stay equal, so the block reads thread 0's copy (`r[0]`).
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_FLAG_DECL = re.compile(r"^[ \t]*(?:cudacpu::PerThread<bool> (?P<a>in_loop\w*)\(nthreads\);|"
                        r"cudaopt::Flag (?P<b>in_loop\w*)\[\d+\] = \{\};)[ \t]*\n", re.M)
_NEST = re.compile(C.THREAD_NEST)
_WORDS_OK = {"true", "false", "unsigned", "signed", "int", "long", "short", "char", "bool", "float", "double",
             "const", "static_cast", "std", "size_t", "blockIdx", "blockDim", "gridDim", "nthreads"}


def uniform_exits(ctx: Context, code: str) -> str | None:
    """Every masked loop of the module's shape left by the whole block at once, its flag removed."""
    macros = C.constant_macros(code)
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        shared = C.shared_scalars(body)
        scalars = {C.param_name(p) for p in C.split_params(k.params) if not re.search(r"[*&\[]", p)}
        uniform = _WORDS_OK | macros | shared | {s for s in scalars if s}
        new = body
        for m in list(_FLAG_DECL.finditer(body)):
            done = _without_flag(new, m["a"] or m["b"], uniform)
            new = done if done is not None else new
        if new != body:
            code, changed = C.with_body(code, k, new), True
    return code if changed else None


def is_uniform(expr: str, uniform: set[str]) -> bool:
    """Does expr read only names in `uniform` (members after `.` aside), call nothing and assign
    nothing?"""
    if re.search(r"(?<![=!<>])=(?!=)|\+\+|--", expr):
        return False
    for m in re.finditer(r"(?<![.\w])[A-Za-z_]\w*", expr):
        if m[0] not in uniform:
            return False
        after = C.skip_space(expr, m.end())
        if after < len(expr) and expr[after] == "(" and m[0] not in _WORDS_OK:
            return False
    return True


def _without_flag(body: str, flag: str, uniform: set[str]) -> str | None:
    decl = re.search(rf"^[ \t]*(?:cudacpu::PerThread<bool> {flag}\(nthreads\);|cudaopt::Flag {flag}\[\d+\] = \{{\}};)[ \t]*\n",
                     body, re.M)
    fill = re.search(rf"^[ \t]*(?:{flag}\.fill\(false\);|for \(unsigned int cudaopt_i = 0; cudaopt_i < nthreads; "
                     rf"\+\+cudaopt_i\) {flag}\[cudaopt_i\] = false;)[ \t]*\n", body, re.M)
    if decl is None or fill is None:
        return None
    init_end = C.statement_span(body, C.skip_space(body, fill.end()))
    if init_end is None:
        return None
    init = body[fill.end():init_end]
    set_line = re.search(rf"^[ \t]*{flag}\[tid\] = true;[ \t]*\n", init, re.M)
    if not _NEST.search(init) or set_line is None or re.search(r"\b(continue|goto|return)\b", init):
        return None  # threads that did not all enter: the flag says which are in
    loop_at = C.skip_space(body, init_end)
    if not body.startswith("while (true) {", loop_at):
        return None
    loop_close = C.matching_brace(body, loop_at + len("while (true) {") - 1)
    inner_start = loop_at + len("while (true) {")
    inner = body[inner_start:loop_close]
    if re.search(r"\bexited\w*\[tid\] = true", inner):
        return None
    stmts = C.statements(inner)
    if not stmts or len(stmts) < 3:
        return None
    # the lowering tests the condition first (while, for) or last (do-while), then asks the block
    tested, rest = (stmts[0:2], stmts[2:]) if _loop_condition(inner[stmts[0][0]:stmts[0][1]], flag) else (stmts[-2:], stmts[:-2])
    edits: list[tuple[int, int, str]] = []  # offsets in `inner`
    cond = _loop_condition(inner[tested[0][0]:tested[0][1]], flag)
    ask = inner[tested[1][0]:tested[1][1]]
    counted = False  # does the condition read uniform counters?
    if cond is not None and (counters := _uniform_counters(body, flag, uniform)):
        cond, counted = re.subn(rf"(?<![\w.])({'|'.join(sorted(counters))})\[tid\]", r"\1[0]", cond)
        uniform = uniform | counters
    if cond is None or not is_uniform(cond, uniform) or not re.fullmatch(
            rf"if \(!cuda(?:cpu|opt)::any_thread\({flag}, nthreads(?:, &?\w+)?\)\) break;", ask):
        return None
    indent = inner[inner.rfind("\n", 0, tested[0][0]) + 1:tested[0][0]]
    first_line, ask_end = tested[0][0] - len(indent), tested[1][1] + inner.startswith("\n", tested[1][1])
    edits.append((first_line, ask_end, "" if cond.strip() == "true" else f"{indent}if (!({cond})) break;\n"))
    uses = exits = 0
    for start, end, _ in rest:
        stmt = inner[start:end]
        exit_edit = _exit(stmt, flag, uniform) if _NEST.match(stmt) else None
        if exit_edit is not None:
            exit_start, exit_end, exit_cond = exit_edit
            edits.append((start, start, f"if ({exit_cond}) break;\n{indent}"))
            edits.append((start + exit_start, start + exit_end, ""))
            uses, exits = uses + 1, exits + 1
        for guard in re.finditer(rf"^[ \t]*if \(!{flag}\[tid\]\) continue;[ \t]*\n", stmt, re.M):
            edits.append((start + guard.start(), start + guard.end(), ""))
            uses += 1
    # every use of the flag is one of the lowering's, each rewritten above
    if len(re.findall(rf"\b{flag}\b", inner)) != 3 + uses or len(re.findall(rf"\b{flag}\b", body)) != 6 + uses:
        return None
    if not exits and not counted:
        return None  # a loop left only by a condition the lowering could already have proven uniform
    for start, end, text in sorted(edits, reverse=True):
        inner = inner[:start] + text + inner[end:]
    init = init[:set_line.start()] + init[set_line.end():]
    if not re.sub(r"const (?:uint3 threadIdx|unsigned int tid|std::size_t tid) = [^;]*;", "", init[_NEST.search(init).end():]).strip(" \n}"):
        init = ""  # nothing left for the threads to do there
    between = body[init_end:inner_start] if init else body[init_end:inner_start].lstrip("\n")
    return body[:decl.start()] + body[decl.end():fill.start()] + init + between + inner + body[loop_close:]


_PER_THREAD_INT = re.compile(r"^[ \t]*(?:cudacpu::PerThread<(?P<t1>[\w: ]+)> (?P<a>\w+)\(nthreads\);|"
                             r"cudaopt::Id<(?P<t2>[\w: ]+)> (?P<b>\w+)\[\d+\] = \{\};)[ \t]*$", re.M)
_INTEGRAL = re.compile(r"(?:unsigned |signed )?(?:int|long|long long|short|char)|unsigned|std::size_t|u?int(?:8|16|32|64)_t")
_WRITE = re.compile(r"(?:\+\+|--)(?P<a>\w+)\[tid\]|(?P<b>\w+)\[tid\](?:\+\+|--)|(?P<c>\w+)\[tid\] [-+]?= (?P<value>.+)")
_JUMP = re.compile(r"\b(?:continue|break|return|goto)\b")
_LOCAL = re.compile(r"^[ \t]*(?:const )?(?:unsigned |signed )?(?:int|long|short|char|unsigned|bool|float|double) (?P<name>\w+) = (?P<init>[^;]+);", re.M)


def _uniform_counters(body: str, flag: str, uniform: set[str]) -> set[str]:
    """The per-thread integer copies whose every write (see the module's docstring) keeps them
    equal in all threads, given that the values in `uniform` and the other counters are."""
    counters = {m["a"] or m["b"] for m in _PER_THREAD_INT.finditer(body) if _INTEGRAL.fullmatch((m["t1"] or m["t2"]).strip())}
    counters -= {flag}
    nests = [(m.end() - 1, C.matching_brace(body, m.end() - 1)) for m in re.finditer(_NEST, body)]
    writes: dict[str, list] = {name: [] for name in counters}  # name -> [(statement, its nest before it, its nest)]
    for name in list(counters):
        for m in re.finditer(rf"(?<![\w.]){name}\b", body):
            if _PER_THREAD_INT.match(body, body.rfind("\n", 0, m.start()) + 1):
                continue  # its declaration
            after = body[m.end():m.end() + 16]
            if not after.startswith("[tid]"):
                counters.discard(name)  # another thread's copy, the whole array or its address
                break
            before = body[:m.start()].rstrip()
            written = before.endswith(("++", "--")) or re.match(r"\[tid\]\s*(?:\+\+|--|(?:[-+*/%&|^]|<<|>>)?=(?!=))", after)
            if before.endswith("&") and not before.endswith("&&"):
                counters.discard(name)
                break
            if not written:
                continue
            nest = next(((o, c) for o, c in reversed(nests) if o < m.start() < c), None)
            inside = body[nest[0] + 1:nest[1]] if nest else ""
            at = m.start() - nest[0] - 1 if nest else -1
            start, end = next(((a, b) for a, b, _ in C.statements(inside) or [] if a <= at < b), (0, 0))
            stmt = inside[start:end]
            if not stmt or "\n" in stmt or not stmt.endswith(";"):
                counters.discard(name)  # not a statement of its thread loop's own body
                break
            writes[name].append((stmt[:-1], inside[:start], inside))
    changed = True
    while changed:  # a counter stays one while all its writes are uniform given the others
        changed = False
        for name in sorted(counters):
            if not all(_uniform_write(name, *write, flag, uniform | counters) for write in writes[name]):
                counters.discard(name)
                changed = True
    return counters


def _uniform_write(name: str, stmt: str, prefix: str, nest: str, flag: str, uniform: set[str]) -> bool:
    """Does every thread run `stmt` (no jump in its nest before it but the test of this loop's
    flag) and leave its copy of name equal to the others'? Not where its nest writes a name the
    value reads (a later thread would see what an earlier one wrote)."""
    prefix = re.sub(rf"^[ \t]*(?:const (?:uint3 threadIdx|unsigned int tid|std::size_t tid) = [^;]*;|if \(!{flag}\[tid\]\) continue;)[ \t]*$",
                    "", prefix, flags=re.M)
    if _JUMP.search(prefix):
        return False
    local: set[str] = set()
    for m in _LOCAL.finditer(prefix):  # the nest's own locals of uniform values (`int step = 1;`)
        if is_uniform(m["init"], uniform | local) and not C.changes(m["name"], prefix[m.end():] + stmt):
            local.add(m["name"])
    uniform = uniform | local
    write = _WRITE.fullmatch(stmt)
    if write is None or name not in (write["a"], write["b"], write["c"]):
        return False
    if write["c"] is None:
        return True  # ++ or --
    value = re.sub(r"(?<![\w.])(\w+)\[tid\]", lambda w: w[1] if w[1] in uniform else w[0], write["value"])
    read = set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", value)) - _WORDS_OK
    return is_uniform(value, uniform) and not any(C.changes(word, nest.replace(stmt, "", 1)) for word in read - local - {name})


def _loop_condition(nest: str, flag: str) -> str | None:
    """COND of the lowering's per-iteration test `if (F[tid]) F[tid] = COND;`, the nest's only statement."""
    m = _NEST.match(nest)
    if m is None:
        return None
    lines = [line.strip() for line in nest[m.end():nest.rindex("}")].splitlines() if line.strip()]
    lines = [line for line in lines if not re.match(r"const (?:unsigned int|std::size_t) tid = ", line)]
    if len(lines) != 1:
        return None
    test = re.fullmatch(rf"if \({flag}\[tid\]\) {flag}\[tid\] = (.*);", lines[0])
    return test[1] if test else None


def _exit(nest: str, flag: str, uniform: set[str]) -> tuple[int, int, str] | None:
    """(start, end, COND) of the lines of `if (COND) { F[tid] = false; continue; }` where it is the
    nest's first statement after its thread coordinates and its test of the flag."""
    m = _NEST.match(nest)
    close = C.matching_brace(nest, m.end() - 1)
    i = C.skip_space(nest, m.end())
    while re.match(rf"const (?:uint3 threadIdx|unsigned int tid|std::size_t tid) = |if \(!{flag}\[tid\]\) continue;", nest[i:]):
        i = C.skip_space(nest, nest.index(";", i) + 1)
    if not nest.startswith("if (", i):
        return None
    cond_close = C.call_end(nest, i + 3)
    end = C.statement_span(nest, i)
    if end is None or end > close:
        return None
    if " ".join(nest[cond_close + 1:end].split()) != f"{{ {flag}[tid] = false; continue; }}":
        return None
    cond = " ".join(nest[i + 4:cond_close].split())
    if not is_uniform(cond, uniform):
        return None
    rest = nest[end:close]
    if any(re.search(rf"(?<![\w.]){name}\b", rest) for name in set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", cond)) - _WORDS_OK):
        return None  # a later thread of the region would see what an earlier one wrote after its test
    return nest.rfind("\n", 0, i) + 1, end + 1 if nest.startswith("\n", end) else end, cond


UNIFORM_EXITS = Transform("uniform_exits", "loops with barriers whose exits test only shared or uniform values left by the "
                          "whole block at once (no per-thread loop flags)", uniform_exits)
