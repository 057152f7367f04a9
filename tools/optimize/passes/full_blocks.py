"""full_blocks: blocks in which every bound guard comes out as in the interior of the grid run a
copy of the block's code with those guards folded to constants (issue 8: "hoist index
arithmetic", "remove emulation the CPU does not need").

CUDA guards its memory accesses with comparisons against the problem's size: `if (i < n)`,
`(x < W && y < H) ? in[y * W + x] : 0.0f`, `if (i >= n) return;`. On a GPU such a guard costs a
predicate; in a thread loop it turns every load and store under it into a masked one, or keeps
the loop scalar. In all blocks but those at the edges of the problem each such guard is decided
the same way for every thread. So each block first evaluates the guards for all its threads
(integer arithmetic only, no memory read), and where each came out as expected for every thread
it runs a copy of its code in which they are the constants `true`/`false`; the other blocks run
the code unchanged.

What folds is each term of a guard (each conjunct of one expected true, each disjunct of one
expected false) that varies with the block (reads blockIdx or a bound) and otherwise reads only
the thread and block coordinates and extents, literals, macros, scalar parameters the kernel
never assigns, and locals of the same thread region declared from such values (or per-thread
copies assigned once, at the region's top level, before any read) and never assigned again; no
call, memory read, or division by anything but a positive literal. Inside loops counted up to a
literal or a macro, every trip's value is checked. A guard whose branch leaves the thread
(`continue`, the lowering's `return`) is expected false, any other (and a `?:`) true; the
lowering's "this thread has returned" flags that only such wholly folded branches set are then
known false in the copy. Exact: the copy runs only in blocks where every term folded in it has,
for every thread, the value folded in. Only thread regions at the top level of a block are read;
guards elsewhere stay as they are in both copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..analysis import code as C
from ..analysis.guards import Unproven, parse
from ..base import Context, NotApplicable, Transform
from .wide_indices import wide_indices

_BLOCK_LOOP = re.compile(r"for \(unsigned int bx = 0; bx < gridDim\.x; \+\+bx\) \{")
_BLOCK_IDX = "const uint3 blockIdx = make_uint3(bx, by, bz);"
_NEST = re.compile(C.THREAD_NEST)
_PERTHREAD = re.compile(r"cudacpu::PerThread<(?P<t>[\w: ]+)> (?P<name>\w+)\(|cudaopt::Id<(?P<t2>[\w: ]+)> (?P<name2>\w+)\[")
_FLAG = re.compile(r"cudacpu::PerThread<bool> (\w+)\(|cudaopt::Flag (\w+)\[")
_INT_DECL = re.compile(r"(?:const\s+)?(?P<type>(?:unsigned\s+|signed\s+)?(?:long\s+long|long|int|short)|unsigned|bool|"
                       r"std::size_t|size_t|u?int(?:8|16|32|64)_t)\s+(?P<decls>[^;]+);")
_BUILTINS = {f"{v}.{d}" for v in ("threadIdx", "blockIdx", "blockDim", "gridDim") for d in "xyz"} | \
    {"tx", "ty", "tz", "bx", "by", "bz", "true", "false"}
_STEP = re.compile(r"(?:\+\+(?P<a>\w+)|(?P<b>\w+)\+\+|(?P<c>\w+)\s*\+=\s*(?P<step>[\w.]+))$")
_MARK = "// tools.optimize: interior blocks"


@dataclass
class _Region:
    """What one thread region contributes: the statements that check its guards (in order) and
    the guards' conditions to fold, as (start, end, value) offsets into the block's text."""
    end: int  # offset of the region's closing brace in the block's text
    checks: list[str] = field(default_factory=list)
    folds: list[tuple[int, int, bool]] = field(default_factory=list)
    dead: list[tuple[int, int]] = field(default_factory=list)  # branches never taken in the copy


@dataclass
class _Names:
    allowed: set[str]  # parameters, macros, builtins
    bounds: set[str]  # scalar parameters the kernel never assigns
    perthread: dict[str, str]  # per-thread copies and their element types
    pure: dict[str, bool] = field(default_factory=dict)  # locals usable in a guard -> vary by block


def full_blocks(ctx: Context, code: str) -> str:
    """Every kernel with a foldable guard gets its interior copy; then wide_indices, where it
    applies: the copy's loads only vectorize once their subscripts are 64-bit (measured on the
    corpus' reduce_tree_shared: 4.1x the faithful lowering together, 1.0x either alone)."""
    new = _interior_copies(ctx, code)
    try:
        return wide_indices(ctx, new)
    except NotApplicable:
        return new


def _interior_copies(ctx: Context, code: str) -> str:
    changed, why = False, []
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        try:
            if _MARK in body:
                raise NotApplicable("it has its interior copy already")
            code, changed = C.with_body(code, k, _kernel(code, k, body)), True
        except NotApplicable as reason:
            why.append(f"{k.name}: {reason}")
    if not changed:
        raise NotApplicable("; ".join(reversed(why)) or "no kernel")
    return code


def _kernel(code: str, k: C.KernelText, body: str) -> str:
    loops = list(_BLOCK_LOOP.finditer(body))
    if len(loops) != 1:
        raise NotApplicable(f"its blocks run in {len(loops)} loops over the grid, not one")
    open_brace = loops[0].end() - 1
    close = C.matching_brace(body, open_brace)
    block = body[open_brace + 1:close]
    at = block.find(_BLOCK_IDX)
    if at < 0:
        raise NotApplicable("its block loop sets no blockIdx")
    head_end = at + len(_BLOCK_IDX)
    rest = block[head_end:]
    scalars = {C.param_name(p) for p in C.split_params(k.params) if "*" not in p and "[" not in p}
    scalars = {s for s in scalars if s and not C.changes(s, body)}
    macros = C.constant_macros(code)
    perthread = {m["name"] or m["name2"]: (m["t"] or m["t2"]).strip() for m in _PERTHREAD.finditer(body)}
    names = _Names(_BUILTINS | scalars | macros, scalars, perthread)
    regions = _regions(rest, names)
    if not any(r.folds for r in regions):
        raise NotApplicable("no guard of its threads compares an index with a bound the launch fixes (such as "
                            "`if (i < n)`, `n` a parameter it never assigns) in a form decided for a whole block")
    fast = _folded(rest, [f for r in regions for f in r.folds])
    fast = _without_exit_flags(fast, body, rest, regions)
    indent = block[block.rfind("\n", 0, at) + 1:at]
    nest = ["for (unsigned int tz = 0; tz < blockDim.z; ++tz)", "    for (unsigned int ty = 0; ty < blockDim.y; ++ty)",
            "        #pragma omp simd reduction(&:cudaopt_interior)",
            "        for (unsigned int tx = 0; tx < blockDim.x; ++tx) {",
            "            const uint3 threadIdx = make_uint3(tx, ty, tz);"]
    lines = [f"int cudaopt_interior = 1;  {_MARK}: every bound guard decided as inside the problem"]
    for r in regions:
        if r.folds:
            lines += nest + [f"            {c}" for c in r.checks] + ["        }"]
    pre = "".join(f"\n{indent}{line}" for line in lines)
    new_block = (block[:head_end] + pre + f"\n{indent}if (cudaopt_interior) {{" + _indented(fast) + f"\n{indent}}} else {{"
                 + _indented(rest) + f"\n{indent}}}\n" + indent[:-4])
    return body[:open_brace + 1] + new_block + body[close:]


def _indented(text: str) -> str:
    return "\n".join("    " + line if line.strip() else line for line in text.rstrip().split("\n"))


def _regions(rest: str, names: _Names) -> list[_Region]:
    regions = []
    for start, end, compound in C.statements(rest) or []:
        m = _NEST.match(rest, start)
        if not compound or not m:
            continue
        open_brace = m.end() - 1
        close = C.matching_brace(rest, open_brace)
        region = _Region(close)
        local = _Names(names.allowed, names.bounds, names.perthread)
        _walk(rest, open_brace + 1, close, local, region, loops=[], top=True)
        regions.append(region)
    return regions


def _walk(text: str, start: int, end: int, names: _Names, region: _Region, loops: list[str], top: bool) -> None:
    """Reads the statements of text[start:end]: declarations of usable locals (top level only),
    guards, and the branches and loops inside which more guards may be."""
    spans = C.statements(text[start:end])
    if spans is None:
        return
    for s, e, compound in spans:
        s, e = start + s, start + e
        while text.startswith("#", s):  # a pragma before the statement
            s = C.skip_space(text, text.index("\n", s))
        stmt = text[s:e]
        if re.match(r"if\s*\(", stmt):
            _if(text, s, e, names, region, loops)
        elif re.match(r"for\s*\(", stmt):
            _for(text, s, e, names, region, loops)
        elif stmt.startswith("{"):
            _walk(text, s + 1, e - 1, _scope(names), region, loops, top=False)
        elif not compound:
            _simple(text, s, e, names, region, loops, top)


def _if(text, s, e, names, region, loops) -> None:
    cond_open = text.index("(", s)
    cond_close = C.call_end(text, cond_open)
    then_start = C.skip_space(text, cond_close + 1)
    then_end = C.statement_span(text, then_start)
    if then_end is None:
        return
    then = text[then_start:then_end]
    leaves = re.search(r"\b(continue|return|break)\s*;", then) is not None and not re.search(r"\b(for|while|do|switch)\b", then)
    if _fold(text, cond_open + 1, cond_close, not leaves, names, region, loops) and leaves:
        region.dead.append((then_start, then_end))
    _walk(text, then_start, then_end, _scope(names), region, loops, top=False)
    after = C.skip_space(text, then_end)
    if after < e and re.match(r"else\b", text[after:]):
        _walk(text, after + 4, e, _scope(names), region, loops, top=False)


def _for(text, s, e, names, region, loops) -> None:
    head_open = text.index("(", s)
    head_close = C.call_end(text, head_open)
    parts = text[head_open + 1:head_close].split(";")
    body_start = C.skip_space(text, head_close + 1)
    counted = None
    if len(parts) == 3:
        init = re.fullmatch(r"\s*(?:unsigned\s+)?int\s+(\w+)\s*=\s*(.+?)\s*", parts[0])
        cond = re.fullmatch(r"\s*(\w+)\s*<=?\s*([\w.]+)\s*", parts[1])
        step = _STEP.fullmatch(parts[2].strip())
        if init and cond and step and init[1] == cond[1] == (step["a"] or step["b"] or step["c"]) \
                and _usable(init[2], names) and (cond[2].isdigit() or cond[2] in names.allowed - names.bounds) \
                and (step["step"] is None or _positive_step(step["step"], names)) \
                and not C.changes(init[1], text[body_start:e]):
            counted = init[1]
    if counted is None:  # guards inside that do not read the counter are still checked (at least once)
        _walk(text, body_start, e, _scope(names, parts[0] + ";"), region, loops, top=False)
        return
    inner = _Names(names.allowed, names.bounds, names.perthread, {**names.pure, counted: False})
    _walk(text, body_start, e, inner, region, loops + [text[s:head_close + 1]], top=False)


def _scope(names: _Names, declaration: str = "") -> _Names:
    """The names seen inside a nested statement: the usable locals it does not declare again
    (a local declared there hides the region's one of the same name)."""
    scoped = _Names(names.allowed, names.bounds, names.perthread, dict(names.pure))
    _hide_declared(scoped, declaration)
    return scoped


def _hide_declared(names: _Names, stmt: str) -> None:
    stmt = stmt.strip()
    m = C.declaration_type(stmt)
    if m is None:
        return
    for declarator in C.split_top_level(stmt[m.end():].rstrip(";")):
        name = re.match(r"[\s*&]*([A-Za-z_]\w*)", declarator)
        if name:
            names.pure.pop(name[1], None)


def _positive_step(step: str, names: _Names) -> bool:
    return (step.isdigit() and int(step) > 0) or step in ("blockDim.x", "blockDim.y", "blockDim.z", "gridDim.x",
                                                         "gridDim.y", "gridDim.z") or step in names.allowed - names.bounds - _BUILTINS


def _simple(text, s, e, names, region, loops, top) -> None:
    stmt = text[s:e]
    rhs_at = _assignment_rhs(stmt)
    if rhs_at is not None:
        q = _top_level(stmt, "?", rhs_at)
        if q is not None:
            _fold(text, s + rhs_at, s + q, True, names, region, loops)
    if not top or loops:
        _hide_declared(names, stmt)
        return
    decl = _INT_DECL.fullmatch(stmt)
    if decl:
        for part in C.split_top_level(decl["decls"]):
            m = re.fullmatch(r"\s*(\w+)\s*=\s*(.+?)\s*", part, re.S)
            if not m or not _usable(m[2], names) or _assigned_again(m[1], text, e, region.end):
                return
        for part in C.split_top_level(decl["decls"]):
            name, init = (x.strip() for x in part.split("=", 1))
            names.pure[name] = _varies_by_block(init, names)
        region.checks.append(stmt)
        return
    m = re.fullmatch(r"(\w+)\[tid\]\s*=\s*(.+?);", stmt, re.S)
    if m and m[1] in names.perthread and _usable(m[2], names) and f"{m[1]}[tid]" not in names.pure \
            and not _assigned_again(f"{m[1]}[tid]", text, e, region.end) and not _read_before(m[1], text, s):
        key = f"{m[1]}[tid]"
        names.pure[key] = _varies_by_block(m[2], names)
        region.checks.append(f"{names.perthread[m[1]]} {_local(key)} = {_locals(m[2], names)};")


def _fold(text: str, start: int, end: int, expected: bool, names: _Names, region: _Region, loops: list[str]) -> bool:
    """Folds the terms of the condition text[start:end] that vary with the block or read a bound
    (its conjuncts where it is expected true, its disjuncts where false), each checked first;
    True when every term was folded."""
    terms = _terms(text, start, end, "&&" if expected else "||")
    folded = 0
    for a, b in terms:
        term = text[a:b].strip()
        if not (_usable(term, names) and _varies_by_block(term, names)):
            continue
        test = f"({_locals(term, names)})" if expected else f"!({_locals(term, names)})"
        region.checks.append(" ".join(loops + [f"cudaopt_interior &= int({test});"]))
        region.folds.append((a, b, expected))
        folded += 1
    return folded == len(terms)


def _terms(text: str, start: int, end: int, op: str) -> list[tuple[int, int]]:
    """Spans of the operands of a chain of `op` at the top level of text[start:end] (the whole when
    the other logical operator is at the top level too)."""
    other = "||" if op == "&&" else "&&"
    spans, depth, last, i = [], 0, start, start
    while i < end:
        c = text[i]
        depth += c in "(["
        depth -= c in ")]"
        if depth == 0 and text.startswith(other, i):
            return [(start, end)]
        if depth == 0 and text.startswith(op, i):
            spans.append((last, i))
            last, i = i + 2, i + 2
            continue
        i += 1
    return spans + [(last, end)]


def _usable(expr: str, names: _Names) -> bool:
    """Integer arithmetic of allowed names and usable locals only (no call, read or division by
    anything but a positive literal)."""
    text = _locals(expr, names)
    try:
        parse(text)
    except Unproven:
        return False
    if re.search(r"[/%]\s*(?!\d)", text) or re.search(r"[/%]\s*0+\b", text):
        return False
    idents = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*(?:\.[xyz])?", text)) - {"unsigned", "int", "long", "short", "signed", "char",
                                                                     "size_t", "std", "bool", "const"}
    return all(n in names.allowed or _unlocal(n) in names.pure or n in names.pure for n in idents
               if not re.fullmatch(r"u?int(8|16|32|64)_t", n))


def _varies_by_block(expr: str, names: _Names) -> bool:
    """Reads the block's coordinates or a bound, directly or through locals: not decided by the
    thread's coordinates alone (those are never the same for a whole block)."""
    for n in re.findall(r"(?<![\w.])[A-Za-z_]\w*(?:\.[xyz])?", _locals(expr, names)):
        if n in names.bounds or n.startswith("blockIdx.") or n in ("bx", "by", "bz") or names.pure.get(_unlocal(n)):
            return True
    return False


def _local(key: str) -> str:
    return "cudaopt_pt_" + key.split("[", 1)[0]


def _unlocal(name: str) -> str:
    return f"{name[len('cudaopt_pt_'):]}[tid]" if name.startswith("cudaopt_pt_") else name


def _locals(expr: str, names: _Names) -> str:
    """Per-thread copies read as `x[tid]` written as the precheck's locals."""
    return re.sub(r"\b(\w+)\[tid\]", lambda m: _local(m[0]) if m[1] in names.perthread else m[0], expr)


def _assignment_rhs(stmt: str) -> int | None:
    m = re.match(r"[^=;?]*?(?<![=!<>+\-*/%&|^])=(?!=)", stmt)
    return m.end() if m else None


def _top_level(text: str, ch: str, start: int) -> int | None:
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        depth += c in "(["
        depth -= c in ")]"
        if c == ch and depth == 0:
            return i
    return None


def _assigned_again(name: str, text: str, after: int, region_end: int) -> bool:
    """Assigned later in the same region (other regions declare their own copies)."""
    return C.changes(re.escape(name) if "[" in name else name, text[after:region_end])


def _read_before(name: str, text: str, before: int) -> bool:
    region_start = text.rfind("for (unsigned int tx = 0; tx < blockDim.x; ++tx) {", 0, before)
    return re.search(rf"(?<![\w.]){name}\b", text[region_start:before]) is not None


def _folded(rest: str, folds: list[tuple[int, int, bool]]) -> str:
    for start, end, value in sorted(folds, reverse=True):
        term = rest[start:end]
        lead, trail = term[:len(term) - len(term.lstrip())], term[len(term.rstrip()):]
        rest = rest[:start] + lead + ("true" if value else "false") + trail + rest[end:]
    return rest


def _without_exit_flags(fast: str, body: str, rest: str, regions: list[_Region]) -> str:
    """A flag that marks threads as returned, set only in branches folded to false, stays false
    in the copy: its tests go."""
    dead = [span for r in regions for span in r.dead]
    for m in _FLAG.finditer(body):
        flag = m[1] or m[2]
        uses = re.compile(rf"(?<![\w.]){flag}\[(?!\d+\] = \{{\}};)")  # (not its declaration)
        cleared = re.search(rf"(?<![\w.]){flag}\.fill\(false\);|\) {flag}\[cudaopt_i\] = false;", rest)
        first_read = rest.find(f"{flag}[tid]")
        if cleared is None or first_read < cleared.start() or len(uses.findall(body)) != len(uses.findall(rest)):
            continue  # not cleared when each block starts, or used outside the block's code
        writes = [w.start() for w in re.finditer(rf"(?<![\w.]){flag}\[tid\]\s*=(?!=)", rest)]
        if any(not any(a <= w < b for a, b in dead) for w in writes):
            continue
        fast = fast.replace(f"if ({flag}[tid]) continue;", "")
    return fast


FULL_BLOCKS = Transform("full_blocks", "blocks inside the problem run a copy without their bound guards "
                        "(checked per block for all threads)", full_blocks, fresh=True)
