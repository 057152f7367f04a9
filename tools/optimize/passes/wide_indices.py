"""Subscripts computed in 64 bits where CUDA code computes them in unsigned 32-bit arithmetic.

`unsigned int i = blockIdx.x * blockDim.x * 2 + threadIdx.x; ... x[i + blockDim.x]` is a common
CUDA idiom. On the CPU the subscript is a 32-bit value that may wrap, zero-extended to address
memory, and g++ cannot prove it affine in the thread loop's counter: the loop stays scalar
("complicated access pattern"). Computed in 64 bits, the same subscript vectorizes.

A subscript is rewritten when it is built with +, *, and /, %, <<, >> by constants, from launch
extents (threadIdx, blockIdx, blockDim, gridDim, the loop counters tx..bz), non-negative integer
constants, integer variables declared once in the thread loop from such expressions and never
changed, and the counters of the loops around the thread loop that only shrink from such a value
(`for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1)`, the tree reduction's `tid + s`). The
thread loops are the lowering's and those over the range of threads a guard admits (analysis/guards.py,
tx_hi at most blockDim.x). Such a subscript is never negative, and its largest value is a polynomial of the launch
extents. Where that polynomial stays below 2^31, the 32-bit and the 64-bit computations give the
same value. So the variant is exact for the launches where it holds. Each rewritten kernel checks
the bound when called, and calls its unchanged copy (`<name>_cudaopt_narrow`) where it fails.
Variables keep their types: only the subscripts change, with the variables' definitions
substituted into them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ..analysis import code as C
from ..analysis.expressions import Expr, parse_expression
from ..analysis.guards import LOWERING_DECL, RANGED_TX_LOOP
from ..base import Context, NotApplicable, Transform

LIMIT = 2**31
_EXTENTS = {"blockDim": "B", "gridDim": "G"}
_INDICES = {"threadIdx": "B", "blockIdx": "G"}
_COUNTERS = {"tx": ("B", "x"), "ty": ("B", "y"), "tz": ("B", "z"), "bx": ("G", "x"), "by": ("G", "y"), "bz": ("G", "z")}
_INT_TYPES = r"unsigned int|unsigned|uint32_t|int|int32_t"
_DECL = re.compile(rf"^[ \t]*(?:const\s+)?(?P<type>{_INT_TYPES})\s+(?P<name>\w+)\s*=\s*(?P<init>[^;{{}},]*);", re.M)
_BLOCK_INDEX = "const uint3 blockIdx = make_uint3(bx, by, bz);"
# the thread loop over the range of threads a guard admits (analysis/guards.py): tx_hi starts at blockDim.x and only shrinks
_RANGED_TX = re.compile(re.escape(RANGED_TX_LOOP))
_BLOCK_LOOPS = tuple(f"for (unsigned int {b} = 0; {b} < gridDim.{b[1]}; ++{b})" for b in ("bx", "by", "bz"))
_HEAD = re.compile(r"void (?P<name>\w+)\(dim3 (?P<g>gridDim(?:_arg)?), dim3 (?P<b>blockDim(?:_arg)?), "
                   r"std::size_t (?P<dyn>/\*\s*)?dynamicSharedBytes")

Extents = tuple[tuple[int, int, int], tuple[int, int, int]]  # (grid, block) of a launch


@dataclass
class Bound:
    """The largest value of a non-negative integer expression: for given launch extents, and as C
    (64-bit arithmetic) with `{G}` and `{B}` standing for the kernel's grid and block parameters.
    `wraps`: the bounds of the operands whose 32-bit value must be their true value (those of /, %,
    >> and conversions to int). + and * are exact modulo 2^32, so their operands may wrap."""
    value: Callable[[Extents], int]
    c: str
    wraps: tuple["Bound", ...] = ()

    def checks(self) -> list["Bound"]:
        """Every bound that must stay below 2^31: this one and those of the operands."""
        return [self, *(inner for operand in self.wraps for inner in operand.checks())]


def _dims(which: str, extents: Extents) -> tuple[int, int, int]:
    return extents[0] if which == "G" else extents[1]


def _literal(node: Expr, text: str) -> int | None:
    if node.kind != "num":
        return None
    digits = re.sub(r"[uUlL]+$", "", text[node.start:node.end])
    try:
        return int(digits, 0)
    except ValueError:
        return None


def _extent(which: str, axis: str, minus: int) -> Bound:
    i = "xyz".index(axis)
    c = f"(unsigned long long){{{which}}}.{axis}"
    return Bound(lambda e: _dims(which, e)[i] - minus, f"({c} - 1)" if minus else c)


class _Subscripts:
    """Bounds and 64-bit forms of the integer expressions of one thread loop's body."""

    def __init__(self, counters: dict[str, Bound] | None = None, macros: dict[str, tuple[int, bool]] | None = None) -> None:
        self.names: dict[str, tuple[Expr, str]] = {}  # variable -> its definition (tree, text)
        self.counters = dict(counters or {})  # enclosing loops' counters that only shrink -> their first value's bound
        self.macros = dict(macros or {})  # `#define BS 16` -> (16, unsigned?)
        self.unsigned_names: set[str] = set(self.counters) | {name for name, (_, u) in self.macros.items() if u}

    def unsigned(self, node: Expr, text: str) -> bool:
        """Whether C computes the expression in unsigned arithmetic (the case g++ cannot vectorize)."""
        if node.kind == "name":
            return node.op.partition(".")[0] in (*_EXTENTS, *_INDICES, *_COUNTERS) or node.op in self.unsigned_names
        if node.kind == "num":
            return "u" in text[node.start:node.end].lower()
        if node.kind == "cast":
            return node.op.replace("const ", "") in ("unsigned int", "unsigned", "uint32_t")
        return any(self.unsigned(arg, text) for arg in node.args)

    def bound(self, node: Expr, text: str) -> Bound | None:
        kind = node.kind
        if kind == "num":
            value = _literal(node, text)
            return None if value is None or value < 0 else Bound(lambda e, v=value: v, str(value))
        if kind == "name":
            return self._name_bound(node.op)
        if kind == "paren":
            return self.bound(node.args[0], text)
        if kind == "cast":
            inner = self.bound(node.args[0], text)
            if inner is None or not re.fullmatch(rf"(?:const )?(?:{_INT_TYPES})", node.op):
                return None
            return inner if self.unsigned(node, text) else Bound(inner.value, inner.c, (inner,))
        if kind != "binary":
            return None
        left, right = node.args
        a = self.bound(left, text)
        if a is None:
            return None
        if node.op in ("+", "*"):
            b = self.bound(right, text)
            if b is None:
                return None
            wraps = a.wraps + b.wraps
            if node.op == "+":
                return Bound(lambda e: a.value(e) + b.value(e), f"({a.c} + {b.c})", wraps)
            return Bound(lambda e: a.value(e) * b.value(e), f"({a.c} * {b.c})", wraps)
        k = _literal(right, text)
        if k is None or k < 0 or (k == 0 and node.op in ("/", "%")) or (node.op in ("<<", ">>") and k > 31):
            return None
        if node.op == "/":
            return Bound(lambda e: a.value(e) // k, f"({a.c} / {k})", (a,))
        if node.op == "%":
            return Bound(lambda e: k - 1, str(k - 1), (a,))
        if node.op == "<<":
            return Bound(lambda e: a.value(e) << k, f"({a.c} << {k})", a.wraps)
        if node.op == ">>":
            return Bound(lambda e: a.value(e) >> k, f"({a.c} >> {k})", (a,))
        return None

    def _name_bound(self, name: str) -> Bound | None:
        base, _, axis = name.partition(".")
        if axis in ("x", "y", "z") and base in _EXTENTS:
            return _extent(_EXTENTS[base], axis, 0)
        if axis in ("x", "y", "z") and base in _INDICES:
            return _extent(_INDICES[base], axis, 1)
        if name in _COUNTERS:
            return _extent(*_COUNTERS[name], 1)
        if name in self.counters:
            return self.counters[name]
        if name in self.macros and self.macros[name][0] >= 0:
            value = self.macros[name][0]
            return Bound(lambda e: value, str(value))
        if name in self.names:
            tree, text = self.names[name]
            inner = self.bound(tree, text)
            # an int variable holds its definition's value only below 2^31
            if inner is None or name in self.unsigned_names:
                return inner
            return Bound(inner.value, inner.c, (inner,))
        return None

    def wide(self, node: Expr, text: str) -> str:
        """The expression computed in 64 bits (bounded expressions only)."""
        kind = node.kind
        if kind == "num":
            return text[node.start:node.end]
        if kind == "name":
            if node.op in self.names:
                tree, defined = self.names[node.op]
                return f"({self.wide(tree, defined)})"
            return f"(std::size_t){node.op}"
        if kind == "paren":
            return f"({self.wide(node.args[0], text)})"
        if kind == "cast":
            return self.wide(node.args[0], text)
        left, right = node.args
        return f"{self.wide(left, text)} {node.op} {self.wide(right, text)}"


# `for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1)`, the tree reduction's loop around the thread
# loops: s never exceeds its first value, so that value's bound is s's (the thread loop's `tid + s`)
_SHRINKING = re.compile(r"for \((?:unsigned int|unsigned|uint32_t) (?P<name>\w+) = (?P<init>[^;{}]+); (?P=name) (?:>|>=|!=) "
                        r"\d+u?; (?P=name) (?:>>= ?\d+|/= ?[2-9]\d*)\) \{")


def _shrinking_counters(body: str, at: int, macros: dict[str, tuple[int, bool]]) -> dict[str, Bound]:
    """The counters of the shrinking loops around position `at` of a kernel's body that their
    bodies never assign, with their first values' bounds."""
    found = {}
    for m in _SHRINKING.finditer(body, 0, at):
        close = C.matching_brace(body, m.end() - 1)
        if close < at or C.changes(m["name"], body[m.end():close]):
            continue
        try:
            bound = _Subscripts(macros=macros).bound(parse_expression(m["init"]), m["init"])
        except ValueError:
            continue
        if bound is not None:
            found[m["name"]] = bound
    return found


def _widen_body(body: str, launches: list[Extents], counters: dict[str, Bound] | None = None,
                macros: dict[str, tuple[int, bool]] | None = None) -> tuple[str, set[str]] | None:
    """One thread loop's body with its bounded subscripts in 64 bits, and the C bounds to check;
    None when no subscript qualifies."""
    if body.count(LOWERING_DECL) != 1 or body.count("threadIdx = ") != 1:
        return None
    scope = _Subscripts(counters, macros)
    declared_at: dict[str, int] = {}
    for m in _DECL.finditer(body):
        name = m["name"]
        if name in declared_at or name in _COUNTERS or name in scope.counters or C.brace_depth(body, m.start()) != 0:
            continue
        rest = body[m.end():]
        if C.changes(name, rest) or len(re.findall(rf"\b\w+\s+{name}\s*[=;,\[]", body)) != 1:
            continue
        try:
            tree = parse_expression(m["init"])
        except ValueError:
            continue
        if scope.bound(tree, m["init"]) is not None:
            scope.names[name] = (tree, m["init"])
            if m["type"] in ("unsigned int", "unsigned", "uint32_t"):
                scope.unsigned_names.add(name)
            declared_at[name] = m.end()
    edits, checks = [], set()
    for m in re.finditer(r"(?<=[\w\]])\s*\[", body):
        open_index = m.end() - 1
        try:
            close = C.call_end(body, open_index)
            text = body[open_index + 1:close]
            tree = parse_expression(text)
        except ValueError:
            continue
        used = set(re.findall(r"\b\w+\b", text)) & set(declared_at)
        if not scope.unsigned(tree, text) or any(declared_at[name] > open_index for name in used):
            continue
        bound = scope.bound(tree, text)
        if bound is None or any(b.value(e) >= LIMIT for b in bound.checks() for e in launches):
            continue
        wide = scope.wide(tree, text)
        if "+" in wide or "*" in wide:  # a counter alone (zero-extended) vectorizes as it is
            edits.append((open_index + 1, close, wide))
            checks |= {b.c for b in bound.checks()}
    for start, end, wide in reversed(edits):
        body = body[:start] + wide + body[end:]
    return (body, checks) if edits else None


def _widen_kernel(code: str, k: C.KernelText, launches: list[Extents]) -> str:
    """Kernel k with 64-bit subscripts, preceded by its unchanged copy for the launches whose
    bounds fail; NotApplicable when nothing qualifies."""
    head = _HEAD.match(code, k.start)
    body = k.body(code)
    if head is None or code[:k.start].rstrip().endswith(">"):
        raise NotApplicable("it is a template, or its signature is not the lowering's")
    # blockIdx and the block counters as the lowering defines them, wherever they are defined
    if body.count(_BLOCK_INDEX) == 0 or body.count(_BLOCK_INDEX) != body.count("blockIdx = "):
        raise NotApplicable("its blockIdx is not set where the lowering's block loops set it")
    for loop in _BLOCK_LOOPS:
        if body.count(loop) != body.count(loop[:loop.index("=")]):
            raise NotApplicable("its block loops are not the lowering's")
    macros = C.macro_values(code)
    nests = sorted([*re.finditer(C.THREAD_NEST, body), *re.finditer(_RANGED_TX, body)], key=lambda m: m.start())
    new_body, checks, pos = [], set(), 0
    for nest in nests:
        if nest.start() < pos:
            continue  # inside a thread loop already widened
        close = C.matching_brace(body, nest.end() - 1)
        widened = _widen_body(body[nest.end():close], launches, _shrinking_counters(body, nest.start(), macros), macros)
        if widened is None:
            continue
        new_body += [body[pos:nest.end()], widened[0]]
        checks |= widened[1]
        pos = close
    if not checks:
        raise NotApplicable("no subscript of its threads is an unsigned 32-bit sum or product that the task's "
                            "launches keep below 2^31")
    new_body.append(body[pos:])
    names = [C.param_name(p) for p in C.split_params(k.params.lstrip(", "))]
    if any(name is None for name in names):
        raise NotApplicable("a parameter has no name to pass on to its 32-bit copy")
    narrow = f"{k.name}_cudaopt_narrow"
    args = ", ".join([head["g"], head["b"], "0" if head["dyn"] else "dynamicSharedBytes", *names])
    fits = " && ".join(f"{c.format(G=head['g'], B=head['b'])} < {LIMIT}ull" for c in sorted(checks))
    dispatch = (f"\n    if (!({fits}))  {C.MARKER} 64-bit subscripts proven exact below 2^31 only\n"
                f"        return {narrow}({args});")
    original = k.text(code)
    copy = original.replace(f"void {k.name}(", f"void {narrow}(", 1)
    wide = code[k.start:k.body_open + 1] + dispatch + "".join(new_body) + "}"
    return f"{copy}\n\n{wide}"


def wide_indices(ctx: Context, code: str) -> str:
    out, changed, why = code, False, []
    for k in reversed(C.kernels(code)):
        launches = [launch.dims() for launch in ctx.launches_of(k.name)]
        try:
            if not launches:
                raise NotApplicable("the task does not launch it")
            if f"void {k.name}_cudaopt_narrow(" in code:
                raise NotApplicable("its subscripts are 64-bit already")
            out, changed = out[:k.start] + _widen_kernel(code, k, launches) + out[k.end:], True
        except NotApplicable as reason:
            why.append(f"{k.name}: {reason}")
    if not changed:
        raise NotApplicable("; ".join(reversed(why)) or "no kernel")
    return out


WIDE_INDICES = Transform("wide_indices", "subscripts in 64-bit arithmetic where unsigned 32-bit arithmetic kept "
                         "loops scalar (bounds checked per call)", wide_indices)
