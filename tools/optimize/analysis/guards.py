"""Which threads of a block a guard admits, proven from the guard's integer arithmetic.

A thread region of the lowered code often reads `decls; if (G) S` or `decls; if (G) continue; S`
(CUDA's `if (i < n)` and `if (i >= n) return;`). When G is built from comparisons of expressions
that are monotone in threadIdx.x (sums, products by constants, divisions and shifts by
constants, casts) the admitted threads form one contiguous range of x. That range is found at
run time by binary search on the guard itself (so C++'s own conversions decide the values), and
the region then visits only that range with no condition left in the loop: g++ vectorizes the
loop, which it cannot do with the masked loads a guard needs.

Monotonicity is proven conservatively: anything the rules below do not cover (remainders,
masks, calls, memory reads, subtraction that could wrap around in unsigned arithmetic, a signed
value compared in unsigned arithmetic) makes the guard unproven, and the region is left alone.
Arithmetic is assumed not to overflow, as in the CUDA source it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .code import KernelText, brace_depth, macro_values, matching_brace, split_params, statement_end, template_values

_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9a-fA-F]+[uUlL]*|\d+[uUlL]*)(?![\w.])|(?P<id>[A-Za-z_]\w*(?:\.[xyz])?)"
                    r"|(?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>()!~&|^?:,\[\]]))")
_CAST = re.compile(r"\((?P<type>(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:long\s+long|long|int|short|char|size_t|std::size_t|"
                   r"u?int(?:8|16|32|64)_t|unsigned))\)")
_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
           "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
UNSIGNED_BUILTINS = {f"{v}.{d}" for v in ("threadIdx", "blockIdx", "blockDim", "gridDim") for d in "xyz"} | \
    {"tx", "ty", "tz", "bx", "by", "bz"}


UNKNOWN = object()  # env value of a local the analysis cannot follow


class Unproven(ValueError):
    """The guard's shape is outside what the analysis proves."""


@dataclass(frozen=True)
class Node:
    kind: str  # num, id, cast, neg, bin, opaque
    op: str = ""
    args: tuple = ()
    value: int = 0
    unsigned: bool = False  # num: its suffix; cast: the target type


def parse(text: str) -> Node:
    tokens = _tokenize(text)
    node, rest = _binary(tokens, 0, 1)
    if rest != len(tokens):
        raise Unproven(f"unparsed text after {tokens[rest - 1]!r}")
    return node


def _tokenize(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = _CAST.sub(lambda m: f" @cast:{'u' if _is_unsigned_type(m['type']) else 's'}:{'_'.join(m['type'].split())} ", text)
    out, pos = [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        if text.startswith("@cast:", pos):
            end = text.index(" ", pos)
            out.append(text[pos:end])
            pos = end
            continue
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise Unproven(f"cannot read {text[pos:pos + 12]!r}")
        out.append(m.group().strip())
        pos = m.end()
    return out


def _is_unsigned_type(t: str) -> bool:
    return "unsigned" in t or "size_t" in t or t.startswith("uint")


def _binary(tokens: list[str], i: int, min_prec: int) -> tuple[Node, int]:
    left, i = _unary(tokens, i)
    while i < len(tokens) and _BINARY.get(tokens[i], 0) >= min_prec:
        op = tokens[i]
        right, i = _binary(tokens, i + 1, _BINARY[op] + 1)
        left = Node("bin", op, (left, right))
    if i < len(tokens) and tokens[i] == "?":
        raise Unproven("conditional expression")
    return left, i


def _unary(tokens: list[str], i: int) -> tuple[Node, int]:
    if i >= len(tokens):
        raise Unproven("expression ends early")
    tok = tokens[i]
    if tok.startswith("@cast:"):
        inner, i = _unary(tokens, i + 1)
        _, sign, type_name = tok.split(":")
        return Node("cast", type_name.replace("_", " "), (inner,), unsigned=sign == "u"), i
    if tok == "-":
        inner, i = _unary(tokens, i + 1)
        return Node("neg", args=(inner,)), i
    if tok == "+":
        return _unary(tokens, i + 1)
    if tok in ("!", "~"):
        inner, i = _unary(tokens, i + 1)
        return Node("opaque", tok, (inner,)), i
    if tok == "(":
        inner, i = _binary(tokens, i + 1, 1)
        if i >= len(tokens) or tokens[i] != ")":
            raise Unproven("unbalanced parentheses")
        return _postfix(tokens, i + 1, inner)
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)([uUlL]*)", tok)
    if m:
        return Node("num", value=int(m[1], 0), unsigned="u" in m[2].lower()), i + 1
    if re.fullmatch(r"[A-Za-z_]\w*(?:\.[xyz])?", tok):
        return _postfix(tokens, i + 1, Node("id", tok))
    raise Unproven(f"unexpected {tok!r}")


def _postfix(tokens: list[str], i: int, node: Node) -> tuple[Node, int]:
    if i < len(tokens) and tokens[i] in ("(", "["):
        raise Unproven("call or memory read in a guard")
    return node, i


# ---------------------------------------------------------------------------------------
# monotonicity in threadIdx.x


@dataclass(frozen=True)
class Shape:
    mono: int  # 0 invariant, +1 non-decreasing, -1 non-increasing in x
    signed: bool | None  # the C type's signedness (None: unknown)
    nonneg: bool  # the value is known to be >= 0


def shape(node: Node, env: dict[str, "Shape | Node"]) -> Shape:
    """How `node` varies with x. `env` maps names to their shape (x itself, parameters) or to
    the expression a local was initialised with (inlined). Raises Unproven."""
    if node.kind == "num":
        return Shape(0, not node.unsigned, True)
    if node.kind == "id":
        known = env.get(node.op)
        if known is UNKNOWN:
            raise Unproven(f"{node.op} is a local whose value is not read")
        if isinstance(known, Node):
            return shape(known, env)
        if known is not None:
            return known
        unsigned = node.op in UNSIGNED_BUILTINS
        return Shape(0, False if unsigned else None, unsigned)
    if node.kind == "cast":
        inner = shape(node.args[0], env)
        return Shape(inner.mono, not node.unsigned, inner.nonneg or node.unsigned)
    if node.kind == "neg":
        inner = shape(node.args[0], env)
        if inner.mono and inner.signed is not True:
            raise Unproven("negation in unsigned arithmetic")
        return Shape(-inner.mono, inner.signed, False)
    if node.kind == "opaque":
        inner = shape(node.args[0], env)
        if inner.mono:
            raise Unproven(f"{node.op} of a thread-dependent value")
        return Shape(0, True, False)
    return _binary_shape(node, env)


def _binary_shape(node: Node, env) -> Shape:
    a, b = (shape(x, env) for x in node.args)
    op = node.op
    signed = _result_signed(a, b)
    if not a.mono and not b.mono:
        return Shape(0, signed if op not in _BOOLEAN else True, op in ("+", "*", "/", ">>", "<<") and a.nonneg and b.nonneg)
    if op == "+":
        _no_wrap(a, b, signed)
        return Shape(_combine(a.mono, b.mono), signed, a.nonneg and b.nonneg)
    if op == "-":
        if signed is not True:
            raise Unproven("subtraction of a thread-dependent value may wrap around in unsigned arithmetic")
        return Shape(_combine(a.mono, -b.mono), signed, False)
    if op == "*":
        dep, const = (a, node.args[1]) if a.mono else (b, node.args[0])
        if const.kind != "num":
            raise Unproven("product of a thread-dependent value by a non-constant")
        if signed is not True and dep.signed is not False and not dep.nonneg:
            raise Unproven("product in unsigned arithmetic of a value that may be negative")
        return Shape(dep.mono if const.value else 0, signed, dep.nonneg)
    if op in ("/", ">>", "<<"):
        if b.mono or node.args[1].kind != "num" or (op == "/" and node.args[1].value <= 0):
            raise Unproven(f"{op} by a non-constant or thread-dependent value")
        if signed is not True and not a.nonneg:
            raise Unproven(f"{op} in unsigned arithmetic of a value that may be negative")
        return Shape(a.mono, signed, a.nonneg)
    raise Unproven(f"{op} of a thread-dependent value")


_BOOLEAN = {"<", "<=", ">", ">=", "==", "!=", "&&", "||"}


def _result_signed(a: Shape, b: Shape) -> bool | None:
    """C's usual arithmetic conversions, as far as the shapes know the types."""
    if a.signed is False or b.signed is False:
        return False
    if a.signed is None or b.signed is None:
        return None
    return True


def _no_wrap(a: Shape, b: Shape, signed: bool | None) -> None:
    if signed is True:
        return
    for s in (a, b):  # in unsigned arithmetic a negative operand wraps around
        if not s.nonneg and s.signed is not False:
            raise Unproven("sum in unsigned arithmetic with an operand that may be negative")


def _combine(m1: int, m2: int) -> int:
    if m1 and m2 and m1 != m2:
        raise Unproven("terms vary in opposite directions")
    return m1 or m2


# ---------------------------------------------------------------------------------------
# admitted ranges


@dataclass(frozen=True)
class Bound:
    """One end of the admitted range: `first_true(n, pred)` with pred false, then true in x."""

    side: str  # "lo" or "hi"
    pred: str  # C++ boolean expression of x, monotone false -> true
    uniform: bool = False  # the same for every x: one evaluation tells (no search)
    guess: str | None = None  # where the comparison's one side is x itself: the other side, likely the end


def conjuncts(node: Node, op: str) -> list[Node]:
    if node.kind == "bin" and node.op == op:
        return conjuncts(node.args[0], op) + conjuncts(node.args[1], op)
    return [node]


def admitted_bounds(guard: str, env: dict, *, admits_when_true: bool) -> list[Bound]:
    """Bounds of the x range where the region runs: the guard is `if (G) S`
    (admits_when_true) or `if (G) continue;` (G excludes). Raises Unproven."""
    node = parse(guard)
    parts = conjuncts(node, "&&" if admits_when_true else "||")
    bounds: list[Bound] = []
    for part in parts:
        bounds += _comparison_bounds(part, env, admits_when_true)
    return bounds


def guard_text(node: Node, name: Callable[[str], str] = lambda n: n) -> str:
    """C++ text of a parsed expression (fully parenthesised); `name` spells its identifiers."""
    if node.kind == "num":
        return str(node.value) + ("u" if node.unsigned else "")
    if node.kind == "id":
        return name(node.op)
    if node.kind == "cast":
        return f"(({node.op}){guard_text(node.args[0], name)})"
    if node.kind == "neg":
        return f"(-{guard_text(node.args[0], name)})"
    if node.kind == "opaque":
        return f"({node.op}{guard_text(node.args[0], name)})"
    return f"({guard_text(node.args[0], name)} {node.op} {guard_text(node.args[1], name)})"


def _comparison_bounds(part: Node, env: dict, admits_when_true: bool) -> list[Bound]:
    if part.kind != "bin" or part.op not in ("<", "<=", ">", ">=", "=="):
        raise Unproven("a guard term that is not a comparison")
    left, right = (shape(x, env) for x in part.args)
    d = _combine(left.mono, -right.mono)
    dep = left if left.mono else right
    other = right if left.mono else left
    if d and dep.signed is not False and other.signed is not True and not dep.nonneg:
        raise Unproven("a signed thread-dependent value compared in unsigned arithmetic")
    op = part.op
    l_text, r_text = guard_text(part.args[0]), guard_text(part.args[1])
    if not admits_when_true:  # `if (L op R) continue;` admits where !(L op R)
        if op == "==":
            raise Unproven("`==` as an exclusion")
        op = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}[op]
    uniform = d == 0  # neither side varies with x (a row's or the block's own test)
    guess = _end_guess(part, env, op, d)
    if op == "==":  # an interval: from where L stops being below R to where it gets above
        below, above = ("<", ">") if d >= 0 else (">", "<")
        return [Bound("lo", f"!({l_text} {below} {r_text})", uniform), Bound("hi", f"({l_text} {above} {r_text})", uniform)]
    cond = f"({l_text} {op} {r_text})"
    # L - R non-decreasing (d >= 0): `<` holds on a prefix, `>` on a suffix; the other way round otherwise
    holds_on_prefix = (op in ("<", "<=")) == (d >= 0)
    return [Bound("hi", f"!{cond}", uniform, guess)] if holds_on_prefix else [Bound("lo", cond, uniform, guess)]


def _unwrapped(node: Node, env: dict) -> Node:
    """The expression behind integer casts and the locals it reads (their initialisers)."""
    while (node.kind == "id" and isinstance(env.get(node.op), Node)) or node.kind == "cast":
        node = env[node.op] if node.kind == "id" else node.args[0]
    return node


def _is_x(node: Node, env: dict) -> bool:
    """Whether the expression is the thread's x index itself (through integer casts and the locals
    initialised with it, which are casts here)."""
    node = _unwrapped(node, env)
    return node.kind == "id" and node.op in ("tx", "threadIdx.x")


def _is_x_plus(node: Node, env: dict) -> bool:
    """Whether the expression is x plus (or minus) values the same for every thread, through
    integer casts and locals (`i = blockIdx.x * blockDim.x + tid + n * stride`)."""
    node = _unwrapped(node, env)
    if node.kind == "bin" and node.op in ("+", "-"):
        a, b = node.args
        return (_is_x_plus(a, env) and shape(b, env).mono == 0) or \
            (node.op == "+" and _is_x_plus(b, env) and shape(a, env).mono == 0)
    return node.kind == "id" and node.op in ("tx", "threadIdx.x")


def _end_guess(part: Node, env: dict, op: str, d: int) -> str | None:
    """`x < R` ends at R, `x <= R` at R + 1 (and so on, either side), `x + c < R` at R - c: the guess
    first_true_near confirms with two calls of the predicate (the tree reduction's `tid < s`
    searched log2 of the block per round, a strided loop's `i < n` once per trip). It is evaluated
    at x = 0, where `R - (x + c)` is R - c. None where neither side is x plus uniform values or
    the other side varies with x."""
    left, right = part.args
    x_left = _is_x_plus(left, env)
    if d == 0 or op == "==" or x_left == _is_x_plus(right, env):
        return None
    x_side, other = (left, right) if x_left else (right, left)
    if shape(other, env).mono:
        return None
    inclusive = op in ("<=", ">") if x_left else op in (">=", "<")  # x <= R and x > R (R >= x, R < x) end at R + 1
    text = guard_text(other) if _is_x(x_side, env) else f"{guard_text(other)} - {guard_text(x_side)}"
    return f"({text}) + 1" if inclusive else text


# ---------------------------------------------------------------------------------------
# the region's text: `decls; if (G) S` or `decls; if (G) continue; S`

LOWERING_DECL = "const uint3 threadIdx = make_uint3(tx, ty, tz);"
# the thread loop over the range a guard admits (Region.bounds computes tx_lo and tx_hi)
RANGED_TX_LOOP = "for (unsigned int tx = tx_lo; tx < tx_hi; ++tx) {"
# the C++ helpers that the bounds of a guarded region call (first_true_near, at_least, ...)
GUARD_RANGE = """// ---- tools.optimize: thread ranges of guarded regions ----------------------------------------
#ifndef CUDAOPT_GUARD_RANGE
#define CUDAOPT_GUARD_RANGE
#include <type_traits>
namespace cudaopt {
// First t in [0, n) where a predicate that is false, then true (monotone in t) holds; n if none.
template <class Pred>
inline unsigned first_true(unsigned n, Pred pred) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    if (pred(mid)) hi = mid; else lo = mid + 1;
  }
  return lo;
}
// The same where `guess` (the comparison's other side, for a guard on the thread index itself such as
// `tid < s`) is likely the answer: two calls of the predicate confirm it, else the binary search.
template <class T, class Pred>
inline unsigned first_true_near(unsigned n, T guess, Pred pred) {
  if constexpr (std::is_integral_v<T>) {
    const unsigned g = guess < T(0) ? 0u : static_cast<unsigned long long>(guess) > n ? n : static_cast<unsigned>(guess);
    if ((g == 0 || !pred(g - 1)) && (g == n || pred(g))) return g;
  }
  return first_true(n, pred);
}
inline unsigned at_least(unsigned a, unsigned b) { return a > b ? a : b; }
inline unsigned at_most(unsigned a, unsigned b) { return a < b ? a : b; }
}  // namespace cudaopt
#endif
"""
_TID_DECL = re.compile(r"^const (?:unsigned int (\w+) = \(tz|std::size_t (\w+) = \(std::size_t\(tz\)) \* blockDim\.y \+ ty\) "
                       r"\* blockDim\.x \+ tx;$")
_ONE_TRIP = re.compile(r"for \(int (\w+) = 0; \1 < 1; \+\+\1\) \{")  # TVM's `#pragma unroll` loops of one trip
_INT_DECL = re.compile(r"^(?:const\s+)?(?P<type>(?:unsigned\s+|signed\s+)?(?:long\s+long|long|int|short|size_t|std::size_t|"
                       r"u?int(?:8|16|32|64)_t|unsigned))\s+(?P<name>\w+)\s*=\s*(?P<init>[^;]+);$", re.S)
_OTHER_DECL = re.compile(r"^(?:const\s+)?(?:[\w:]+\s*(?:<[^;]*>)?\s*[*&]*\s+)+(?P<name>\w+)\s*(?:=[^;]*|\[[^;]*\])?;$", re.S)
_KEYWORDS = {"return", "continue", "break", "goto", "delete", "throw", "else", "case", "do"}
X_SHAPE = Shape(1, False, True)


@dataclass
class Region:
    """A thread loop's body rewritten to run unconditionally over [tx_lo, tx_hi)."""

    bounds: list[str]  # statements computing tx_lo and tx_hi (before the loop)
    body: str  # the new loop body


def guarded_region(loop_body: str, params: dict[str, Shape]) -> Region | None:
    """The region without its guard, and how to compute the admitted range; None when the
    guard is absent or not proven to admit one contiguous range of threadIdx.x."""
    text = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", loop_body, flags=re.S)).strip()
    decls: list[tuple[str, str | None, str]] = []  # (statement, local name, its init when integral)
    env: dict = {"threadIdx.x": X_SHAPE, "tx": X_SHAPE, **params}
    while text and not text.startswith("if"):
        if (m := _ONE_TRIP.match(text)) and matching_brace(text, m.end() - 1) == len(text) - 1 and m[1] not in env \
                and not re.search(r"\b(?:break|continue)\b", text):
            # the region ends in a loop of one trip: its body, with the counter a constant
            text = f"const int {m[1]} = 0;\n" + text[m.end():-1].strip()
        end = statement_end(text)
        if end is None:
            return None
        stmt, text = text[:end + 1].strip(), text[end + 1:].strip()
        if stmt == LOWERING_DECL:
            decls.append((stmt, None, ""))
        elif (m := _TID_DECL.match(stmt)):
            env[m[1] or m[2]] = X_SHAPE
            decls.append((stmt, m[1] or m[2], ""))
        elif (m := _INT_DECL.match(stmt)) and not _has_effects(m["init"]):
            try:
                env[m["name"]] = Node("cast", " ".join(m["type"].split()), (parse(m["init"]),),
                                      unsigned=_is_unsigned_type(m["type"]))
            except Unproven:
                env[m["name"]] = UNKNOWN
            decls.append((stmt, m["name"], m["init"]))
        elif (m := _OTHER_DECL.match(stmt)) and stmt.split()[0] not in _KEYWORDS and not _has_effects(stmt.partition("=")[2]):
            env[m["name"]] = UNKNOWN
            decls.append((stmt, m["name"], ""))
        else:
            return None  # a statement with effects runs for every thread before the guard
    guard, then, rest = _if_statement(text)
    if guard is None:
        return None
    excludes = then.strip() == "continue;"
    if not excludes and rest.strip():
        return None  # more than the guarded statement follows
    after = rest if excludes else then
    if any(_assigns(after, n) for n in set(re.findall(r"[A-Za-z_]\w*", guard))):
        return None  # the region changes what its guard reads
    try:
        bounds = admitted_bounds(guard, env, admits_when_true=not excludes)
    except Unproven:
        return None
    needed = _needed_decls(decls, guard, env)
    head = "[&](unsigned int tx) -> bool { " + " ".join(needed) + (" " if needed else "") + "return "
    lines = ["unsigned int tx_lo = 0, tx_hi = blockDim.x;  // tools.optimize: the threads the guard admits"]
    for b in bounds:
        fold = "at_least" if b.side == "lo" else "at_most"
        lambda_ = f"{head}{b.pred}; }}"
        # a predicate the same for every x is first true at 0 or nowhere: one call, not a binary search
        # (stride_loops' trips over rows of a 2D block tested `r < rows` log2(blockDim.x) times per row)
        if b.uniform:
            first = f"(blockDim.x && ({lambda_})(0u) ? 0u : blockDim.x)"
        elif b.guess:
            guess = head.replace(" -> bool", "")
            first = f"cudaopt::first_true_near(blockDim.x, ({guess}{b.guess}; }})(0u), {lambda_})"
        else:
            first = f"cudaopt::first_true(blockDim.x, {lambda_})"
        lines.append(f"tx_{b.side} = cudaopt::{fold}(tx_{b.side}, {first});")
    body = "\n".join(stmt for stmt, _, _ in decls) + "\n" + after.strip()
    return Region(lines, body)


def _assigns(text: str, name: str) -> bool:
    """Does text assign `name` (=, a compound assignment, ++ or --)?"""
    n = re.escape(name)
    return bool(re.search(rf"(?<![\w.]){n}\s*(?:(?:<<|>>|[-+*/%&|^])?=(?!=)|\+\+|--)|(?:\+\+|--)\s*{n}\b", text))


def _has_effects(expr: str) -> bool:
    """Calls, assignments and increments (reads and arithmetic are fine)."""
    return bool(re.search(r"[A-Za-z_]\w*\s*\(|(?<![=!<>])=(?!=)|\+\+|--", expr))


def _if_statement(text: str) -> tuple[str | None, str, str]:
    """(condition, then-statement, what follows) of `if (...) stmt ...`; (None, "", "") otherwise."""
    m = re.match(r"if\s*\(", text)
    if not m:
        return None, "", ""
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    if depth:
        return None, "", ""
    cond, rest = text[m.end():i - 1], text[i:].strip()
    if rest.startswith("{"):
        close = matching_brace(rest, 0)
        then, after = rest[:close + 1], rest[close + 1:]
    else:
        end = statement_end(rest)
        if end is None:
            return None, "", ""
        then, after = rest[:end + 1], rest[end + 1:]
    if re.match(r"\s*else\b", after):
        return None, "", ""
    return cond, then, after


def _needed_decls(decls, guard: str, env: dict) -> list[str]:
    """The declarations the guard reads, directly or through other locals, in their order."""
    wanted = set(re.findall(r"[A-Za-z_]\w*", guard))
    for stmt, name, init in reversed(decls):
        if name in wanted:
            wanted |= set(re.findall(r"[A-Za-z_]\w*", init))
    if "threadIdx" in wanted:
        wanted.add(None)  # the lowering's threadIdx declaration
    return [stmt for stmt, name, _ in decls if name in wanted and (name is None or env.get(name) is not UNKNOWN)]


def kernel_shapes(code: str, k: KernelText) -> dict[str, Shape]:
    """Shapes of what a kernel's guards may read besides the thread: its scalar parameters, its
    integral template parameters and the integer macros (`#define BLOCK 256`: a signed
    non-negative constant)."""
    macros = {name: Shape(0, not unsigned, True) for name, (_, unsigned) in macro_values(code).items()}
    templates = param_shapes([f"{t} {name}" for name, t in template_values(code, k).items()])
    return {**macros, **templates, **param_shapes(split_params(k.params))}


def param_shapes(params: list[str]) -> dict[str, Shape]:
    """Shapes of a kernel's scalar parameters, from their declared types."""
    out = {}
    for p in params:
        m = re.match(r"^(?:const\s+)?(?P<type>[\w\s:]+?)\s+(?P<name>\w+)$", p.strip())
        if not m or "*" in p:
            continue
        t = m["type"]
        unsigned = _is_unsigned_type(t)
        signed = None if not re.search(r"int|long|short|char|size_t|unsigned|float|double", t) else not unsigned
        out[m["name"]] = Shape(0, signed, unsigned)
    return out


# ---------------------------------------------------------------------------------------
# guards that do not change in a loop, moved out of it

COUNTED_FOR = re.compile(r"for \(int (?P<var>\w+) = 0; (?P=var) < (?P<n>\d+); \+\+(?P=var)\) \{")


def hoisted_guards(body: str) -> str | None:
    """A thread loop's body with guards that a counted loop re-tests every trip moved out of
    it, then neighbouring statements under the same guard joined:

        if (G) { A }  for (int k = 0; k < N; ++k) { if (G) { B } }
    ->  if (G) { { A } for (int k = 0; k < N; ++k) { B } }

    (TVM's reductions: the initialisation and every step under the thread's guard), the shape
    guarded_region knows. Exact: G has no call or memory read (it parses as a guard), nothing
    under it assigns a name it reads, the loop counter is not among them, and N > 0, so the
    original evaluated G too, always to the same value. None when nothing changed."""
    text = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", " ", body, flags=re.S))
    changed = False
    while (new := _hoist_one(text) or _join_one(text)) is not None:
        text, changed = new, True
    return text if changed else None


def _invariant_guard(guard: str, statements: str, counter: str | None = None) -> bool:
    try:
        parse(guard)
    except Unproven:
        return False
    names = set(re.findall(r"[A-Za-z_]\w*", guard))
    if counter in names:
        return False
    return not any(_assigns(statements, n) for n in names)


def _hoist_one(text: str) -> str | None:
    for m in COUNTED_FOR.finditer(text):
        close = matching_brace(text, m.end() - 1)
        guard, then, rest = _if_statement(text[m.end():close].strip())
        if guard is None or rest.strip() or int(m["n"]) == 0 or not then.startswith("{") \
                or not _invariant_guard(guard, then, m["var"]):
            continue
        return f"{text[:m.start()]}if ({guard}) {{\n{m.group()[:-2]} {then}\n}}{text[close + 1:]}"
    return None


def _join_one(text: str) -> str | None:
    for m in re.finditer(r"(?<![\w.])if\s*\(", text):
        if brace_depth(text, m.start()):
            continue  # only statements of the thread loop's own body
        guard, then, rest = _if_statement(text[m.start():])
        if guard is None or not then.startswith("{"):
            continue
        guard2, then2, rest2 = _if_statement(rest.lstrip())
        if guard2 is None or not then2.startswith("{") or re.sub(r"\s+", "", guard2) != re.sub(r"\s+", "", guard) \
                or not _invariant_guard(guard, then):
            continue
        end = len(text) - len(rest2)  # (the second statement's trailing blanks may move past it)
        return f"{text[:m.start()]}if ({guard}) {{\n{then}\n{then2}\n}}{text[end:]}"
    return None
