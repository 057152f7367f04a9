"""Index-set splitting of thread loops whose subscripts are piecewise affine in the flat index.

TVM's generated kernels address memory through the flat thread index X = blockIdx.x * B +
threadIdx.x (B = blockDim.x) with divisions and remainders by constants: a transpose reads
`x[((X/2 % 6195) / 59) * 1652 + (X/2 / 6195) * 118 + X % 118]`. Vectorized as written, every
lane divides and the loads are gathers. Yet each subscript is a sum of terms c * floor((X+o)/d):
where no floor changes, the subscript is affine in X. This transformation walks a block's range
of X in such pieces: runs where every floor but the most frequently changing one (the chunk
floor) is constant, and within a run, chunks where the chunk floor is constant too. Per run the
quotients and each subscript's value are computed once; per chunk the values move on by a
constant; the chunk's loop (still `#pragma omp simd`, a constant trip count for full chunks)
reads and writes `ptr[v + slope * i]`, contiguous where the slope is 1. Floors by divisors below
MIN_RUN would make chunks too short: they stay in the loop as `(r + i) / d` on a carried
remainder. Besides subscripts, parenthesised non-negative integer expressions of X (the operands
of a padding condition) are rewritten the same way.

The normal form (`Form`) is found with exact rules valid for non-negative integers:
  tx = X - B*floor(X/B), bx = floor(X/B)                 (0 <= tx < B)
  floor((k*Q + R)/k) = Q + floor(R/k)                     (Q, R integer)
  floor((r*floor((X+o)/d) + r*s)/k) = floor((X + o + s*d)/(d*k/r))   where r divides k
  E % m = E - m*floor(E/m), E >> k = floor(E/2^k), E << k = E*2^k, E & (2^k-1) = E % 2^k
C's `/`, `%` and `>>` equal the floors only for a non-negative dividend: each is proven
non-negative from the expression's own text (sums, products, quotients of non-negative values)
or the subscript is refused. Any thread-dependent subscript outside these rules (a divisor that
leaves two terms, a memory read, a call, a product of two thread-dependent values, a name not
known to be an integer or written in the loop) leaves its loop alone. As in analysis/guards.py, arithmetic is assumed not to overflow (the CUDA source relies on
that too). The search still checks every variant against the reference.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..analysis import code as C
from ..analysis.guards import UNKNOWN, Node, Unproven, guard_text, parse
from ..base import Context, NotApplicable, Transform
from .launch_constants import launch_constants
from .specialize import specialize

BLOCK_INDEX = {"bx", "blockIdx.x"}
THREAD_INDEX = {"tx", "threadIdx.x"}
_THREAD_COORDS = re.compile(r"const uint3 threadIdx = make_uint3\(tx, (\w+), (\w+)\);")  # declared in the loop
THREAD_LOOP = re.compile(r"(?P<ind>[ \t]*)(?P<simd>#pragma omp simd\n[ \t]*)?"
                      r"for \(unsigned int tx = (?P<lo>\w+); tx < (?P<hi>[\w.]+); \+\+tx\) \{")
_INT_TYPES = r"(?:unsigned\s+|signed\s+)?(?:long\s+long|long|int)|unsigned|size_t|std::size_t|u?int(?:32|64)_t"
_LOCAL = re.compile(rf"(?<![\w.])(?:const\s+)?(?P<type>{_INT_TYPES})\s+(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<init>[^;{{}}]+);")
_ANY_DECL = re.compile(r"(?<![\w.])(?:const\s+)?(?P<type>(?:(?:unsigned|signed|long|short)\s+)*[A-Za-z_][\w:]*(?:\s*[*&])*)\s+"
                       r"(?P<name>[A-Za-z_]\w*)\s*"
                       r"(?:=|;|\[|\(|\))")
_SUBSCRIPT = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*)\s*\[")
_ASSIGNED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)|(?:\+\+|--)\s*([A-Za-z_]\w*)")
_NARROW = re.compile(r"short|char|int8|int16")
BLOCK_LOOP = "for (unsigned int bx = 0; bx < gridDim.x; ++bx)"  # the lowering's block loop (X's first term)
MIN_RUN = 4  # floors by smaller divisors stay inside the runs: runs that short cost more than they save
PREFIX = "idxrun_"
LATE = "@"  # marks a symbol that is an inner loop's counter: not part of a run's values
_COUNTER = re.compile(r"for \((?:int|unsigned int|unsigned) (\w+) = \d+; \1 < \d+; \+\+\1\)")


class Refused(ValueError):
    """A subscript outside the rules: its loop is left alone."""


# ---------------------------------------------------------------------------------------
# the normal form: sum c * floor((X + o) / d) + const + sum c * (invariant text)


@dataclass(frozen=True)
class Form:
    terms: tuple = ()  # ((d, o), c), sorted; (1, 0) is X itself; 0 <= o < d; c != 0
    const: int = 0
    symbols: tuple = ()  # (C text of a loop-invariant value, c), sorted

    @staticmethod
    def make(terms: dict, const: int, symbols: dict | None = None) -> "Form":
        return Form(tuple(sorted((k, c) for k, c in terms.items() if c)), const,
                    tuple(sorted((k, c) for k, c in (symbols or {}).items() if c)))

    @staticmethod
    def floor(d: int, o: int = 0) -> "Form":
        """floor((X + o) / d) with the offset reduced to [0, d)."""
        q, r = divmod(o, d)
        if d == 1:
            return Form.make({(1, 0): 1}, o)
        return Form.make({(d, r): 1}, q)

    def __add__(self, other: "Form") -> "Form":
        terms, symbols = dict(self.terms), dict(self.symbols)
        for k, c in other.terms:
            terms[k] = terms.get(k, 0) + c
        for k, c in other.symbols:
            symbols[k] = symbols.get(k, 0) + c
        return Form.make(terms, self.const + other.const, symbols)

    def scale(self, k: int) -> "Form":
        return Form.make({t: c * k for t, c in self.terms}, self.const * k, {s: c * k for s, c in self.symbols})

    @property
    def constant(self) -> int | None:
        return self.const if not self.terms and not self.symbols else None

    @property
    def slope(self) -> int:
        """The coefficient of X itself: the subscript's step within a run."""
        return dict(self.terms).get((1, 0), 0)

    @property
    def floors(self) -> list[tuple[int, int]]:
        return [k for k, _ in self.terms if k[0] > 1]

    def floor_div(self, k: int) -> "Form":
        """floor(self / k) for k > 0, when the result is again a Form."""
        if self.symbols:
            raise Refused("a division of a value not known at compile time")
        whole, rest = {}, {}
        for t, c in self.terms:
            q, r = divmod(c, k)
            whole[t] = q
            if r:
                rest[t] = r
        q0, r0 = divmod(self.const, k)
        result = Form.make(whole, q0)
        if not rest:
            return result  # floor(r0 / k) = 0 since 0 <= r0 < k
        if len(rest) > 1:
            raise Refused(f"floor(({_show(rest, r0)}) / {k}) is not one floor of X")
        ((d, o), r), = rest.items()
        if k % r or r0 % r:
            raise Refused(f"floor(({_show(rest, r0)}) / {k}) is not one floor of X")
        # floor((r*floor((X+o)/d) + r*s) / k) = floor((floor((X+o)/d) + s) / (k/r)) = floor((X+o+s*d) / (d*k/r))
        return result + Form.floor(d * (k // r), o + (r0 // r) * d)

    def mod(self, m: int) -> "Form":
        return self + self.floor_div(m).scale(-m)


def _show(terms: dict, const: int) -> str:
    return " + ".join([f"{c}*floor((X+{o})/{d})" for (d, o), c in terms.items()] + [str(const)])


# ---------------------------------------------------------------------------------------
# from a parsed subscript to its Form


@dataclass
class Scope:
    """What the names of a thread loop's body mean."""

    block: int  # B = blockDim.x
    launch: dict[str, int]  # blockDim.x, gridDim.y, ... -> value
    locals: dict = field(default_factory=dict)  # name -> Node (its initialiser, cast to its type) or UNKNOWN
    written: set = field(default_factory=set)  # names the body assigns: not invariant in the loop
    integral: set = field(default_factory=set)  # names the kernel declares with an integer type (and no other)
    outer: dict = field(default_factory=dict)  # threadIdx.y/z -> the enclosing loops' variables
    unsigned: set = field(default_factory=set)  # those of `integral` declared unsigned
    counters: set = field(default_factory=set)  # counters of the body's own loops with literal bounds

    def symbol(self, name: str) -> str:
        """A name of the enclosing code, invariant in the loop, as it is spelled before the loop;
        a counter of an inner loop as LATE + its name (added where the subscript is used)."""
        if name in self.counters:
            return LATE + name
        if name in self.written:
            raise Refused(f"{name} is written in the loop")
        if name not in self.integral and name not in self.launch and not re.fullmatch(r"(blockIdx|threadIdx)\.[yz]", name):
            raise Refused(f"{name} is not known to be an integer")
        if name.startswith("threadIdx."):
            if name not in self.outer:
                raise Refused(f"{name} has no name outside the loop")
            return self.outer[name]
        return name

    def varies(self, node: Node) -> bool:
        """Whether the value depends on threadIdx.x (a local the analysis cannot read may)."""
        if node.kind == "id":
            if node.op in THREAD_INDEX:
                return True
            known = self.locals.get(node.op)
            return known is UNKNOWN or (isinstance(known, Node) and self.varies(known))
        return any(self.varies(a) for a in node.args)

    def nonneg(self, node: Node) -> bool:
        """Proven >= 0 from the text (so C's `/`, `%`, `>>` on it are floors)."""
        if node.kind == "num":
            return node.value >= 0
        if node.kind == "id":
            known = self.locals.get(node.op)
            if isinstance(known, Node):
                return self.nonneg(known)
            return node.op in BLOCK_INDEX | THREAD_INDEX | self.counters or node.op in self.launch \
                or (node.op in self.unsigned and known is None) \
                or re.fullmatch(r"(blockIdx|threadIdx)\.[yz]", node.op) is not None
        if node.kind == "cast":
            return self.nonneg(node.args[0])
        if node.kind == "bin" and node.op in ("+", "*", "/", "%", ">>", "<<", "&"):
            return all(self.nonneg(a) for a in node.args) or (node.op == "&" and any(self.nonneg(a) for a in node.args))
        return False

    def text(self, node: Node) -> str:
        """C++ text of a loop-invariant value, readable before the thread loop (locals inlined)."""
        return guard_text(node, self._spelled)

    def _spelled(self, name: str) -> str:
        if name in self.counters:
            raise Refused(f"{name} changes inside the thread loop")
        known = self.locals.get(name)
        if isinstance(known, Node):
            return self.text(known)
        if known is UNKNOWN:
            raise Refused(f"{name} is a local the analysis cannot read")
        return self.symbol(name)


def normalise(node: Node, scope: Scope) -> Form:
    """The Form of an integer expression of the thread loop; raises Refused."""
    if not scope.varies(node):
        try:
            return _form(node, scope)
        except Refused:
            return Form(symbols=((scope.text(node), 1),))  # invariant in the loop: computed once per run
    return _form(node, scope)


def _form(node: Node, scope: Scope) -> Form:
    if node.kind == "num":
        return Form(const=node.value)
    if node.kind == "id":
        return _name_form(node.op, scope)
    if node.kind == "cast":
        if _NARROW.search(node.op):
            raise Refused(f"a cast to {node.op} may truncate")
        return normalise(node.args[0], scope)
    if node.kind == "neg":
        return normalise(node.args[0], scope).scale(-1)
    if node.kind == "bin":
        return _binary_form(node, scope)
    raise Refused(f"{node.op or node.kind} of a thread-dependent value")


def _name_form(name: str, scope: Scope) -> Form:
    B, one_block = scope.block, scope.launch["gridDim.x"] == 1
    if name in THREAD_INDEX:
        return Form.floor(1) if one_block else Form.make({(1, 0): 1, (B, 0): -B}, 0)  # tx = X - B*floor(X/B)
    if name in BLOCK_INDEX:
        return Form() if one_block else Form.floor(B)
    if name in scope.launch:
        return Form(const=scope.launch[name])
    known = scope.locals.get(name)
    if known is UNKNOWN:
        raise Refused(f"{name} is a local the analysis cannot read")
    if isinstance(known, Node):
        return normalise(known, scope)
    return Form(symbols=((scope.symbol(name), 1),))


def _binary_form(node: Node, scope: Scope) -> Form:
    op, (a, b) = node.op, node.args
    if op in ("+", "-"):
        right = normalise(b, scope)
        return normalise(a, scope) + (right if op == "+" else right.scale(-1))
    if op == "*":
        left, right = normalise(a, scope), normalise(b, scope)
        if left.constant is not None:
            return right.scale(left.constant)
        if right.constant is not None:
            return left.scale(right.constant)
        raise Refused("a product of two values not known at compile time")
    divisor = normalise(b, scope).constant
    if divisor is None:
        raise Refused(f"{op} by a value not known at compile time")
    if op == "<<":
        if not 0 <= divisor < 63:
            raise Refused("a shift out of range")
        return normalise(a, scope).scale(1 << divisor)
    if op not in ("/", "%", ">>", "&"):
        raise Refused(f"{op} of a thread-dependent value")
    if not scope.nonneg(a):
        raise Refused(f"{op} of a value not proven non-negative")
    dividend = normalise(a, scope)
    if op == ">>":
        if not 0 <= divisor < 63:
            raise Refused("a shift out of range")
        return dividend.floor_div(1 << divisor)
    if op == "&":
        if divisor < 0 or divisor & (divisor + 1):
            raise Refused("a mask that is not 2^k - 1")
        return dividend.mod(divisor + 1)
    if divisor <= 0:
        raise Refused(f"{op} by {divisor}")
    return dividend.floor_div(divisor) if op == "/" else dividend.mod(divisor)


def normalise_text(text: str, scope: Scope) -> Form:
    try:
        return normalise(parse(text), scope)
    except Unproven as exc:
        raise Refused(str(exc)) from None


# ---------------------------------------------------------------------------------------
# the thread loops of a kernel and their rewriting


@dataclass
class Subscript:
    """An expression of the loop body to rewrite: a subscript, or an operand (which keeps its C type)."""

    start: int  # offset of the text between the brackets, in the loop body
    end: int
    form: Form
    operand: bool = False


def index_runs(ctx: Context, code: str) -> str:
    """Thread loops whose thread-dependent subscripts all have a Form with a floor term run as
    runs of X in which every subscript is affine (see the module's docstring)."""
    if "> gridDim{};" not in code:
        code = _specialised(ctx, code)
        if code is None:
            raise NotApplicable("the launch's grid and block sizes cannot be made constants (several launch shapes)")
    changed, why = False, []
    for k in reversed(C.kernels(code)):
        try:
            code, changed = C.with_body(code, k, _kernel(code, k)), True
        except NotApplicable as reason:
            why.append(f"{k.name}: {reason}")
    if not changed:
        raise NotApplicable("; ".join(reversed(why)) or "no kernel")
    return code


def _specialised(ctx: Context, code: str) -> str | None:
    try:
        return specialize(ctx, code)
    except NotApplicable:
        return launch_constants(ctx, code)


def _kernel(code: str, k: C.KernelText) -> str:
    body = k.body(code)
    m = C.CONSTANT_EXTENTS.search(body)
    if m is None or BLOCK_LOOP not in body:
        raise NotApplicable("its grid and block sizes are not constants here, or its blocks are no loop over the grid")
    values = [int(v) for v in m.groups()]
    launch = {f"{n}.{d}": values[i * 3 + j] for i, n in enumerate(("gridDim", "blockDim")) for j, d in enumerate("xyz")}
    integral, unsigned = _integral_names(k, body)
    out, pos, edits, why = [], 0, 0, []
    for loop in THREAD_LOOP.finditer(body):
        if loop.start() < pos or body[:loop.start()].rstrip().rsplit("\n", 1)[-1].lstrip().startswith("#pragma"):
            continue  # inside a rewritten loop, or under a pragma that needs the loop itself
        close = C.matching_brace(body, loop.end() - 1)
        try:
            new = rewrite_loop(loop, body[loop.end():close], launch, integral, unsigned)
        except NotApplicable as reason:
            why.append(str(reason))
            continue
        out.append(body[pos:loop.start()] + new)
        pos, edits = close + 1, edits + 1
    if not edits:
        raise NotApplicable("; ".join(dict.fromkeys(why)) or "it has no thread loop to rewrite")
    out.append(body[pos:])
    return "".join(out)


def _integral_names(k: C.KernelText, body: str) -> tuple[set[str], set[str]]:
    """Names the kernel declares (parameters, locals) with an integer type and with no other
    type, and those of them always declared unsigned."""
    declared = [(m["name"], m["type"]) for m in _ANY_DECL.finditer(_blank_comments(body))]
    declared += [(C.param_name(p), p.rsplit(None, 1)[0] if " " in p.strip() else "") for p in C.split_params(k.params)]
    names = {name for name, _ in declared}
    other = {name for name, t in declared if not re.fullmatch(rf"(?:const\s+)?(?:{_INT_TYPES})", t.strip())}
    signed = {name for name, t in declared if not re.search(r"unsigned|size_t|uint", t)}
    return names - other, names - other - signed


def rewrite_loop(loop: re.Match, inner: str, launch: dict[str, int], integral: set[str] = frozenset(),
                 unsigned: set[str] = frozenset()) -> str:
    """The runs version of one thread loop (`inner` is the text between its braces), or NotApplicable."""
    clean = _blank_comments(inner)
    written = _written(clean)
    if re.search(r"\b(break|goto|return)\b", clean) or "tx" in written:
        # the inner loop must end where the thread loop's iteration ends
        raise NotApplicable("a thread loop leaves early (break, goto, return) or changes its counter")
    if re.search(r"(?m)^\s*(?!default\b)[A-Za-z_]\w*\s*:(?!:)", clean):
        raise NotApplicable("a thread loop holds a label (the rewritten body is emitted twice)")
    if "cudacpu::" in clean:
        # the runtime's calls dominate such a loop, not its subscripts
        raise NotApplicable("a thread loop calls the runtime (warp exchanges, atomics)")
    coords = _THREAD_COORDS.search(clean)
    outer = {"threadIdx.y": coords[1], "threadIdx.z": coords[2]} if coords else {}
    counters = _counters(clean)
    local = {name: v for name, v in _locals(clean).items() if name not in counters}
    scope = Scope(launch["blockDim.x"], launch, local, written, set(integral), outer, set(unsigned), counters)
    try:
        subscripts = _subscripts(clean, scope)
    except Refused as refused:
        raise NotApplicable(f"a subscript is outside the forms it rewrites ({refused})") from None
    rewrites = sorted(subscripts + _operands(clean, scope, subscripts), key=lambda s: s.start)
    if not any(_cuts(f, scope.block) and f[0] >= MIN_RUN for s in rewrites for f in s.form.floors):
        # the loop is already as simple as it gets
        raise NotApplicable(f"no subscript divides or wraps the thread index into runs of {MIN_RUN} or more "
                            f"shorter than a block")
    return _emit(loop, inner, rewrites, scope)


def _counters(body: str) -> set[str]:
    """Counters of the body's own `for (int c = A; c < B; ++c)` loops (A, B literals) that
    nothing else assigns or declares: the same for every thread, so a subscript may add them."""
    names = [m["name"] for m in _ANY_DECL.finditer(body)]
    assigned = [m[1] or m[2] for m in _ASSIGNED.finditer(body)]
    return {c for c in _COUNTER.findall(body) if names.count(c) == 1 and assigned.count(c) == 2}


def _blank_comments(text: str) -> str:
    """Comments replaced by spaces, so that offsets stay those of the original text."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: " " * len(m.group()), text, flags=re.S)


def _written(body: str) -> set[str]:
    return {m[1] or m[2] for m in _ASSIGNED.finditer(body)}


def _locals(body: str) -> dict:
    """Integer locals declared once and never written again: name -> initialiser (cast to the
    local's type); every other local of the body is UNKNOWN."""
    out: dict = {}
    names = [m["name"] for m in _ANY_DECL.finditer(body)]
    for name in names:
        out[name] = UNKNOWN
    for m in _LOCAL.finditer(body):
        name = m["name"]
        if names.count(name) != 1 or name in _written(body.replace(m.group(), "", 1)):
            continue
        try:
            init = parse(m["init"])
        except Unproven:
            continue
        type_name = " ".join(m["type"].split())
        out[name] = Node("cast", type_name, (init,), unsigned="unsigned" in type_name or type_name.startswith("u")
                         or "size_t" in type_name)
    return out


def _subscripts(body: str, scope: Scope) -> list[Subscript]:
    """Every thread-dependent subscript of the body with its Form; Refused when one has none."""
    found = []
    for m in _SUBSCRIPT.finditer(body):
        start = m.end()
        end = _closing_bracket(body, start)
        text = body[start:end]
        try:
            node = parse(text)
        except Unproven:
            if re.search(r"(?<![\w.])(tx|threadIdx\.x)\b", text) or any(
                    re.search(rf"(?<![\w.]){re.escape(n)}\b", text) for n, v in scope.locals.items()
                    if v is UNKNOWN or scope.varies(v)):
                raise Refused(f"[{text}] depends on the thread in a way the rules do not cover") from None
            continue  # a subscript that does not depend on the thread stays as it is
        if not scope.varies(node):
            continue
        found.append(Subscript(start, end, normalise(node, scope)))
    return found


def _operands(body: str, scope: Scope, subscripts: list[Subscript]) -> list[Subscript]:
    """Parenthesised integer expressions outside the subscripts (the operands of a condition,
    a local's initialiser) with a floor of X: rewritten too where proven non-negative (so no
    unsigned wrap-around differs from the Form's value). The others stay as they are."""
    found, skip_to = [], 0
    taken = [(s.start, s.end) for s in subscripts]
    for m in re.finditer(r"\(", body):
        start = m.end()
        if start <= skip_to or any(a <= start <= b for a, b in taken):
            continue
        if re.search(r"[\w\]]\s*$", body[max(0, m.start() - 80):m.start()]):
            continue  # a call's arguments or a statement's condition: only what is inside may be rewritten
        try:
            end = _closing_bracket(body, start, "()")
            node = parse(body[start:end])
            if not scope.varies(node) or not scope.nonneg(node):
                continue
            form = normalise(node, scope)
        except (Refused, Unproven, ValueError):
            continue
        if any(_cuts(f, scope.block) for f in form.floors):
            found.append(Subscript(start, end, form, operand=True))
            skip_to = end
    return found


def _closing_bracket(text: str, start: int, pair: str = "[]") -> int:
    """Offset of the bracket closing the one just before `start`."""
    depth = 1
    for i in range(start, len(text)):
        depth += {pair[0]: 1, pair[1]: -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise Refused("unbalanced brackets")


def _emit(loop: re.Match, inner: str, subscripts: list[Subscript], scope: Scope) -> str:
    """The block's range of X as runs where every floor by a divisor >= MIN_RUN but the
    smallest one (the chunk floor) is constant; each run as chunks where the chunk floor is
    constant too. Per run: the quotients and each subscript's value at its start; per chunk, the
    values move on by slope * n plus the chunk floor's coefficient. In the chunk's loop a
    subscript is `v + slope * i`, plus c * ((r + i) / d) for each floor by a divisor < MIN_RUN
    (r: its remainder at the chunk's start, carried from chunk to chunk)."""
    ind, simd = loop["ind"], loop["simd"] is not None
    floors = sorted({f for s in subscripts for f in s.form.floors})
    cutting = [f for f in floors if _cuts(f, scope.block) and f[0] >= MIN_RUN]
    inside = {f: f"{PREFIX}r{i}" for i, f in enumerate(f for f in floors if _cuts(f, scope.block) and f[0] < MIN_RUN)}
    chunk = min(cutting)
    quotient = {f: f"{PREFIX}q{i}" for i, f in enumerate(floors)}
    values: dict[Form, str] = {}
    for s in subscripts:
        values.setdefault(s.form, f"{PREFIX}v{len(values)}")
    x, c, cend, n = f"{PREFIX}x", f"{PREFIX}c", f"{PREFIX}cend", f"{PREFIX}n"
    lines = [f"{{  // tools.optimize: index runs (every subscript affine in X = blockIdx.x * {scope.block} + tx within a run)",
             f"    const long long {PREFIX}first = (long long)bx * {scope.block};",
             f"    const long long {PREFIX}hi = {PREFIX}first + {loop['hi']};",
             f"    for (long long {x} = {PREFIX}first + {loop['lo']}; {x} < {PREFIX}hi; ) {{",
             f"        long long {PREFIX}end = {PREFIX}hi;"]
    for (d, o), q in quotient.items():
        lines.append(f"        const long long {q} = ({x} + {o}) / {d};  // floor((X + {o}) / {d}) at the run's start")
        if (d, o) in cutting and (d, o) != chunk:
            lines.append(f"        if ({_next((d, o), q)} < {PREFIX}end) {PREFIX}end = {_next((d, o), q)};")
        if (d, o) in inside:
            lines.append(f"        unsigned int {inside[(d, o)]} = (unsigned int)({x} + {o} - {q} * {d});")
    for form, name in values.items():
        lines.append(f"        long long {name} = {_base_text(form, x, quotient)};")
    lines += [f"        long long {c} = {x}, {cend} = {_next(chunk, quotient[chunk])};",
              f"        if ({cend} > {PREFIX}end) {cend} = {PREFIX}end;",
              "        for (;;) {",
              f"            const int {n} = (int)({cend} - {c});",
              f"            const unsigned int {PREFIX}tx0 = (unsigned int)({c} - {PREFIX}first);"]
    body = _chunk_body(inner, subscripts, values, inside)
    if chunk[0] < scope.block:  # most chunks have the chunk floor's length: a constant trip count
        lines += [f"            if ({n} == {chunk[0]}) {{",
                  *("    " + line for line in _chunk_loop(str(chunk[0]), body, simd)),
                  "            } else {",
                  *("    " + line for line in _chunk_loop(n, body, simd)),
                  "            }"]
    else:
        lines += _chunk_loop(n, body, simd)
    lines += [f"            if ({cend} >= {PREFIX}end) break;"]
    for (d, o), r in inside.items():
        lines.append(f"            const unsigned int {r}c = ({r} + (unsigned int){n}) / {d}u;  // carried into the quotient")
        lines.append(f"            {r} = {r} + (unsigned int){n} - {r}c * {d}u;")
    for form, name in values.items():
        terms = dict(form.terms)
        steps = ([f"{_times(form.slope)}{n}"] if form.slope else []) + ([str(terms[chunk])] if chunk in terms else []) \
            + [f"{_times(terms[f])}(long long){r}c" for f, r in inside.items() if f in terms]
        if steps:
            lines.append(f"            {name} += {' + '.join(steps)};")
    lines += [f"            {c} = {cend};",
              f"            {cend} = {c} + {chunk[0]};",
              f"            if ({cend} > {PREFIX}end) {cend} = {PREFIX}end;",
              "        }",
              f"        {x} = {PREFIX}end;",
              "    }",
              "}"]
    return ind + ("\n" + ind).join(lines)


def _times(coeff: int) -> str:
    return "" if coeff == 1 else f"{coeff}LL * "


def _next(floor: tuple[int, int], quotient: str) -> str:
    """The first X after the run's start where floor((X + o) / d) changes."""
    d, o = floor
    return f"({quotient} + 1) * {d} - {o}" if o else f"({quotient} + 1) * {d}"


def _cuts(floor: tuple[int, int], block: int) -> bool:
    """Whether floor((X + o) / d) can change within a block (else it is the block's constant)."""
    d, o = floor
    return bool(o or d % block)


def _chunk_body(inner: str, subscripts: list[Subscript], values: dict, inside: dict) -> str:
    out, pos = [], 0
    i = f"{PREFIX}i"
    for s in subscripts:
        slope = s.form.slope
        text = values[s.form] + ("" if slope == 0 else f" + {i}" if slope == 1 else f" + {slope} * {i}")
        for name, coeff in s.form.symbols:
            if name.startswith(LATE):
                text += f" + {_times(coeff)}(long long){name[len(LATE):]}"
        for f, coeff in s.form.terms:
            if f in inside:
                step = f"(int)(({inside[f]} + (unsigned int){i}) / {f[0]}u)"
                text += f" + {step}" if coeff == 1 else f" + {coeff} * {step}"
        if s.operand:  # its type as written (decltype does not evaluate the divisions)
            text = f"(decltype({inner[s.start:s.end].strip()}))({text})"
        out.append(inner[pos:s.start] + text)
        pos = s.end
    out.append(inner[pos:])
    return "".join(out)


def _chunk_loop(count: str, body: str, simd: bool) -> list[str]:
    return [*(["            #pragma omp simd"] if simd else []),
            f"            for (int {PREFIX}i = 0; {PREFIX}i < {count}; ++{PREFIX}i) {{",
            f"                const unsigned int tx = {PREFIX}tx0 + (unsigned int){PREFIX}i;",
            body,
            "            }"]


def _base_text(form: Form, x: str, quotient: dict) -> str:
    parts = [(c, x if d == 1 else quotient[(d, o)]) for (d, o), c in form.terms]
    parts += [(c, f"(long long){text}") for text, c in form.symbols if not text.startswith(LATE)]
    text = " + ".join(name if c == 1 else f"{c} * {name}" for c, name in parts)
    if form.const or not text:
        text = f"{text} + {form.const}" if text else str(form.const)
    return text.replace("+ -", "- ")


INDEX_RUNS = Transform("index_runs", "thread loops split into runs of the flat index where every subscript is affine "
                       "(no divisions, contiguous accesses)", index_runs, fresh=True)
