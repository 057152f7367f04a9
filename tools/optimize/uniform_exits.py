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
"""

from __future__ import annotations

import re

from . import code as C
from .transforms import Context

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
    edits: list[tuple[int, int, str]] = []  # offsets in `inner`
    cond = _loop_condition(inner[stmts[0][0]:stmts[0][1]], flag)
    ask = inner[stmts[1][0]:stmts[1][1]]
    if cond is None or not is_uniform(cond, uniform) or not re.fullmatch(
            rf"if \(!cuda(?:cpu|opt)::any_thread\({flag}, nthreads(?:, &?\w+)?\)\) break;", ask):
        return None
    indent = inner[inner.rfind("\n", 0, stmts[0][0]) + 1:stmts[0][0]]
    first_line, ask_end = stmts[0][0] - len(indent), stmts[1][1] + inner.startswith("\n", stmts[1][1])
    edits.append((first_line, ask_end, "" if cond.strip() == "true" else f"{indent}if (!({cond})) break;\n"))
    uses = exits = 0
    for start, end, _ in stmts[2:]:
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
    if not exits:
        return None  # a loop left only by its condition: not the shape this is for
    for start, end, text in sorted(edits, reverse=True):
        inner = inner[:start] + text + inner[end:]
    init = init[:set_line.start()] + init[set_line.end():]
    if not re.sub(r"const (?:uint3 threadIdx|unsigned int tid|std::size_t tid) = [^;]*;", "", init[_NEST.search(init).end():]).strip(" \n}"):
        init = ""  # nothing left for the threads to do there
    between = body[init_end:inner_start] if init else body[init_end:inner_start].lstrip("\n")
    return body[:decl.start()] + body[decl.end():fill.start()] + init + between + inner + body[loop_close:]


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
