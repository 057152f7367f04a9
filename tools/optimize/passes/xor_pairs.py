"""Thread loops of butterfly steps run over the pairs' lower threads only, contiguous.

`unsigned int ixj = t ^ j; if (ixj > t) { ... s[t] ... s[ixj] ... }` is how bitonic sorts
(and butterflies of FFTs and Walsh transforms) pick the partner of a thread, with j a power of
two. The lowering's thread loop runs every thread: half of them do nothing, and `s[t ^ j]` reads
as a gather, so the loop stays scalar. For j a power of two, `t ^ j > t` holds exactly where
`(t & j) == 0`: threads [b, b + j) for b = 0, 2j, 4j, ... There `t ^ j == t + j`. So the region
becomes a loop over those runs around a thread loop over each run, with the partner `t + j`:
the same threads in the same order, the others (which did nothing) skipped, the partner's
subscripts `[t + j]` in 64 bits (exact: t + j = t | j) and affine in tx.

Runs shorter than a vector (j = 1, 2, 4, 8) become a loop over groups of 2j threads around
the j pairs of each, j a constant there, and a guarded swap of values the step read before
(`if (C) { s[t] = b; s[p] = a; }`) becomes selects: g++ then vectorizes across the groups
(bitonic_sort_shared: 8.1x the faithful lowering, from 1.2x with the steps that applied before).

j must be an enclosing loop's unsigned counter proven a power of two (or zero, where no thread
takes part and no branch runs): it starts at a literal, a `#define` constant or an outer such
counter, or shifts, products and quotients of those, moves by `<<=`, `>>=`, `*= 2` or `/= 2`, and
is not changed in its body. The region must be exactly the lowering's
thread-index line, aliases of threadIdx.x, the partner's declaration and the guarded statement.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.guards import LOWERING_DECL
from ..base import Context, Transform

_NEST = re.compile(r"(?P<ind>[ \t]*)for \(unsigned int tz = 0; tz < blockDim\.z; \+\+tz\)\s*"
                   r"for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\s*(?P<simd>#pragma omp simd\s*)?"
                   r"for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{")
_ALIAS = re.compile(r"(?:const\s+)?(?:unsigned int|unsigned|int) (?P<name>\w+) = (?:threadIdx\.x|tx);")
_PARTNER = re.compile(r"(?:const\s+)?(?:unsigned int|unsigned) (?P<name>\w+) = (?P<a>\w+(?:\.x)?) \^ (?P<b>\w+);")
_LOOP = re.compile(r"for\s*\(\s*(?:unsigned int|unsigned) (?P<var>\w+) = (?P<init>[^;]+);[^;]*;\s*(?P<step>[^)]+)\)\s*\{")
_STEP = r"{v}\s*(?:<<=|>>=)\s*\d+|{v}\s*(?:\*=|/=)\s*2|{v}\s*=\s*{v}\s*(?:<<|>>)\s*\d+|{v}\s*=\s*{v}\s*[*/]\s*2"
_FORBIDDEN = re.compile(r"\b(break|return|goto)\b")


def _power_of_two_or_zero(expr: str, known: set[str], macros: dict[str, int]) -> bool:
    """Whether expr (C text) is provably a power of two or zero, from the names in `known`."""
    expr = expr.strip()
    while expr.startswith("(") and C.call_end(expr, 0) == len(expr) - 1:
        expr = expr[1:-1].strip()
    number = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uU]?", expr)
    if number:
        value = int(number[1], 0)
        return value & (value - 1) == 0
    if re.fullmatch(r"\w+", expr):
        if expr in macros:
            return macros[expr] & (macros[expr] - 1) == 0
        return expr in known
    m = re.fullmatch(r"(?P<a>.+?)\s*(?P<op><<|>>|\*|/)\s*(?P<b>\w+|\d+[uU]?)", expr)
    if m is None or "?" in expr:
        return False
    if m["op"] in ("<<", ">>"):
        return re.fullmatch(r"\d+", m["b"]) is not None and _power_of_two_or_zero(m["a"], known, macros)
    return _power_of_two_or_zero(m["a"], known, macros) and _power_of_two_or_zero(m["b"], known, macros)


def _powers_of_two(body: str, at: int, macros: dict[str, int]) -> set[str]:
    """The counters of the loops enclosing offset `at` that hold a power of two (or zero)
    throughout their bodies."""
    known: set[str] = set()
    for m in _LOOP.finditer(body, 0, at):
        close = C.matching_brace(body, m.end() - 1)
        if close < at:
            continue  # ended before `at`: not enclosing
        var = m["var"]
        steps = re.fullmatch(_STEP.format(v=re.escape(var)), m["step"].strip())
        if steps and _power_of_two_or_zero(m["init"], known, macros) and not C.changes(var, body[m.end():close]):
            known.add(var)
    return known


def _pairs(region: str, known: set[str], shared: set[str]) -> tuple[list[str], str, str] | None:
    """(the declarations kept, j, the guarded statement) of a region
    `threadIdx; aliases; unsigned int p = t ^ j; if (p > t) S`; None for any other region."""
    spans = C.statements(region)
    if spans is None or len(spans) < 3:
        return None
    stmts = [region[s:e].strip() for s, e, _ in spans]
    if stmts[0] != LOWERING_DECL:
        return None
    aliases = {"threadIdx.x", "tx"}
    kept = []
    for stmt in stmts[1:-2]:
        m = _ALIAS.fullmatch(stmt)
        if m is None:
            return None
        aliases.add(m["name"])
        kept.append(stmt)
    partner = _PARTNER.fullmatch(stmts[-2])
    if partner is None:
        return None
    a, b, p = partner["a"], partner["b"], partner["name"]
    t, j = (a, b) if a in aliases else (b, a)
    if t not in aliases or j not in known:
        return None
    guard = re.match(rf"if \(\s*(?:{p}\s*>\s*(?P<t1>\w+(?:\.x)?)|(?P<t2>\w+(?:\.x)?)\s*<\s*{p})\s*\)", stmts[-1])
    if guard is None or (guard["t1"] or guard["t2"]) not in aliases:
        return None
    then = stmts[-1][guard.end():].strip()
    if C.statement_span(then, 0) != len(then) or re.match(r"else\b", then[C.statement_span(then, 0):].strip()):
        return None
    if _FORBIDDEN.search(then) or any(C.changes(name, then) for name in (aliases - {"threadIdx.x"}) | {p, j}):
        return None
    # subscripts in 64 bits: a 32-bit `t + j` may wrap for all g++ knows, and stays a scatter
    then = _selects(re.sub(rf"\[\s*{p}\s*\]", f"[(std::size_t){t} + {j}]", then), shared)
    return [stmts[0], *kept, f"const unsigned int {p} = {t} + {j};  {C.MARKER} ({t} & {j}) == 0 here, so {t} ^ {j} == {t} + {j}"], j, then


_STORE = re.compile(r"(?P<place>\w+\[[^\[\];]+\])\s*=\s*(?P<value>\w+|[-+]?[\d.]+[fF]?);")


def _selects(then: str, shared: set[str]) -> str:
    """`{ ... T a = s[x]; ... if (C) { s[x] = v; ... } }` with the guarded stores as selects,
    `s[x] = take ? v : a`, where each stored place is an element of the block's `__shared__` array
    whose value a local read before the `if`, unconditionally, with no store to the array since,
    and each value a name or a number. The same stores in the same order where C holds, the value
    the place holds written back where it does not: exact, since only this CPU thread touches the
    block's shared memory. g++ does not introduce stores itself, and its masked stores of a
    group's pairs do not vectorize (`s[x] = take ? v : s[x]` it turns back into one)."""
    if not (then.startswith("{") and then.endswith("}")):
        return then
    inner = then[1:-1]
    spans = C.statements(inner)
    if not spans:
        return then
    s, e, _ = spans[-1]
    last = inner[s:e].strip()
    guard = re.match(r"if\s*\(", last)
    if guard is None:
        return then
    close = C.call_end(last, guard.end() - 1)
    condition, rest = last[guard.end():close], last[close + 1:].strip()
    if not (rest.startswith("{") and rest.endswith("}")) or re.search(r"\belse\b", rest):
        return then
    stores = [_STORE.fullmatch(stmt.strip()) for stmt in re.split(r"(?<=;)", rest[1:-1]) if stmt.strip()]
    if not stores or any(m is None for m in stores):
        return then
    before = [(inner[a:b], compound) for a, b, compound in spans[:-1]]
    held = []  # the local holding each place's value
    for m in stores:
        array = m["place"].split("[")[0]
        index_names = set(re.findall(r"[A-Za-z_]\w*", m["place"][len(array):]))
        if array not in shared or any(C.changes(name, inner) for name in index_names):
            return then
        held.append(_holder(m["place"], array, before))
        if held[-1] is None:
            return then
    take = "cudaopt_take"
    indent = inner[inner.rfind("\n", 0, s) + 1:s]
    selects = [f"{indent}{m['place']} = {take} ? {m['value']} : {name};" for m, name in zip(stores, held)]
    return "{" + inner[:s] + f"const bool {take} = ({condition});  {C.MARKER} guarded stores as selects\n" + \
        "\n".join(selects) + "\n" + indent[:-4] + "}"


def _holder(place: str, array: str, before: list[tuple[str, bool]]) -> str | None:
    """The local that a statement of `before` (run by every thread that gets there: not compound)
    declares as `place` and that still holds its value at the end: neither it nor the array
    changes after; None if there is none."""
    declared = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*)\s*=\s*" + re.escape(place) + r"\s*[,;]")
    store = re.compile(rf"(?<![\w.]){array}\s*\[")
    for i in range(len(before) - 1, -1, -1):
        stmt, compound = before[i]
        m = declared.search(stmt)
        if m and not compound and C.declaration_type(stmt.strip()):
            later = "".join(text for text, _ in before[i + 1:])
            if C.changes(m["name"], later) or any(_stores_to(store, text) for text, _ in before[i + 1:]):
                return None
            return m["name"]
    return None


def _stores_to(element: re.Pattern, text: str) -> bool:
    """Whether text stores to (or takes the address of) an element of the array `element` matches."""
    for m in element.finditer(text):
        close = C.call_end(text, m.end() - 1) if text[m.end() - 1] == "[" else -1
        after = text[close + 1:].lstrip() if close >= 0 else ""
        if re.match(r"(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--", after) or text[:m.start()].rstrip().endswith("&"):
            return True
    return False


def _steps(j: str, region: list[str], simd: bool) -> list[str]:
    """The step's loops (lines indented from 0): runs of j threads at least a vector long as they
    are; shorter runs (j = 1, 2, 4, 8) with j a constant, a loop over the groups of 2j threads
    around the j pairs of each, which g++ unrolls and vectorizes across the groups (bitonic sort:
    the 30 of its 45 steps with j < 16 took 95% of the time, run by run)."""
    pragma = ["#pragma omp simd"] if simd else []
    nest = ["for (unsigned int tz = 0; tz < blockDim.z; ++tz)", "    for (unsigned int ty = 0; ty < blockDim.y; ++ty) {"]
    runs = [*nest,
            f"        for (unsigned long long cudaopt_run = 0; cudaopt_run < blockDim.x; cudaopt_run += 2ull * {j}) {{",
            f"            const unsigned int cudaopt_end = (unsigned int)(cudaopt_run + {j} < blockDim.x ? "
            f"cudaopt_run + {j} : blockDim.x);",
            *("            " + line for line in pragma),
            "            for (unsigned int tx = (unsigned int)cudaopt_run; tx < cudaopt_end; ++tx) {",
            *("                " + line for line in region), "            }", "        }", "    }"]
    whole = f"blockDim.x / (2 * {j}) * (2 * {j})"  # the threads of whole groups
    groups = [*nest, *("        " + line for line in pragma),
              f"        for (unsigned int cudaopt_g = 0; cudaopt_g < blockDim.x / (2 * {j}); ++cudaopt_g)",
              f"            for (unsigned int cudaopt_o = 0; cudaopt_o < {j}; ++cudaopt_o) {{",
              f"                const unsigned int tx = cudaopt_g * (2 * {j}) + cudaopt_o;",
              *("                " + line for line in region), "            }",
              f"        for (unsigned int tx = {whole}; tx < blockDim.x && tx < {whole} + {j}; ++tx) {{  "
              f"{C.MARKER} a block that ends inside a group",
              *("            " + line for line in region), "        }", "    }"]
    lines = [f"if ({j} >= 16) {{  {C.MARKER} the lower thread of each pair (t ^ {j} > t), run by run",
             *("    " + line for line in runs)]
    for size in (8, 4, 2, 1):
        lines += [f"}} else if ({j} == {size}) {{",
                  f"    const unsigned int {j} = {size};  {C.MARKER} a constant here: the pairs of a group unroll",
                  *("    " + line for line in groups)]
    return lines + ["}"]


def xor_pairs(ctx: Context, code: str) -> str | None:
    macros = {name: value for name, (value, _) in C.macro_values(code).items()}
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        shared = {a or b for a, b in C.SHARED_DECL.findall(body)}
        out, pos = [], 0
        for m in _NEST.finditer(body):
            close = C.matching_brace(body, m.end() - 1)
            found = _pairs(body[m.end():close], _powers_of_two(body, m.start(), macros), shared)
            if found is None:
                continue
            decls, j, then = found
            lines = _steps(j, [*decls, then], bool(m["simd"]))
            line_start = body.rfind("\n", 0, m.start()) + 1
            out.append(body[pos:line_start] + "\n".join(m["ind"] + line for line in lines))
            pos = close + 1
        if out:
            code, changed = C.with_body(code, k, "".join(out) + body[pos:]), True
    return code if changed else None


XOR_PAIRS = Transform("xor_pairs", "butterfly steps (t ^ j > t, j a power of two) run over the pairs' lower threads, "
                      "contiguous", xor_pairs)
