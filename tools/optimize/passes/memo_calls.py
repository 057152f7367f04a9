"""memo_calls: an expression around a costly pure math call, which many threads of a block
evaluate with the same operands, is computed once and read by the others.

TVM inlines a producer into its consumer on a GPU: a dense layer after an element-wise chain
computes `erff(x[row * K + k] ...)` once per output column (graph_58: 24 times each value), a
softmax-then-matmul `expf(x[(tid / 12) * 103 + k] - max[tid / 12]) / sum[tid / 12]` 12 times.
The thread loops of the lowering repeat that work. Here the largest expression around the call
that depends on the thread only through one integer index q (`tid / 12`,
`(blockIdx.x * 128 + (tid >> 3)) / 3`) and otherwise on the loop counters around it inside the
thread loop, the block and read-only memory, goes into a table of the block keyed by
(q, counters):

    {  // per block, before the thread loops: q's range over the block's threads, a table
       // of (range x counters) values, none known
        for tz, ty, tx:
            // used in every trip of its innermost loop (the key's last counter k): the row of
            // all trips filled before the loop by the first thread of that q, plain loads in it
            row = cudacpu_memo::row(table, key(q), n, [&](double* r) { for (k...) r[k] = E; });
            for (int k = 0; k < n; ++k) ... read(row, k) ...
            // used in some trips only: each value computed where first needed
            ... cudacpu_memo::get(table, known, key(q, k), [&] { return E; }) ...
    }

Exact by construction: a value is what E gives for that key, computed only where the original
computes it too (a row only for a loop that evaluates E in every trip, with no jump out of it),
and E cannot differ between threads with the same key: every appearance of a thread coordinate
in it lies inside an occurrence of q; every other name is a loop counter in the key, a block
coordinate, a scalar parameter the kernel does not assign or a pointer parameter the kernel never
writes (distinct buffers in every launch), so nothing the block does changes what E reads while
the table lives. Values are kept as double, which holds the float, double, bool and 32-bit
integer values allowed exactly (other types fail to compile, and the variant is dropped). Where
the range times the counters would exceed MAX_ENTRIES, E is evaluated as before.

Subscripts are read with analysis/guards.py's integer parser: one it cannot read (a memory read inside,
a call, a conditional) or a name outside the list above leaves the expression alone. Whether
sharing pays is estimated on the task's block shape (q takes at most half as many values as
there are threads); the search's timing decides the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analysis import code as C
from ..analysis.expressions import Expr, parse_expression
from ..analysis.guards import COUNTED_FOR, Node, Unproven, guard_text, parse
from ..analysis.launches import distinct_buffers
from ..analysis.math_calls import DOUBLE_CALLS, FLOAT_CALLS, PURE_CALLS
from ..base import Context, Transform

MAX_ENTRIES = 1 << 20  # per table and block: larger ranges keep the plain call

_CALL = re.compile(r"(?<![\w.:])(?P<fn>" + "|".join(FLOAT_CALLS + DOUBLE_CALLS) + r")\s*\(")
_NEST = re.compile(r"for \(unsigned int tz = 0; tz < blockDim\.z; \+\+tz\)\s*"
                   r"for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\s*(?P<brace>\{)?")
_TX_LOOP = re.compile(r"for \(unsigned int tx = [^;{]+; tx < [^;{]+; \+\+tx\) \{")
THREAD_IDS = {"threadIdx.x", "threadIdx.y", "threadIdx.z", "tx", "ty", "tz"}
BLOCK_IDS = {f"{v}.{d}" for v in ("blockIdx", "blockDim", "gridDim") for d in "xyz"} | {"bx", "by", "bz"}
THREADIDX_DECL = "const uint3 threadIdx = make_uint3(tx, ty, tz);"


@dataclass(frozen=True)
class Key:
    q: Node | None  # the thread index the argument depends on (None: the same for every thread)
    counters: tuple[tuple[str, int], ...]  # (loop counter, trip count), outermost first


@dataclass
class _Site:
    text: str  # the shared expression (with its costly call)
    key: Key
    spans: list[tuple[int, int]]  # its occurrences in the nest's text
    every_trip: list[bool]  # per occurrence: evaluated in every trip of its innermost loop


def memo_calls(ctx: Context, code: str) -> str | None:
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        new_body = _kernel(ctx, k, body)
        if new_body is not None:
            code, changed = C.with_body(code, k, new_body), True
    if not changed:
        return None
    return code if "namespace cudacpu_memo" in code else C.with_support(code, SUPPORT)


SUPPORT = """#include <climits>
#include <vector>
namespace cudacpu_memo {
// Values of one shared expression for a block, by key (tools.optimize memo_calls), each computed
// by the first thread that needs it and read by the others. Stored as double: exact for the
// float, double, bool and 32-bit integer values allowed.
template <class T>
constexpr bool storable() {
    return std::is_arithmetic<T>::value && (sizeof(T) <= 4 || std::is_same<T, double>::value);
}
struct Table {
    Table(long long lo, long long hi, std::size_t counters)
        : entries(hi >= lo ? std::size_t(hi - lo + 1) * counters : 0),
          values(entries <= ENTRIES ? entries : 0), known(values.size()) {}
    // null where the table would be too large: every thread computes its own values
    double* data() { return values.empty() ? nullptr : values.data(); }
    std::size_t entries;
    std::vector<double> values;
    std::vector<unsigned char> known;
};
// One value, computed where first needed (a use that not every trip of its loop makes).
template <class F>
inline auto get(double* values, unsigned char* known, std::size_t i, F compute) -> decltype(compute()) {
    using T = decltype(compute());
    static_assert(storable<T>(), "shared value of a type not stored exactly");
    if (!values) return compute();
    if (known[i]) return static_cast<T>(values[i]);
    T value = compute();
    values[i] = value;
    known[i] = 1;
    return value;
}
// The `n` values of a loop's trips for one row of the key, filled before the loop by the first
// thread that runs it (a use that every trip makes): the loop then reads them as plain loads.
template <class F>
inline const double* row(double* values, unsigned char* known, std::size_t r, std::size_t n, F fill) {
    if (!values) return nullptr;
    if (!known[r * n]) {
        fill(values + r * n);
        known[r * n] = 1;
    }
    return values + r * n;
}
template <class T>
inline T read(const double* row, int k) {
    static_assert(storable<T>(), "shared value of a type not stored exactly");
    return static_cast<T>(row[k]);
}
}  // namespace cudacpu_memo""".replace("ENTRIES", str(MAX_ENTRIES))


def _kernel(ctx: Context, k: C.KernelText, body: str) -> str | None:
    launches = ctx.launches_of(k.name)
    shapes = {launch.dims()[1] for launch in launches}
    params = C.split_params(k.params)
    if len(shapes) != 1 or not launches or any(len(launch.args) != len(params) for launch in launches):
        return None
    names = [C.param_name(p) or "" for p in params]
    pointers = [i for i, p in enumerate(params) if "*" in p]
    if not distinct_buffers(launches, pointers, {b.name for b in ctx.task.buffers}):
        return None
    read_only = {names[i] for i in pointers if C.only_read(body, names[i])}
    scalars = {n for i, n in enumerate(names) if i not in pointers and n and not C.assigned(body, n)}
    block, = shapes
    out, pos, tables = [], 0, 0
    for m in _NEST.finditer(body):
        if m.start() < pos:
            continue
        # the ty loop's braces (guarded_thread_range's bounds come first) or the tx loop's
        tx = _TX_LOOP.search(body, m.end())
        if tx is None:
            continue
        close = C.matching_brace(body, m.end() - 1 if m["brace"] else tx.end() - 1)
        rewritten = _nest(body[m.start():close + 1], read_only, scalars, block, tables)
        if rewritten is not None:
            setup, nest, tables = rewritten
            indent = C.indent_at(body, m.start())
            out.append(body[pos:m.start()] + _indented(setup, indent) + "\n" + indent + nest + "\n" + indent + "}")
            pos = close + 1
    if not out:
        return None
    return "".join(out) + body[pos:]


def _indented(text: str, indent: str) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first] + [indent + line if line else line for line in rest])


def _nest(nest: str, read_only: set[str], scalars: set[str], block: tuple[int, int, int], tables: int):
    """(the tables' set-up, opening a block, the nest reading its shareable expressions from
    them, the tables made so far); None when no expression qualifies."""
    if THREADIDX_DECL not in nest:
        return None
    loops = [(m["var"], int(m["n"]), m.end() - 1, C.matching_brace(nest, m.end() - 1)) for m in COUNTED_FOR.finditer(nest)]
    sites: dict[tuple[str, Key], _Site] = {}
    pos = 0
    for m in _CALL.finditer(nest):
        if m.start() < pos:
            continue  # inside an expression already shared
        enclosing = [(v, n) for v, n, o, c in loops if o < m.start() < c]
        found = _shared_expression(nest, m.start(), enclosing, read_only, scalars, block)
        if found is None:
            continue
        (start, end), key, conditional = found
        text = nest[start:end]
        site = sites.setdefault((_squash(text), key), _Site(text, key, [], []))
        site.spans.append((start, end))
        site.every_trip.append(not conditional and _every_trip(nest, loops, start))
        pos = end
    if not sites:
        return None
    ranges: dict[str, str] = {}  # q's text -> the prefix of its range variables
    setup, edits = [], []
    for site in sites.values():
        q = guard_text(site.key.q) if site.key.q is not None else None
        if q is not None and q not in ranges:
            ranges[q] = f"memo_q{tables}"  # named after the first table keyed by it
            setup.append(_range_setup(ranges[q], q))
        table = f"memo{tables}"
        tables += 1
        counts = " * ".join(str(n) for _, n in site.key.counters) or "1"
        bounds = f"{ranges[q]}_lo, {ranges[q]}_hi" if q is not None else "0, 0"
        setup.append(f"cudacpu_memo::Table {table}({bounds}, {counts});\n"
                     f"double* const {table}_values = {table}.data();\n"
                     f"unsigned char* const {table}_known = {table}.known.data();")
        index = f"std::size_t((long long)({q}) - {ranges[q]}_lo)" if q is not None else "std::size_t(0)"
        row_loop = _row_loop(nest, loops, site)
        for var, n in site.key.counters[:-1] if row_loop else site.key.counters:
            index = f"({index} * {n} + std::size_t({var}))"
        if row_loop is None:
            shared = f"cudacpu_memo::get({table}_values, {table}_known, {index}, [&]() {{ return {site.text}; }})"
        else:
            var, n, loop_start = row_loop
            edits.append((loop_start, loop_start,
                          f"const double* const {table}_row = cudacpu_memo::row({table}_values, {table}_known, {index}, {n}, "
                          f"[&](double* memo_row) {{ for (int {var} = 0; {var} < {n}; ++{var}) memo_row[{var}] = {site.text}; }});\n"))
            shared = (f"({table}_row ? cudacpu_memo::read<std::decay_t<decltype({site.text})>>({table}_row, {var}) "
                      f": {site.text})")
        edits += [(start, end, shared) for start, end in site.spans]
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        nest = nest[:start] + text + nest[end:]
    keys = dict.fromkeys(", ".join(([guard_text(s.key.q)] if s.key.q is not None else []) + [v for v, _ in s.key.counters])
                         or "block" for s in sites.values())
    head = "// tools.optimize memo_calls: values shared by the threads with the same " + "; ".join(keys)
    return "{  " + head + "\n" + "\n".join(setup), nest, tables


def _innermost_loop(loops, pos: int):
    inside = [loop for loop in loops if loop[2] < pos < loop[3]]
    return max(inside, key=lambda loop: loop[2]) if inside else None


def _every_trip(nest: str, loops, pos: int) -> bool:
    """Is the statement holding pos run in every trip of its innermost counted loop: only plain
    blocks between (no if, else, loop, switch), the position in an if's condition at most, and
    no jump in the loop?"""
    loop = _innermost_loop(loops, pos)
    if loop is None:
        return False
    _, _, open_index, close = loop
    inside = nest[open_index + 1:close]
    if re.search(r"\b(?:break|continue|return|goto)\b", C.strip_comments(inside)):
        return False
    text = nest[open_index + 1:pos]
    stack = []  # openings of the blocks around pos: `{`, or `(` of an if's condition
    for i, c in enumerate(text):
        if c in "{(":
            stack.append(i)
        elif c in "})" and stack:
            stack.pop()
    for i in stack:
        before = C.strip_comments(text[:i]).rstrip()
        if text[i] == "{" and not (before == "" or before.endswith((";", "{", "}"))):
            return False
        if text[i] == "(" and re.search(r"\b(?:while|for|switch)\s*$", before):
            return False
    statement_start = max(text.rfind(";"), text.rfind("{"), text.rfind("}")) + 1
    head = text[statement_start:].lstrip()
    if re.match(r"(?:else|do|while|for|switch|case|default)\b", head):
        return False
    if re.match(r"if\b", head):  # in the condition, not in the statement it guards
        depth = 0
        for c in head[head.index("("):]:
            depth += (c == "(") - (c == ")")
            if depth == 0:
                return False
    return True


def _row_loop(nest: str, loops, site: _Site):
    """(counter, trips, where its loop starts) when every occurrence of the site is in every trip of
    the same innermost loop, whose counter is the key's last, and a statement can go before it."""
    if not site.key.counters or not all(site.every_trip):
        return None
    found = {_innermost_loop(loops, start) for start, _ in site.spans}
    if len(found) != 1:
        return None
    var, n, open_index, _ = found.pop()
    if (var, n) != site.key.counters[-1]:
        return None
    loop_start = nest.rfind("for (int " + var, 0, open_index)
    before = C.strip_comments(nest[:loop_start]).rstrip()
    if loop_start < 0 or not before.endswith((";", "{", "}")):
        return None
    return var, n, loop_start


def _range_setup(prefix: str, q: str) -> str:
    return (f"long long {prefix}_lo = LLONG_MAX, {prefix}_hi = LLONG_MIN;  // the values of {q} in the block\n"
            "for (unsigned int tz = 0; tz < blockDim.z; ++tz)\n"
            "    for (unsigned int ty = 0; ty < blockDim.y; ++ty)\n"
            "        for (unsigned int tx = 0; tx < blockDim.x; ++tx) {\n"
            + (f"            {THREADIDX_DECL}\n" if "threadIdx" in q else "")
            + f"            const long long q = (long long)({q});\n"
            f"            {prefix}_lo = q < {prefix}_lo ? q : {prefix}_lo;\n"
            f"            {prefix}_hi = q > {prefix}_hi ? q : {prefix}_hi;\n"
            "        }")


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", C.strip_comments(text))


# ---------------------------------------------------------------------------------------
# the shared expression around a call: the largest one whose value the key determines


def _shared_expression(nest: str, call: int, enclosing, read_only, scalars, block):
    """((start, end) in nest, key, evaluated conditionally within its statement) of the largest
    expression containing the call at `call` that the key determines, or None."""
    region = _expression_region(nest, call)
    if region is None:
        return None
    start, end = region
    try:
        tree = parse_expression(nest[start:end])
    except ValueError:
        return None
    path = _path_to(tree, call - start)
    for depth, node in enumerate(path):  # outermost first
        if node.kind == "paren":
            continue
        key = _key(node, nest[start:end], enclosing, read_only, scalars, block)
        if key is not None:
            conditional = any(_conditional_child(parent, child) for parent, child in zip(path[:depth], path[1:depth + 1]))
            return (start + node.start, start + node.end), key, conditional
    return None


def _conditional_child(parent: Expr, child: Expr) -> bool:
    """Is `child` evaluated only on some evaluations of `parent`?"""
    if parent.kind == "cond":
        return child is not parent.args[0]
    return parent.kind == "binary" and parent.op in ("&&", "||") and child is parent.args[1]


def _path_to(tree: Expr, offset: int) -> list[Expr]:
    """The nodes from the root down to the call starting at offset."""
    if tree.kind == "call" and tree.start == offset:
        return [tree]
    for child in tree.args:
        if child.start <= offset < child.end:
            below = _path_to(child, offset)
            if below:
                return [tree] + below
    return []


def _expression_region(text: str, pos: int) -> tuple[int, int] | None:
    """The span of the full expression that the token at pos belongs to: bounded by an
    assignment, a statement's end, a comma, or the parentheses of an if/while/switch."""
    depth, start = 0, None
    for j in range(pos - 1, -1, -1):
        c = text[j]
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth:
                depth -= 1
            elif c == "(" and re.search(r"\b(?:if|while|switch|for)\s*$", text[:j]):
                if re.search(r"\bfor\s*$", text[:j]):
                    return None
                start = j + 1
                break
        elif depth == 0 and (c in ";{}," or (c == "=" and _assignment_at(text, j))):
            start = j + 1
            break
    if start is None:
        return None
    depth = 0
    for j in range(start, len(text)):
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            if not depth:
                return start, j
            depth -= 1
        elif depth == 0 and c in ";,{}":
            return start, j
    return None


def _assignment_at(text: str, j: int) -> bool:
    """Is the `=` at j an assignment (plain or compound), not part of ==, <=, >= or !=?"""
    if text[j + 1:j + 2] == "=" or text[j - 1:j] == "=":
        return False
    if text[j - 1:j] in ("<", ">", "!"):
        return text[j - 2:j] in ("<<", ">>")
    return True


# ---------------------------------------------------------------------------------------
# the key of one expression: which thread index and counters its value depends on


def _key(node: Expr, text: str, enclosing: list[tuple[str, int]], read_only: set[str], scalars: set[str],
         block: tuple[int, int, int]) -> Key | None:
    """The key of the parsed expression `node` (spans into `text`); None when its value could
    differ between threads with the same key."""
    counters = dict(enclosing)
    allowed = BLOCK_IDS | scalars | set(counters)
    subscripts: list[Node] = []
    used: set[str] = set()

    def pure(n: Expr) -> bool:
        if n.kind == "index":
            base, index = n.args
            if base.kind != "name" or base.op not in read_only:
                return False
            try:
                subscripts.append(parse(text[index.start:index.end]))
            except Unproven:
                return False
            names = _ids(subscripts[-1])
            used.update(names)
            return all(name in allowed | THREAD_IDS for name in names)
        if n.kind == "name":
            used.add(n.op)
            return n.op in allowed
        if n.kind == "call" and n.op not in PURE_CALLS:
            return False
        return all(pure(child) for child in n.args)

    if not pure(node):
        return None
    q = _thread_index(subscripts, set(counters), block)
    if q is False:
        return None
    return Key(q, tuple((v, n) for v, n in enclosing if v in used))


def _ids(node: Node) -> list[str]:
    if node.kind == "id":
        return [node.op]
    return [name for child in node.args for name in _ids(child)]


def _subtrees(node: Node) -> list[Node]:
    return [node] + [s for child in node.args for s in _subtrees(child)]


def _covered(node: Node, q: Node) -> bool:
    """Every thread coordinate in node lies inside an occurrence of q."""
    if node == q:
        return True
    if node.kind == "id":
        return node.op not in THREAD_IDS
    return all(_covered(child, q) for child in node.args)


def _thread_index(subscripts: list[Node], counters: set[str], block: tuple[int, int, int]) -> Node | None | bool:
    """The index q through which the subscripts depend on the thread: of the subtrees that cover
    every thread coordinate, the one taking fewest values over the task's block (then the
    narrowest range); None when no subscript depends on the thread, False when sharing would not
    pay or the values cannot be told."""
    if not any(set(_ids(n)) & THREAD_IDS for n in subscripts):
        return None
    candidates = {s for n in subscripts for s in _subtrees(n)
                  if set(_ids(s)) & THREAD_IDS and not set(_ids(s)) & counters}
    best, best_rank = None, None
    threads = block[0] * block[1] * block[2]
    for cand in candidates:
        if not all(_covered(n, cand) for n in subscripts):
            continue
        try:
            values = {_value(cand, {"threadIdx.x": x, "tx": x, "threadIdx.y": y, "ty": y, "threadIdx.z": z, "tz": z,
                                    **_block_env(block)})
                      for z in range(block[2]) for y in range(block[1]) for x in range(block[0])}
        except (Unproven, ZeroDivisionError):
            continue
        rank = (len(values), max(values) - min(values), -len(_subtrees(cand)))
        if best_rank is None or rank < best_rank:
            best, best_rank = cand, rank
    if best is None or best_rank[0] * 2 > threads:
        return False
    return best


def _block_env(block: tuple[int, int, int]) -> dict[str, int]:
    env = {f"blockDim.{d}": v for d, v in zip("xyz", block)}
    return env | {n: 0 for n in ("blockIdx.x", "blockIdx.y", "blockIdx.z", "bx", "by", "bz")}


def _value(node: Node, env: dict[str, int]) -> int:
    """The integer value of a parsed index (C's truncating division); Unproven for a name
    without a value."""
    if node.kind == "num":
        return node.value
    if node.kind == "id":
        if node.op not in env:
            raise Unproven(f"no value for {node.op}")
        return env[node.op]
    if node.kind in ("cast", "neg", "opaque"):
        inner = _value(node.args[0], env)
        return {"cast": inner, "neg": -inner}.get(node.kind, (~inner if node.op == "~" else int(not inner)))
    a, b = (_value(x, env) for x in node.args)
    op = node.op
    if op in ("/", "%"):
        quotient = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return quotient if op == "/" else a - quotient * b
    return {"+": a + b, "-": a - b, "*": a * b, ">>": a >> b, "<<": a << b, "&": a & b, "|": a | b, "^": a ^ b,
            "<": int(a < b), "<=": int(a <= b), ">": int(a > b), ">=": int(a >= b), "==": int(a == b),
            "!=": int(a != b), "&&": int(bool(a and b)), "||": int(bool(a or b))}[op]


MEMO_CALLS = Transform("memo_calls", "expressions around costly math calls that threads repeat with the same "
                       "operands computed once per block and shared", memo_calls, fresh=True)
