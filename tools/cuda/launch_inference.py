"""Launch configurations for kernel tasks that give none (HPCTransEval's published records).

`infer(task, module)` returns every kernel's launch (grid, block, arguments) in launch order,
the scratch buffers the kernels pass between them that the task lacks, and a readable account
of how each figure was found -- or no launches and the reason. The kernels' code is read here
(tokens, integer expressions evaluated with numpy over all threads, blocks and loop
iterations); nothing runs.

- Block size: the first argument of `__launch_bounds__(N)`; a kernel that reads `blockDim` works
  with any size and gets a default (256, (16, 16), (8, 8, 4)); otherwise the step of a global
  index from one block to the next (`out[blockIdx.x * 1024 + threadIdx.x]` -> 1024) or trial
  sizes. When the kernel indexes threadIdx.y/z the total is split over the dimensions it uses:
  every split is tried, ordered by TVM's index forms (`threadIdx.x * 16 + threadIdx.y` -> 16
  threads along y; a warp-shuffle tree starting at offset 16 -> 32 along x), and the split kept
  is the one whose stores write every element of the outputs and whose accesses (buffers,
  shared and local arrays) stay in bounds. Masks and shifts (`threadIdx.x & 31`,
  `threadIdx.y >> 1`), `/` and `%` are evaluated exactly, as C does.
- Grid size per blockIdx dimension the kernel reads: one past the last block that stores
  anything, found by bisection over that block index with every thread and loop iteration
  evaluated. TVM's guards end the stores (`if (blockIdx.x * 32 + (threadIdx.x >> 5) < 75)` ->
  3 blocks of 1024); an unguarded store ends where its index passes the buffer's extent (one
  thread per element); stores into an intermediate of unknown extent fall back to the loads.
- Order: the order of definition when every kernel then reads only what an earlier one wrote
  (TVM's, which reuses intermediates), else a topological order over the buffers one kernel
  writes and another reads. Pointer parameters that name no task buffer are intermediates:
  scratch buffers sized by the highest element their kernels access.
- Arguments by parameter name: TVM names buffer `x`'s parameter `x_ptr`, the C reference `x`
  (C++ keywords get a trailing underscore in converted tasks).

Code this reader does not follow (an index through memory, a while loop) leaves that access
unchecked; a kernel whose grid nothing bounds is refused with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from tools.spec import Buffer, Launch, Task

_TOKEN = re.compile(r"""
    (?P<num>0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][+-]?\d+)?[uUlLfF]*|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[uUlLfF]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<op><<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|::|[-+*/%<>=!&|^~?:;,.(){}\[\]])
  | (?P<ws>\s+)
""", re.X)
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)

BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
TYPE_WORDS = {
    "int", "unsigned", "signed", "long", "short", "char", "bool", "float", "double", "void", "const", "volatile",
    "uint", "uchar", "ushort", "size_t", "half", "__half", "__nv_bfloat16", "auto", "register", "static",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
}
_VECTOR_TYPE = re.compile(r"^(?:u?char|u?short|u?int|u?long|longlong|float|double|half)([1-4])$")
INT_TYPES = {"int", "unsigned", "signed", "long", "short", "char", "uint", "uchar", "ushort", "size_t", "bool",
             "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"}


class Unknown(Exception):
    """An expression or statement this reader does not evaluate."""


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n\\]+)$", re.M)


def tokenize(source: str) -> list[str]:
    """C tokens, with object-like macros (`#define BLOCK 256`) expanded and other directives dropped."""
    text = _COMMENTS.sub(" ", source)
    macros = {m.group(1): _lex(m.group(2)) for m in _DEFINE.finditer(text)}
    return _expand(_lex(_PREPROCESSOR.sub("", text)), macros)


def _expand(tokens: list[str], macros: dict[str, list[str]], depth: int = 0) -> list[str]:
    if depth > 8 or not macros:
        return tokens
    out: list[str] = []
    for tok in tokens:
        out += _expand(macros[tok], macros, depth + 1) if tok in macros else [tok]
    return out


def _lex(text: str) -> list[str]:
    tokens, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise Unknown(f"unexpected character {text[pos]!r}")
        if m.lastgroup != "ws":
            tokens.append(m.group())
        pos = m.end()
    return tokens


def is_type_word(tok: str) -> bool:
    return tok in TYPE_WORDS or bool(_VECTOR_TYPE.match(tok))


def vector_width(tok: str) -> int:
    m = _VECTOR_TYPE.match(tok)
    return int(m.group(1)) if m else 1


def matching(tokens: list[str], i: int) -> int:
    """Index of the bracket closing the one at tokens[i]."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opening, closing, depth = tokens[i], pairs[tokens[i]], 0
    for j in range(i, len(tokens)):
        if tokens[j] == opening:
            depth += 1
        elif tokens[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    raise Unknown(f"unbalanced {opening}")


def text_of(tokens: list[str]) -> str:
    out = " ".join(tokens)
    for a, b in (("( ", "("), (" )", ")"), (" [", "["), ("[ ", "["), (" ]", "]"), (" . ", "."), (" ,", ",")):
        out = out.replace(a, b)
    return out


# --- expressions -------------------------------------------------------------------

_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
           "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


@dataclass(frozen=True)
class Node:
    kind: str  # num, var, unary, binary, ternary, call, opaque
    value: object = None
    args: tuple["Node", ...] = ()


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.toks, self.i = tokens, 0

    def peek(self, k: int = 0) -> str | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise Unknown(f"expected {expected or 'more'} in {text_of(self.toks)}")
        self.i += 1
        return tok

    def expression(self, min_prec: int = 0) -> Node:
        left = self.unary()
        while True:
            op = self.peek()
            if op == "?" and min_prec == 0:
                self.take()
                then = self.expression()
                self.take(":")
                other = self.expression()
                left = Node("ternary", None, (left, then, other))
                continue
            prec = _BINARY.get(op or "")
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.expression(prec + 1)
            left = Node("binary", op, (left, right))

    def unary(self) -> Node:
        tok = self.peek()
        if tok in ("-", "+", "!", "~"):
            self.take()
            return Node("unary", tok, (self.unary(),))
        if tok in ("*", "&"):  # dereference / address: a memory access, not an integer
            self.take()
            self.unary()
            return Node("opaque", "memory")
        if tok == "(" and self._is_cast():
            end = matching(self.toks, self.i)
            words = self.toks[self.i + 1:end]
            self.i = end + 1
            operand = self.unary()
            if "*" in words or not all(w in INT_TYPES or w in ("const", "volatile") for w in words):
                return Node("opaque", "cast")
            return operand
        return self.postfix(self.primary())

    def _is_cast(self) -> bool:
        j = self.i + 1
        words = []
        while j < len(self.toks) and self.toks[j] != ")":
            words.append(self.toks[j])
            j += 1
        return bool(words) and all(is_type_word(w) or w == "*" for w in words)

    def primary(self) -> Node:
        tok = self.take()
        if tok == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if re.match(r"\d|\.\d", tok) or tok.startswith(("0x", "0X")):
            return _number(tok)
        if re.match(r"[A-Za-z_]", tok):
            if self.peek() == "." and self.peek(1) in ("x", "y", "z", "w"):  # threadIdx.x, an int2's .y
                self.take()
                return Node("var", f"{tok}.{self.take()}")
            if self.peek() == "(":
                self.take()
                args = []
                while self.peek() != ")":
                    args.append(self.expression())
                    if self.peek() == ",":
                        self.take()
                self.take(")")
                return Node("call", tok, tuple(args))
            return Node("var", tok)
        raise Unknown(f"unexpected {tok!r}")

    def postfix(self, node: Node) -> Node:
        while self.peek() in ("[", ".", "->"):
            if self.take() == "[":
                self.expression()
                self.take("]")
            else:
                self.take()
            node = Node("opaque", "member or element")
        return node


def _number(tok: str) -> Node:
    body = tok.rstrip("uUlL")
    try:
        return Node("num", int(body, 0))
    except ValueError:
        return Node("opaque", "floating-point literal")


def parse_expr(tokens: list[str]) -> Node:
    parser = _Parser(tokens)
    node = parser.expression()
    if parser.i != len(tokens):
        raise Unknown(f"cannot read {text_of(tokens)}")
    return node


def names_in(node: Node, locals_: dict[str, Node | None], seen: frozenset = frozenset()) -> set[str]:
    """Free variables of an expression, through local definitions."""
    if node.kind == "var":
        name = str(node.value)
        if name in locals_ and name not in seen:
            local = locals_[name]
            if local is None:
                raise Unknown(f"{name} is assigned more than once")
            return names_in(local, locals_, seen | {name})
        return {name}
    if node.kind == "opaque":
        raise Unknown(str(node.value))
    out: set[str] = set()
    for arg in node.args:
        out |= names_in(arg, locals_, seen)
    return out


def _c_div(a, b):
    b = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) ^ (b < 0), -q, q)


def _ints(v):
    return v.astype(np.int64) if isinstance(v, np.ndarray) and v.dtype == bool else v


_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _c_div, "%": lambda a, b: a - _c_div(a, b) * np.where(b == 0, 1, b),
    "<<": lambda a, b: np.left_shift(a, b), ">>": lambda a, b: np.right_shift(a, b),
    "&": lambda a, b: np.bitwise_and(a, b), "|": lambda a, b: np.bitwise_or(a, b), "^": lambda a, b: np.bitwise_xor(a, b),
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "&&": lambda a, b: np.logical_and(a, b), "||": lambda a, b: np.logical_or(a, b),
}


def evaluate(node: Node, env: dict, locals_: dict[str, Node | None]):
    """Integer value of an expression; env maps variables to numpy arrays (broadcastable) or ints."""
    kind = node.kind
    if kind == "num":
        return np.int64(node.value)
    if kind == "var":
        name = str(node.value)
        if name in env:
            return env[name]
        if locals_.get(name) is not None:
            value = evaluate(locals_[name], env, locals_)  # type: ignore[arg-type]
            env[name] = value  # definitions are pure: evaluate each once per environment
            return value
        raise Unknown(f"unknown value {name}")
    if kind == "unary":
        v = _ints(evaluate(node.args[0], env, locals_))
        return {"-": lambda: -v, "+": lambda: v, "!": lambda: np.logical_not(v), "~": lambda: np.invert(v)}[node.value]()
    if kind == "binary":
        a = _ints(evaluate(node.args[0], env, locals_))
        b = _ints(evaluate(node.args[1], env, locals_))
        return _OPS[node.value](a, b)  # type: ignore[index]
    if kind == "ternary":
        c, a, b = (evaluate(arg, env, locals_) for arg in node.args)
        return np.where(c, a, b)
    if kind == "call" and node.value in ("min", "max") and len(node.args) == 2:
        a, b = (_ints(evaluate(arg, env, locals_)) for arg in node.args)
        return np.minimum(a, b) if node.value == "min" else np.maximum(a, b)
    raise Unknown(f"cannot evaluate {kind} {node.value}")


# --- statements ----------------------------------------------------------------------


@dataclass(frozen=True)
class Loop:
    var: str
    start: Node | None
    end: Node | None  # exclusive
    step: int


@dataclass(frozen=True)
class Guard:
    cond: Node
    negated: bool
    text: str


@dataclass
class Access:
    base: str
    index: Node | None  # None: not readable
    write: bool
    width: int
    guards: tuple[Guard, ...]
    loops: tuple[Loop, ...]
    atomic: bool = False
    statement: int = 0  # which statement or expression of the body, in order
    stage: int = 0  # which top-level statement of the body


@dataclass
class KernelBody:
    accesses: list[Access] = field(default_factory=list)
    locals: dict[str, Node | None] = field(default_factory=dict)
    arrays: dict[str, int | None] = field(default_factory=dict)  # shared/local arrays and their lengths
    coordinates: set[str] = field(default_factory=set)  # threadIdx.x, blockIdx.y, blockDim.x, ...
    problems: list[str] = field(default_factory=list)
    text: str = ""  # the body's tokens, spaced for pattern matching
    launch_bounds: list[str] | None = None  # tokens of the first __launch_bounds__ argument
    outer_arrays: set[str] = field(default_factory=set)  # arrays declared by top-level statements


def kernel_definition(tokens: list[str], name: str) -> tuple[list[str], list[str]] | None:
    """(declaration tokens before the name, body tokens) of the definition of __global__ function `name`."""
    for i, tok in enumerate(tokens):
        if tok != name or i + 1 >= len(tokens) or tokens[i + 1] != "(":
            continue
        head = tokens[max(0, i - 16):i]
        if "__global__" not in head:
            continue
        close = matching(tokens, i + 1)
        j = close + 1
        while j < len(tokens) and tokens[j] not in ("{", ";"):
            j += 1
        if j < len(tokens) and tokens[j] == "{":
            return head[max((k + 1 for k, t in enumerate(head) if t in (";", "}")), default=0):], tokens[j + 1:matching(tokens, j)]
    return None


class _Walker:
    def __init__(self, body: KernelBody) -> None:
        self.body = body
        self.statements = 0
        self.stage = 0

    def block(self, toks: list[str], guards: tuple, loops: tuple) -> None:
        i = 0
        while i < len(toks):
            i, guards = self.statement(toks, i, guards, loops)

    def _stmt_end(self, toks: list[str], i: int) -> int:
        """Index just past the statement starting at i."""
        if toks[i] == "{":
            return matching(toks, i) + 1
        if toks[i] in ("if", "for", "while", "switch"):
            j = matching(toks, i + 1) + 1
            j = self._stmt_end(toks, j)
            if toks[i] == "if" and j < len(toks) and toks[j] == "else":
                j = self._stmt_end(toks, j + 1)
            return j
        if toks[i] == "do":
            j = self._stmt_end(toks, i + 1)
            return self._stmt_end(toks, j)
        j = i
        while toks[j] != ";":
            j = matching(toks, j) + 1 if toks[j] in "([{" else j + 1
        return j + 1

    def statement(self, toks: list[str], i: int, guards: tuple, loops: tuple) -> tuple[int, tuple]:
        tok = toks[i]
        end = self._stmt_end(toks, i)
        if tok == "{":
            self.block(toks[i + 1:end - 1], guards, loops)
        elif tok == "if":
            close = matching(toks, i + 1)
            cond_toks = toks[i + 2:close]
            self.scan_expr(cond_toks, guards, loops)
            then_end = self._stmt_end(toks, close + 1)
            guard = self._guard(cond_toks)
            then = toks[close + 1:then_end]
            if guard is not None:
                self.block(then, guards + (guard,), loops)
            else:
                self.block(then, guards, loops)
            if then_end < end:  # else branch
                other = Guard(guard.cond, True, guard.text) if guard else None
                self.block(toks[then_end + 1:end], guards + ((other,) if other else ()), loops)
            elif then in (["return", ";"], ["{", "return", ";", "}"]) and guard is not None:
                return end, guards + (Guard(guard.cond, True, guard.text),)  # early exit guards the rest
        elif tok == "for":
            close = matching(toks, i + 1)
            loop = self._loop(toks[i + 2:close], guards, loops)
            self.block(toks[close + 1:end], guards, loops + (loop,))
        elif tok in ("while", "do", "switch"):
            self.body.problems.append(f"a {tok} statement")
            self.mark_assigned(toks[i:end])
            self.scan_expr(toks[i:end], guards, loops)
        else:
            self.simple(toks[i:end - 1], guards, loops)
        return end, guards

    def _guard(self, cond_toks: list[str]) -> Guard | None:
        try:
            return Guard(parse_expr(cond_toks), False, text_of(cond_toks))
        except Unknown:
            return Guard(Node("opaque", "condition"), False, text_of(cond_toks))

    def _loop(self, header: list[str], guards: tuple, loops: tuple) -> Loop:
        parts, depth, cur = [], 0, []
        for tok in header:
            depth += tok in "([{"
            depth -= tok in ")]}"
            if tok == ";" and depth == 0:
                parts.append(cur)
                cur = []
            else:
                cur.append(tok)
        parts.append(cur)
        for part in parts:
            self.scan_expr(part, guards, loops)
        init, cond, step = (parts + [[], [], []])[:3]
        try:
            eq = init.index("=")
            var = init[eq - 1]
            start = parse_expr(init[eq + 1:])
            if cond[:2] not in ([var, "<"], [var, "<="]):
                raise Unknown("loop condition")
            end = parse_expr(cond[2:])
            if cond[1] == "<=":
                end = Node("binary", "+", (end, Node("num", 1)))
            if step in (["++", var], [var, "++"]):
                stride = 1
            elif step[:2] == [var, "+="] and len(step) == 3 and step[2].isdigit():
                stride = int(step[2])
            else:
                raise Unknown("loop step")
            self.body.locals.pop(var, None)
            return Loop(var, start, end, stride)
        except (Unknown, ValueError, IndexError):
            var = init[init.index("=") - 1] if "=" in init else "?"
            self.body.locals[var] = None
            return Loop(var, None, None, 1)

    def mark_assigned(self, toks: list[str]) -> None:
        for j, tok in enumerate(toks):
            nxt = toks[j + 1] if j + 1 < len(toks) else ""
            prev = toks[j - 1] if j else ""
            if re.match(r"[A-Za-z_]", tok) and (nxt in ("=", "+=", "-=", "*=", "/=", "++", "--", "<<=", ">>=", "&=", "|=")
                                                 or prev in ("++", "--")):
                if tok in self.body.locals:
                    self.body.locals[tok] = None

    def simple(self, toks: list[str], guards: tuple, loops: tuple) -> None:
        if not toks:
            return
        words = [t for t in toks if t not in ("__shared__", "alignas", "__align__", "extern", "static")]
        # declaration: TYPE... NAME [ '[' N ']' ] [= EXPR]
        j = 0
        if "alignas" in toks or "__align__" in toks:
            k = toks.index("alignas" if "alignas" in toks else "__align__")
            words = [t for t in toks[:k] + toks[matching(toks, k + 1) + 1:] if t not in ("__shared__", "extern", "static")]
        while j < len(words) and (is_type_word(words[j]) or words[j] == "*"):
            j += 1
        if j and j < len(words) and re.match(r"[A-Za-z_]\w*$", words[j]):
            name = words[j]
            rest = words[j + 1:]
            if rest[:1] == ["["]:
                close = matching(rest, 0)
                try:
                    self.body.arrays[name] = int(evaluate(parse_expr(rest[1:close]), {}, {}))
                except Unknown:
                    self.body.arrays[name] = None
                return
            if rest[:2] == ["=", f"make_{words[j - 1]}"] and re.match(r"u?(?:int|long)[2-4]$", words[j - 1]):
                self._vector_local(name, rest[1:], guards, loops)
                return
            if rest[:1] == ["="] and all(w in INT_TYPES or w in ("const", "volatile") for w in words[:j]):
                value = rest[1:]
                self.scan_expr(value, guards, loops)
                try:
                    node = parse_expr(value)
                except Unknown:
                    node = None
                self.body.locals[name] = None if name in self.body.locals else node
                return
            if rest[:1] == ["="] or not rest:
                self.scan_expr(rest[1:], guards, loops)
                self.body.locals[name] = None  # a non-integer local, or one declared without a value
                return
        self.mark_assigned(toks)
        self.scan_expr(toks, guards, loops)

    def _vector_local(self, name: str, value: list[str], guards: tuple, loops: tuple) -> None:
        """`int2 v = make_int2(a, b)`: TVM's gathered indices, read back as v.x and v.y."""
        self.scan_expr(value, guards, loops)
        try:
            node = parse_expr(value)
        except Unknown:
            node = Node("opaque", "vector")
        for lane, arg in zip("xyzw", node.args if node.kind == "call" else ()):
            key = f"{name}.{lane}"
            self.body.locals[key] = None if key in self.body.locals else arg

    def scan_expr(self, toks: list[str], guards: tuple, loops: tuple) -> None:
        """Record the array accesses and thread coordinates in a statement or expression."""
        self.statements += 1
        assign = _assignment_at(toks)
        for j, tok in enumerate(toks):
            if tok in BUILTINS and j + 2 < len(toks) and toks[j + 1] == ".":
                self.body.coordinates.add(f"{tok}.{toks[j + 2]}")
            written = assign is not None and j < assign
            if tok == "[" and j:
                base = _subscript_base(toks, j)
                if base:
                    close = matching(toks, j)
                    self._access(base, toks[j + 1:close], written, 1, guards, loops, toks, j)
            elif tok == "*" and (j == 0 or toks[j - 1] in ("=", "(", ",", "return", "?", ":")) and toks[j + 1:j + 2] == ["("]:
                self._vector_access(toks, j, written, guards, loops)
            elif tok in ("atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicCAS", "atomicAnd",
                         "atomicOr", "atomicXor", "atomicInc", "atomicDec") and toks[j + 1:j + 2] == ["("]:
                k = j + 2  # the address, `&x[i]` or TVM's `(&(x[i]))`
                while k < len(toks) and toks[k] == "(":
                    k += 1
                if toks[k:k + 1] != ["&"]:
                    continue
                k += 1
                while k < len(toks) and toks[k] == "(":
                    k += 1
                if k + 1 < len(toks) and toks[k + 1] == "[":
                    close = matching(toks, k + 1)
                    self._access(toks[k], toks[k + 2:close], True, 1, guards, loops, toks, k + 1, atomic=True)

    def _access(self, base, index_toks, written, width, guards, loops, toks, j, atomic=False) -> None:
        try:
            index = parse_expr(index_toks)
        except Unknown:
            index = None
        nxt = toks[matching(toks, j) + 1] if matching(toks, j) + 1 < len(toks) else ""
        compound = written and nxt not in ("=",)
        self.body.accesses.append(Access(base, index, written, width, guards, loops, atomic, self.statements, self.stage))
        if compound or atomic:
            self.body.accesses.append(Access(base, index, False, width, guards, loops, atomic, self.statements, self.stage))

    def _vector_access(self, toks, j, written, guards, loops) -> None:
        """`*(float2*)(buf + index)`: a vector access of `width` elements."""
        cast_end = matching(toks, j + 1)
        cast = toks[j + 2:cast_end]
        if not cast or cast[-1] != "*" or cast_end + 1 >= len(toks) or toks[cast_end + 1] != "(":
            return
        width = max(vector_width(t) for t in cast[:-1])
        close = matching(toks, cast_end + 1)
        inner = toks[cast_end + 2:close]
        if len(inner) >= 1 and re.match(r"[A-Za-z_]\w*$", inner[0]):
            index_toks = inner[2:] if len(inner) > 2 and inner[1] == "+" else ["0"] if len(inner) == 1 else None
            try:
                index = parse_expr(index_toks) if index_toks else None
            except Unknown:
                index = None
            self.body.accesses.append(Access(inner[0], index, written, width, guards, loops, statement=self.statements,
                                             stage=self.stage))


def _assignment_at(toks: list[str]) -> int | None:
    depth = 0
    for j, tok in enumerate(toks):
        depth += tok in "([{"
        depth -= tok in ")]}"
        if depth == 0 and tok in ("=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="):
            return j
        if depth == 0 and tok in ("++", "--"):
            return j if j else len(toks)
    return None


def _subscript_base(toks: list[str], j: int) -> str | None:
    """The array named before the '[' at j: `name[` or `((volatile float*)name)[`."""
    prev = toks[j - 1]
    if re.match(r"[A-Za-z_]\w*$", prev) and not (j >= 2 and toks[j - 2] in (".", "->")):
        return prev
    if prev == ")":
        depth, k = 0, j - 1
        while k >= 0:
            depth += toks[k] == ")"
            depth -= toks[k] == "("
            if depth == 0:
                break
            k -= 1
        inner = toks[k + 1:j - 1]
        names = [t for t in inner if re.match(r"[A-Za-z_]\w*$", t) and not is_type_word(t)]
        if len(names) == 1 and inner[-1] == names[0]:
            return names[0]
    return None


def read_kernel(source: str, name: str) -> KernelBody | None:
    """The accesses, guards, loops and definitions of kernel `name`, or None if its body is not in the source."""
    found = kernel_definition(tokenize(source), name)
    if found is None:
        return None
    head, toks = found
    body = KernelBody(text=text_of(toks))
    if "__launch_bounds__" in head:
        k = head.index("__launch_bounds__") + 1
        args = head[k + 1:matching(head, k)]
        body.launch_bounds = args[:args.index(",")] if "," in args else args
    walker, i, guards = _Walker(body), 0, ()
    while i < len(toks):  # the top-level statements one by one, each a stage
        accessed, declared = len(body.accesses), set(body.arrays)
        i, guards = walker.statement(toks, i, guards, ())
        if len(body.accesses) == accessed:
            body.outer_arrays |= set(body.arrays) - declared
        walker.stage += 1
    return body


# --- launch inference ------------------------------------------------------------------

# Most points one evaluation holds at once; larger spaces are evaluated in chunks.
CHUNK_POINTS = 4_000_000
# Accesses over more points than this (all chunks together) are not checked.
MAX_POINTS = 60_000_000
DEFAULT_BLOCKS = {1: (256, 1, 1), 2: (16, 16, 1), 3: (8, 8, 4)}
_POINTEE_DTYPES = {
    "float": "float32", "double": "float64", "__half": "float16", "half": "float16", "int": "int32", "int32_t": "int32",
    "int64_t": "int64", "long long": "int64", "int8_t": "int8", "signed char": "int8", "char": "int8", "uint8_t": "uint8",
    "unsigned char": "uint8", "int16_t": "int16", "short": "int16", "uint32_t": "uint32", "unsigned int": "uint32",
    "uint": "uint32", "bool": "bool",
}
DIMS = "xyz"


class InferenceError(Exception):
    """Launches cannot be inferred; the message says why."""


@dataclass
class Inference:
    """Inferred launches in launch order and the scratch buffers they need that the task lacks,
    or launches None and the reason in `explanation`."""

    launches: list[Launch] | None
    scratch: list[Buffer] = field(default_factory=list)
    explanation: str = ""
    # task buffer -> elements the kernels store past its end at these launches (TVM's CUDA made
    # for a padded extent, with no guard): allocated beyond the buffer, never compared
    padding: dict[str, int] = field(default_factory=dict)
    # task output -> (elements stored, its size) where the launches store only part of it: the grid
    # ends where the kernel's guards end its stores, so no launch of this code writes the rest
    short: dict[str, tuple[int, int]] = field(default_factory=dict)
    # Where the kernels left a real choice (several buffers fit one parameter): complete launch
    # sequences with one such choice made otherwise, most plausible first (infer(alternatives=N)),
    # each with its explanation saying what it changed; for a caller to verify in turn.
    alternatives: list["Inference"] = field(default_factory=list)
    open_choices: int = 0  # how many such choices the first answer made (0: no alternative exists)


@dataclass
class _Search:
    """The choices one inference made among several fitting buffers, as (kernel, parameter,
    the other candidates in the order to try them), and the choices forced on it instead
    ((kernel, parameter) -> version index or task buffer): bound before the kernel's other
    choices are made, or, with `swap`, after them (the parameter that had it takes the one it
    leaves)."""

    overrides: dict[tuple[str, str], int | str] = field(default_factory=dict)
    swap: bool = False
    decisions: list[tuple[str, str, list[int | str]]] = field(default_factory=list)


MAX_ALTERNATIVES = 8


def _short_outputs(task: Task, partial: list[dict[str, tuple[int, int]]], stored: set[str]) -> dict[str, tuple[int, int]]:
    """The task's outputs that some launch stores in part and none stores whole (`stored`: the
    buffers some launch stores every element of)."""
    outputs = {b.name for b in task.buffers if b.role in ("output", "inout")}
    short: dict[str, tuple[int, int]] = {}
    for each in partial:
        for name, (written, size) in each.items():
            if name in outputs and name not in stored and written > short.get(name, (-1, 0))[0]:
                short[name] = (written, size)
    return short


@dataclass
class _Kernel:
    info: object  # tools.cuda.frontend.KernelInfo
    body: KernelBody
    args: list[str | int | float]  # per parameter: the task buffer/scalar (or new scratch buffer) it takes
    params: dict[str, str]  # pointer parameter -> buffer name
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    inputs: set[str] = field(default_factory=set)  # the task's input buffers it takes


@dataclass
class _Config:
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    block_how: str
    grid_how: list[str]
    in_bounds: bool = True
    problems: list[str] = field(default_factory=list)
    covered: int = 0
    complete: bool = False  # every element of every task buffer the kernel stores to is written
    reads_all: bool = False  # every element of the task's inputs it loads from is read
    extents: dict[str, int] = field(default_factory=dict)  # buffer -> highest element accessed + 1
    stores: dict[str, int] = field(default_factory=dict)  # buffer -> highest element stored + 1
    partial: dict[str, tuple[int, int]] = field(default_factory=dict)  # buffer -> (elements stored, size) where not all


def infer(task: Task, module, alternatives: int = 0) -> Inference:
    """Launch configurations, order and arguments for every kernel of `module` (the parsed CUDA of
    `task`), from the kernels' own code and the task's buffers. Never raises for a task it cannot
    handle: the explanation then says why. With `alternatives` > 0, also up to that many other
    complete answers where a choice among fitting buffers was made (Inference.alternatives)."""
    search = _Search()
    try:
        found = _infer(task, module, search)
    except InferenceError as exc:
        return Inference(None, [], str(exc))
    except (Unknown, IndexError, ValueError, KeyError) as exc:  # code this reader does not follow
        return Inference(None, [], f"the kernels' code could not be read ({type(exc).__name__}: {exc})")
    found.open_choices = sum(1 for _, _, others in search.decisions if others)
    if alternatives > 0 and found.open_choices:
        found.alternatives = _alternatives(task, module, found, search.decisions, alternatives)
    return found


def _alternatives(task: Task, module, first: Inference, decisions, cap: int) -> list[Inference]:
    """Other answers than `first`, each with its choices among fitting buffers made otherwise:
    every choice's next candidate alone (in the order the kernels were bound), then two choices'
    next candidates together (two pairs of inputs paired the wrong way round), then every choice's
    candidate after that alone, ...; an answer the kernels' code rules out (a read past the buffer
    now bound) or that repeats one already listed is left out; at most `cap`, after at most
    4 * `cap` tries."""
    def signature(found: Inference):
        return (tuple((l.kernel, tuple(l.grid), tuple(l.block), tuple(map(str, l.args))) for l in found.launches),
                tuple((b.name, tuple(b.shape)) for b in found.scratch))

    params = {k.name: [p.name for p in k.params] for k in module.kernels}

    def arg(found: Inference, kernel: str, param: str) -> str:
        launch = next(l for l in found.launches if l.kernel == kernel)
        return str(launch.args[params[kernel].index(param)])

    def overrides():
        choices = [((kernel, param), others) for kernel, param, others in decisions if others]
        yield from ({key: others[0]} for key, others in choices)
        for i, (a, a_others) in enumerate(choices):
            for b, b_others in choices[i + 1:]:
                yield {a: a_others[0], b: b_others[0]}
        for rank in range(1, max((len(others) for _, others in choices), default=0)):
            yield from ({key: others[rank]} for key, others in choices if rank < len(others))

    seen, out = {signature(first)}, []
    for tries, (forced, swap) in enumerate((forced, swap) for forced in overrides() for swap in (False, True)):
        if len(out) >= cap or tries >= 8 * cap:
            break
        try:
            found = _infer(task, module, _Search(overrides=forced, swap=swap))
        except (InferenceError, Unknown, IndexError, ValueError, KeyError):
            continue
        if found.launches is None or signature(found) in seen:
            continue
        seen.add(signature(found))
        changes = ", ".join(f"{kernel}'s {param} is {arg(found, kernel, param)}, not {arg(first, kernel, param)}"
                            for kernel, param in forced)
        found.explanation = f"alternative {len(out) + 1}: {changes} | {found.explanation}"
        out.append(found)
    return out


def _infer(task: Task, module, search: _Search) -> Inference:
    if module is None or not module.kernels:
        raise InferenceError("the CUDA source defines no kernel")
    for k in module.kernels:
        if k.template_params:
            raise InferenceError(f"kernel {k.name} is a template (its template arguments are unknown)")
    dynamic = [v.name for v in module.shared if v.extern]
    if dynamic:
        raise InferenceError(f"dynamic shared memory ({', '.join(dynamic)}) of unknown size")
    numbered = _numbered(module.kernels)
    if numbered is not None and (len(numbered) > 1 or _placeholder_family(task, numbered[0])):
        return _infer_sequence(task, numbered, search)
    source = task.source()
    kernels = [_bind(task, k, source) for k in module.kernels]
    sizes: dict[str, int | None] = {b.name: _reach(b) for b in task.buffers}
    scratch: dict[str, str] = {}  # new scratch buffer -> dtype
    for k in kernels:
        for param, name in k.params.items():
            if name not in sizes:
                sizes[name] = None
                scratch[name] = _pointee_dtype(next(p.type for p in k.info.params if p.name == param), k.info.name)
    unwritten = sorted(n for n in scratch if not any(n in k.writes for k in kernels))
    if unwritten:
        raise InferenceError(f"pointer parameters {unwritten} match no buffer of the task, and no kernel writes them "
                             "(so they are no intermediates either)")
    order, why_order = _order(kernels, {b.name for b in task.buffers if b.role in ("input", "inout")})
    scalars = {s.name: s.value for s in task.scalars}
    launches, notes, partial, whole = [], [], [], set()
    stores: dict[str, int] = {}
    for k in order:
        cfg = _configure(k, sizes, scalars)
        partial.append(cfg.partial)
        whole |= {name for name in cfg.stores if name not in cfg.partial}
        for name, extent in cfg.extents.items():
            if name in scratch:
                sizes[name] = max(sizes[name] or 0, extent)
        for name, extent in cfg.stores.items():
            stores[name] = max(stores.get(name, 0), extent)
        launches.append(Launch(kernel=k.info.name, grid=_trim(cfg.grid), block=_trim(cfg.block), args=k.args))
        notes.append(f"{_launch_text(launches[-1])}: block from {cfg.block_how}; " + "; ".join(cfg.grid_how))
    missing = [n for n in scratch if not sizes[n]]
    if missing:
        raise InferenceError(f"no kernel accesses a known extent of intermediate buffer(s) {missing}")
    new = [Buffer(name=n, dtype=scratch[n], shape=[sizes[n]], role="scratch") for n in scratch]
    text = "inferred: " + " | ".join(notes)
    if len(order) > 1:
        text += f" | order: {why_order}"
    if new:
        text += " | intermediates: " + ", ".join(f"{b.name} ({b.dtype}[{b.shape[0]}], scratch)" for b in new)
    padding = _padding(task, stores)
    return Inference(launches, new, text + _padding_text(task, padding), padding, _short_outputs(task, partial, whole))


def _reach(buffer: Buffer) -> int:
    """The elements a kernel may access through a task buffer: its own and the padding past it that
    the reference reads (a published record whose C, like its CUDA, reads past a weight)."""
    return buffer.size + buffer.padding


def _padding(task: Task, stores: dict[str, int]) -> dict[str, int]:
    """Elements past the end of each task buffer that the kernels store to at the inferred launches."""
    return {b.name: stores[b.name] - b.size for b in task.buffers if stores.get(b.name, 0) > b.size}


def _padding_text(task: Task, padding: dict[str, int]) -> str:
    if not padding:
        return ""
    sizes = {b.name: b.size for b in task.buffers}
    return " | padded: " + ", ".join(
        f"{name} by {extra} element(s) (the kernels store past its {sizes[name]} with no guard, as TVM's CUDA "
        "for a padded extent does; allocated, not compared)" for name, extra in padding.items())


_NUMBERED = re.compile(r"^(?P<stem>\w*?)(?:_(?P<n>\d+))?$")


def _numbered(infos: list) -> list | None:
    """The kernels in TVM's launch order, where they are named as TVM names the kernels of one
    function (`default_function_kernel`, `default_function_kernel_1`, ... in the order the host
    launches them, whatever order they are defined in); else None."""
    keyed = []
    for info in infos:
        m = _NUMBERED.match(info.name)
        keyed.append((m["stem"], int(m["n"]) if m["n"] else 0, info))
    stems = {stem for stem, _, _ in keyed}
    numbers = sorted(n for _, n, _ in keyed)
    if len(stems) != 1 or numbers != list(range(len(infos))):
        return None
    return [info for _, _, info in sorted(keyed, key=lambda t: t[1])]


@dataclass
class _Version:
    """One buffer a kernel parameter name stands for, from the kernel that writes it on: TVM names
    every kernel's parameters itself, so `T_strided_slice` in one kernel and the next may be two
    buffers, and `ph` may be any of the task's `ph`, `ph_1`, ..."""

    param: str
    dtype: str
    writer: str  # the kernel that first writes it
    buffer: str | None = None  # the task buffer it is, once known
    extent: int = 0
    hint: int | None = None  # the size of the output it is likely to be, until its extent is known
    consumed: bool = False  # a later kernel reads what it holds last, without writing it
    home: str | None = None  # the C reference's array that holds it, where the reference gave the bindings


def _stem(name: str) -> str:
    """TVM tells apart two buffers of one name within a kernel by a suffix: `T_strided_slice_1`."""
    return re.sub(r"_\d+$", "", name.removesuffix("_ptr"))


def _infer_sequence(task: Task, infos: list, search: _Search) -> Inference:
    """Launches for kernels in TVM's launch order, binding each parameter along the sequence: a
    parameter a kernel only writes starts a new buffer of that name; one it reads and writes is the
    latest buffer of its name; one it only reads is the latest earlier buffer of its stem (`ph`,
    `T_strided_slice_1` -> `T_strided_slice`) whose size fits (where every kernel numbers its
    parameters itself, those of one stem in the order the buffers were written), else a task
    input: by its name, or, among a family (`ph`, `ph_1`, ...) or unnamed, the input of its dtype
    whose size fits what the kernel reads (the same size first, then one not read yet whose turn
    it is in the C reference's order, then one read before). At the end the
    buffers left unread of a name are the task outputs of that name (in order), or the outputs
    nothing else writes whose size they have; the rest are scratch buffers.
    Where the C reference has a stage per kernel (reference_flow), its buffers bind the parameters
    instead: a kernel's parameter is the task buffer or the value of the reference's array that
    its stage uses."""
    source = task.source()
    scalars = {s.name: s.value for s in task.scalars}
    by_name = {b.name: b for b in task.buffers}
    reference = reference_read(task)
    inputs = _inputs_in_reference_order(task, reference)
    pairing = _inputs_in_reference_order(task, reference, inlined=True)
    versions: list[_Version] = []
    sizes: dict[str, int | None] = {b.name: _reach(b) for b in task.buffers}
    taken: set[str] = set()
    planned = []  # (kernel, cfg, {param: version index or task buffer name}, args)
    notes: list[str] = []
    bodies = []
    for info in infos:
        body = read_kernel(source, info.name)
        if body is None:
            raise InferenceError(f"the body of kernel {info.name} is not in the source")
        bodies.append(body)
    flow = reference_flow(task, infos, bodies, reference)
    own = _numbered_per_kernel(infos)
    homes: dict[str, int] = {}  # the reference's array -> index of the version it holds now
    for info, body in zip(infos, bodies):
        writes = {a.base for a in body.accesses if a.write}
        binding: dict[str, int | str] = {}
        args: list[str | int | float] = []
        pointers = [p for p in info.params if "*" in p.type or "[" in p.type]
        for p in info.params:
            if p not in pointers:
                name = next((c for c in _candidates(p.name) if c in {s.name for s in task.scalars}), None)
                if name is None:
                    raise InferenceError(f"kernel {info.name}: parameter {p.name} matches no scalar of the task")
                args.append(name)
            else:
                args.append(p.name)
        starts = _initialized(body)
        pending: dict[str, list] = {}
        if flow is not None:
            for p in pointers:
                target = flow.params[info.name][p.name]
                home = target[1:] if target.startswith("%") else None
                if home is None:
                    binding[p.name] = target
                elif p.name in writes and (p.name in starts or home not in homes):
                    versions.append(_Version(p.name, _pointee_dtype(p.type, info.name), info.name,
                                             hint=flow.stored.get((info.name, home)), home=home))
                    homes[home] = binding[p.name] = len(versions) - 1
                elif home in homes:
                    binding[p.name] = homes[home]
                else:
                    raise InferenceError(f"kernel {info.name} reads {p.name}, the reference's {home}, before any kernel writes it")
        else:
            _choices(task, info, pointers, writes, starts, versions, binding, pending, inputs, own)
        cfg = _configure_choosing(info, body, binding, pending, versions, inputs, sizes, scalars, taken, notes, pairing,
                                  search, own)
        taken.update(v for v in binding.values() if isinstance(v, str))
        for param, index in binding.items():
            if isinstance(index, int):
                versions[index].consumed = param not in writes
        for name, extent in cfg.extents.items():
            if name.startswith("#"):
                v = versions[int(name[1:])]
                v.extent = max(v.extent, extent)
        planned.append((info, cfg, binding, args))
    if flow is None:
        _bind_outputs(task, versions, notes)
    else:
        stored = {name for _, cfg, _, _ in planned for name in cfg.stores}
        unwritten = [b.name for b in task.buffers if b.role in ("output", "inout") and b.name not in stored]
        if unwritten:
            raise InferenceError(f"no kernel's stage of the C reference stores to output(s) {unwritten}")
        notes.append(f"each kernel's parameters are the buffers of its stage of the C reference ({flow.stages} "
                     "stages, one per kernel in launch order, their buffers paired in the order of first access)")
    scratch_names: dict[int, str] = {}
    used = set(by_name)
    for i, v in enumerate(versions):
        if v.buffer is None:
            stem = (v.home or v.param).removesuffix("_ptr")  # TVM calls buffer `x`'s pointer `x_ptr`
            name = stem if stem not in used else next(f"{stem}_v{n}" for n in range(2, 10_000) if f"{stem}_v{n}" not in used)
            used.add(name)
            scratch_names[i] = name
    new = []
    for i, name in scratch_names.items():
        if not versions[i].extent:
            raise InferenceError(f"no kernel accesses a known extent of intermediate buffer {versions[i].param}")
        new.append(Buffer(name=name, dtype=versions[i].dtype, shape=[versions[i].extent], role="scratch"))
    launches, text, partial, whole = [], [], [], set()
    stores: dict[str, int] = {}
    for info, cfg, binding, args in planned:
        def final(arg):
            target = binding.get(arg, arg) if isinstance(arg, str) else arg
            if isinstance(target, int):
                return versions[target].buffer or scratch_names[target]
            return target

        def buffer_of(name: str) -> str:
            return final(int(name[1:])) if name.startswith("#") else name
        for name, extent in cfg.stores.items():
            stores[buffer_of(name)] = max(stores.get(buffer_of(name), 0), extent)
        partial.append({buffer_of(name): counts for name, counts in cfg.partial.items()})
        whole |= {buffer_of(name) for name in cfg.stores if name not in cfg.partial}
        launches.append(Launch(kernel=info.name, grid=_trim(cfg.grid), block=_trim(cfg.block), args=[final(a) for a in args]))
        how = f"{_launch_text(launches[-1])}: block from {cfg.block_how}; " + "; ".join(cfg.grid_how)
        text.append(re.sub(r"#(\d+)", lambda m: final(int(m[1])), how))
    out = "inferred: " + " | ".join(text) + " | order: TVM's numbering of the kernels (the host's launch order)"
    if notes:
        out += " | bindings: " + re.sub(r"#(\d+)", lambda m: versions[int(m[1])].buffer or scratch_names[int(m[1])], "; ".join(notes))
    if new:
        out += " | intermediates: " + ", ".join(f"{b.name} ({b.dtype}[{b.shape[0]}], scratch)" for b in new)
    padding = _padding(task, stores)
    return Inference(launches, new, out + _padding_text(task, padding), padding, _short_outputs(task, partial, whole))


def _numbered_per_kernel(infos: list) -> bool:
    """Whether every kernel numbers its pointer parameters itself, as TVM's older code generator did:
    the parameters of one stem in one kernel are `x`, `x_1`, ..., `x_{m-1}` in every kernel. Then a
    kernel's `x` (or `x_1`) says nothing of which buffer it is, only of its place among the
    kernel's buffers of that stem; a kernel that takes `x_2` alone names a buffer of the graph."""
    for info in infos:
        stems: dict[str, set[str]] = {}
        for p in info.params:
            if "*" in p.type or "[" in p.type:
                name = p.name.removesuffix("_ptr")
                stems.setdefault(_stem(name), set()).add(name)
        for stem, names in stems.items():
            if names != {stem} | {f"{stem}_{k}" for k in range(1, len(names))}:
                return False
    return True


def _kernel_number(param: str) -> int:
    """A parameter's place among the kernel's parameters of its stem (`x` 0, `x_2` 2)."""
    m = re.search(r"_(\d+)$", param.removesuffix("_ptr"))
    return int(m[1]) if m else 0


def _choices(task: Task, info, pointers, writes, starts, versions, binding, pending, inputs, own: bool = False) -> None:
    """Without a reference that gives the bindings: what each pointer parameter of kernel `info`
    may be. Fills `binding` with what is decided (a new version, a task buffer by name) and
    `pending` with the candidates of the rest, for _configure_choosing. `inputs`: the task's
    inputs, in the order candidates are weighed; `own`: the kernels number their parameters
    themselves (_numbered_per_kernel), so a parameter's name does not say which earlier buffer it is."""
    by_name = {b.name: b for b in task.buffers}
    for p in pointers:  # what the kernel stores before it reads starts a new buffer of that name
        if p.name in writes and (p.name in starts or not any(_stem(v.param) == _stem(p.name) for v in versions)):
            versions.append(_Version(p.name, _pointee_dtype(p.type, info.name), info.name, hint=_output_size(task, p.name)))
            binding[p.name] = len(versions) - 1
    for p in pointers:
        if p.name in binding:
            continue
        dtype = _pointee_dtype(p.type, info.name)
        # Earlier buffers of its stem, those of its very name first (a graph whose names are its
        # own, `conv2d_nchw_2`; not where every kernel numbers its parameters itself), then the
        # latest first.
        earlier = sorted((i for i in range(len(versions)) if _stem(versions[i].param) == _stem(p.name)
                          and versions[i].dtype == dtype and i not in binding.values()),
                         key=lambda i: (not own and versions[i].param != p.name, -i))
        # TVM names placeholders `ph`, `ph_1`, ... and a kernel's own `ph` may be any of them; where
        # the task has no bare `ph`, its names (`ph_0`, `ph_3`) are the buffers' own.
        family = [b for b in inputs if _stem(b.name) == _stem(p.name) and b.dtype == dtype]
        if _stem(p.name) not in by_name:
            family = []
        named = [c for c in _candidates(p.name) if c in by_name and by_name[c].role in ("input", "inout")]
        if earlier:
            pending[p.name] = earlier
        elif named and len(family) <= 1:
            binding[p.name] = named[0]
        else:
            pending[p.name] = family if len(family) > 1 else [b for b in inputs if b.dtype == dtype]
            if not pending[p.name]:
                raise InferenceError(f"kernel {info.name} reads {p.name}, which no earlier kernel writes "
                                     f"and no input of the task of its type ({dtype}) can be")


def _configure_choosing(info, body, binding, pending, versions, inputs, sizes, scalars, taken, notes, pairing,
                        search: _Search, own: bool = False) -> _Config:
    """The kernel's configuration, choosing first what each pending parameter is: of its candidates
    (earlier versions by index, latest first, or task inputs in the order the C reference first
    reads them), the one whose size is what the kernel reads, else the first large enough; among
    inputs, one not taken yet whose turn it is first (_turn), then one an earlier kernel reads,
    then the other inputs not taken yet. With `own` (the kernels number their parameters
    themselves), the parameters of one stem bound to earlier buffers take them in the order they
    were written (_in_write_order).
    What `search` forces a parameter to be is bound before the other choices, which are then made
    among what it leaves (so that one changed choice is followed through the kernel as inference
    would make it); each choice among several candidates goes into `search.decisions`."""
    def size_of(c) -> int:
        return versions[c].extent if isinstance(c, int) else _reach(c)

    def choose(param, candidates, extent):
        free = [c for c in candidates if _key(c) not in binding.values()]
        fits = [c for c in free if size_of(c) >= extent]
        if not fits:
            raise InferenceError(f"kernel {info.name} reads {extent} elements of {param}; none of "
                                 f"{', '.join(_label(c) for c in free or candidates)} is that large")
        choice = min(fits, key=lambda c: (size_of(c) != extent, _turn(c, param, binding, pending, inputs, taken),
                                          candidates.index(c)))
        binding[param] = _key(choice)
        if isinstance(choice, Buffer):
            taken.add(choice.name)
        if len(candidates) > 1:
            notes.append(f"{info.name}: {param} is {_label(choice)} (of {', '.join(_label(c) for c in candidates)}: "
                         f"{'the size of what it reads' if size_of(choice) == extent else 'large enough'})")

    def label(key) -> str:
        return f"#{key}" if isinstance(key, int) else key

    forced: dict[str, int | str] = {}
    for param, candidates in pending.items():
        want = search.overrides.get((info.name, param))
        if want is None or search.swap:
            continue
        if want not in [_key(c) for c in candidates] or want in binding.values():
            raise InferenceError(f"kernel {info.name}: {param} cannot be {label(want)}")
        binding[param] = forced[param] = want
        if isinstance(want, str):
            taken.add(want)
        notes.append(f"{info.name}: {param} is {label(want)} (an alternative to the choice inference makes)")
    # Buffers earlier kernels wrote have the extent they wrote; those this kernel starts have none yet.
    view = {**sizes, **{f"#{i}": v.extent or v.hint for i, v in enumerate(versions)}, **{f"?{p}": None for p in pending}}
    undecided = {}
    for param, candidates in pending.items():
        if param in forced:
            continue
        if len({size_of(c) for c in candidates}) == 1:  # one size: the choice does not change the launch
            choose(param, candidates, 0)
        else:
            undecided[param] = candidates
            binding[param] = f"?{param}"
    for param, candidates in undecided.items():
        extent, whole = 0, []
        for size in sorted({size_of(c) for c in candidates}, reverse=True):
            try:
                cfg = _configure(_sequence_kernel(info, body, binding, inputs), {**view, f"?{param}": size}, scalars)
            except InferenceError:
                continue
            read = cfg.extents.get(f"?{param}", 0)
            extent = max(extent, read)
            if read == size and cfg.complete and cfg.in_bounds:
                whole.append(size)
        if len(whole) > 1:
            # The parameter alone bounds the grid (`out[i] = ph[i]`): every size is read whole, so the
            # size decides nothing; an input not taken yet is next, in the task's order (TVM's kernels
            # read `main`'s placeholders in the order it uses them).
            fits = [c for c in candidates if size_of(c) in whole and _key(c) not in binding.values()]
            choice = min(fits, key=lambda c: (_turn(c, param, binding, pending, inputs, taken), candidates.index(c)))
            binding[param] = _key(choice)
            if isinstance(choice, Buffer):
                taken.add(choice.name)
            notes.append(f"{info.name}: {param} is {_label(choice)} (of {', '.join(_label(c) for c in candidates)}: "
                         f"it bounds the launch itself, so the first not taken yet)")
            continue
        choose(param, candidates, extent)
    chosen_here = [p for p in pending if p not in forced]
    _pair_in_order_of_use(info, body, chosen_here, binding, pairing, notes)
    if own:
        _in_write_order(info, chosen_here, binding, versions, notes, {a.base for a in body.accesses if a.write})
    for param in pending:
        want = search.overrides.get((info.name, param))
        if not search.swap or want is None or binding[param] == want:
            continue
        holder = next((p for p in pending if binding[p] == want), None)
        if holder is None and want in binding.values():
            raise InferenceError(f"kernel {info.name}: {want} is bound to another of its parameters")
        swapped = f", and {holder} is {label(binding[param])}" if holder is not None else ""
        if holder is not None:
            binding[holder] = binding[param]
        binding[param] = forced[param] = want
        if isinstance(want, str):
            taken.add(want)
        notes.append(f"{info.name}: {param} is {label(want)}{swapped} instead (an alternative to the choices above)")
    for param, candidates in pending.items():
        if len(candidates) > 1:
            chosen = next((c for c in candidates if _key(c) == binding[param]), None)
            if chosen is None:
                continue
            others = sorted((c for c in candidates if _key(c) != binding[param]),
                            key=lambda c: size_of(c) != size_of(chosen))  # the same size first, else in order
            search.decisions.append((info.name, param, [_key(c) for c in others]))
    cfg = _configure(_sequence_kernel(info, body, binding, inputs), view, scalars)
    if forced and not cfg.in_bounds:
        raise InferenceError(f"kernel {info.name}: the alternative binding reads past a buffer")
    return cfg


def _turn(candidate, param: str, binding, pending, inputs: list[Buffer], taken: set[str]) -> int:
    """How plausible it is that `param` reads task input `candidate`, for kernels in launch order:
    TVM's kernels first read `main`'s inputs in the order its C code first reads them (one loop
    nest per operator, in the order the kernels compute them), and a later kernel may read again
    an input an earlier one read (`x` for a mean, then for a variance). 0: an intermediate, or an
    input no kernel reads yet that comes next in that order (every input the reference reads
    before it is read already, or may be by another parameter of this kernel still to choose);
    1: an input a kernel reads already; 2: an input no kernel reads yet that would be read before
    inputs the reference reads first."""
    if not isinstance(candidate, Buffer):
        return 0
    if candidate.name in taken:
        return 1
    names = [b.name for b in inputs]
    if candidate.name not in names:
        return 0
    bound = {v for v in binding.values() if isinstance(v, str)}
    before = [n for n in names[:names.index(candidate.name)] if n not in taken and n not in bound]
    open_ = sum(1 for p in pending if p != param and str(binding.get(p, "?")).startswith("?"))
    return 0 if len(before) <= open_ else 2


def _in_write_order(info, params: list[str], binding, versions: list[_Version], notes: list[str],
                    writes: set[str]) -> None:
    """Parameters of one stem of a kernel that numbers its parameters itself (`conv1d_ncw`,
    `conv1d_ncw_1`) and that are bound to earlier kernels' buffers take them in the order those
    were written: TVM numbers a kernel's buffers of one name in the order of its fused function's
    arguments, the order their producers computed them (the numbers of a graph's own names, too,
    are in the order of their first writes). Where each already is the buffer its writer called
    by its own name (`x_1` the buffer a kernel wrote as its `x_1`), the names agree and stay. A
    group with a parameter the kernel updates in place (`writes`) stays too: the buffer it updates
    is the latest one, which the kernels after it read (graph_15's `x = x * x_1`)."""
    groups: dict[str, list[str]] = {}
    for param in params:
        if isinstance(binding.get(param), int):
            groups.setdefault(_stem(param), []).append(param)
    for group in groups.values():
        if len(group) < 2 or any(p in writes for p in group):
            continue
        if all(_kernel_number(versions[binding[p]].param) == _kernel_number(p) for p in group):
            continue
        in_number = sorted(group, key=_kernel_number)
        written = sorted(binding[p] for p in group)
        if any(binding[p] != v for p, v in zip(in_number, written)):
            binding.update(zip(in_number, written))
            notes.append(f"{info.name}: " + ", ".join(f"{p} is #{v}" for p, v in zip(in_number, written))
                         + " (buffers of one name: the kernel numbers them in the order they were written)")


def _pair_in_order_of_use(info, body: KernelBody, chosen: list[str], binding, inputs: list[Buffer], notes) -> None:
    """Parameters of one kernel chosen among the task's inputs (`chosen`) that are inputs of one
    size and dtype are interchangeable for the launch, and the names do not say which is which
    (TVM numbers a kernel's parameters itself: its `ph` and `ph_1` may be the task's `ph_4` and
    `ph`). The kernel uses them in the order the C reference does (TVM prints one expression for
    the CPU and the GPU): the one of them its body reads first is the one of them the reference
    reads first (`inputs` is in that order: _inputs_in_reference_order(inlined=True))."""
    rank = {b.name: i for i, b in enumerate(inputs)}
    kind = {b.name: (b.size, b.dtype) for b in inputs}
    first: dict[str, int] = {}
    for at, acc in enumerate(body.accesses):
        first.setdefault(acc.base, at)
    groups: dict[tuple, list[str]] = {}
    for param in chosen:
        target = binding.get(param)
        if isinstance(target, str) and target in kind:
            groups.setdefault(kind[target], []).append(param)
    for params in groups.values():
        if len(params) < 2:
            continue
        in_use = sorted(params, key=lambda p: first.get(p, len(first)))
        buffers = sorted((binding[p] for p in params), key=rank.__getitem__)
        if any(binding[p] != b for p, b in zip(in_use, buffers)):
            binding.update(zip(in_use, buffers))
            notes.append(f"{info.name}: " + ", ".join(f"{p} is {b}" for p, b in zip(in_use, buffers))
                         + " (inputs of one size: paired in the order the kernel and the C reference use them)")


def _inputs_in_reference_order(task: Task, read, inlined: bool = False) -> list[Buffer]:
    """The task's inputs in the order its C reference first accesses them (those it does not
    access, or all where there is no C reference to read, in the task's order after them). TVM's
    kernels use `main`'s placeholders in the order its CPU code does, whatever order the
    signatures list them in: the sequence of kernels in the order of its loop nests, and (with
    `inlined`) one kernel's expression in the order of the outputs' expressions (_uses_inlined).
    `read`: the reference as reference_read gives it."""
    inputs = [b for b in task.buffers if b.role in ("input", "inout")]
    if read is None:
        return inputs
    c_params, _, body = read
    names = {c: name for c, name in zip(c_params, task.reference.args or c_params) if c}  # args: every parameter, scalars too
    roles = {b.name: b.role for b in task.buffers}
    rank: dict[str, int] = {}
    if inlined:
        used = _uses_inlined(body, {c for c, n in names.items() if roles.get(n) in ("input", "inout")},
                             {c for c, n in names.items() if roles.get(n) in ("output", "inout")})
    else:
        used = [a.base for a in body.accesses if a.base in names]
    for c in used:
        rank.setdefault(names[c], len(rank))
    return sorted(inputs, key=lambda b: rank.get(b.name, len(rank)))


def _uses_inlined(body: KernelBody, inputs: set[str], outputs: set[str]) -> list[str]:
    """The inputs of a C reference in the order its outputs' expressions use them, with every
    intermediate array replaced by the expression of the stage that last wrote it: TVM's CPU code
    computes a producer in a loop nest of its own, where its GPU kernels inline it into the
    consumer (`max(x1, x0 * 0.5f)` for the CPU's `scale = x0 * 0.5f; out = max(x1, scale)`), so
    this is the order a kernel's expression reads them in. Then the inputs no output reaches, in
    the order the reference first reads them."""
    by_stage: dict[int, list[Access]] = {}
    for acc in body.accesses:
        by_stage.setdefault(acc.stage, []).append(acc)
    writer: dict[str, list[str]] = {}  # array -> the inputs of the expression that last wrote it
    order: list[str] = []
    for stage in sorted(by_stage):
        accesses = by_stage[stage]
        first_write: dict[str, int] = {}  # array -> the statement that first stores to it
        for acc in accesses:
            if acc.write:
                first_write.setdefault(acc.base, acc.statement)
        uses: list[str] = []
        for acc in accesses:
            if acc.write or first_write.get(acc.base, acc.statement) < acc.statement:
                continue  # what an earlier statement of this stage stored (an accumulator it started)
            uses += [acc.base] if acc.base in inputs else writer.get(acc.base, [])
        uses = list(dict.fromkeys(uses))
        for base in first_write:
            writer[base] = uses
            if base in outputs:
                order += uses
    first_read = [a.base for a in body.accesses if a.base in inputs and not a.write]
    return list(dict.fromkeys(order + first_read))


def _output_size(task: Task, param: str) -> int | None:
    """The size of the output a written parameter is likely to be: the output of its name, else the
    one size of the outputs of its stem (`compute` of `compute`, `compute_1`, `compute_2`)."""
    outputs = [b for b in task.buffers if b.role in ("output", "inout")]
    named = [b.size for b in outputs if b.name in _candidates(param)]
    family = {b.size for b in outputs if _stem(b.name) == _stem(param)}
    return named[0] if named else family.pop() if len(family) == 1 else None


def _initialized(body: KernelBody) -> set[str]:
    """Parameters the kernel stores to in a statement before any that reads them: it starts them
    (a read in the storing statement itself, `x[i] = sqrtf(x[i])`, comes first)."""
    first_read: dict[str, int] = {}
    first_write: dict[str, int] = {}
    for a in body.accesses:
        seen = first_write if a.write else first_read
        seen.setdefault(a.base, a.statement)
    return {b for b, at in first_write.items() if at < first_read.get(b, at + 1)}


def _key(candidate) -> int | str:
    return candidate if isinstance(candidate, int) else candidate.name


def _label(candidate) -> str:
    return f"#{candidate}" if isinstance(candidate, int) else candidate.name


def _sequence_kernel(info, body: KernelBody, binding: dict[str, int | str], inputs) -> _Kernel:
    """A kernel whose parameters name what `binding` says: task buffers, or `#i` for version i
    (`?p` for an input not chosen yet)."""
    params = {p: (f"#{v}" if isinstance(v, int) else v) for p, v in binding.items()}
    k = _Kernel(info, body, [], params, inputs={b.name for b in inputs})
    for acc in body.accesses:
        if acc.base in params:
            (k.writes if acc.write else k.reads).add(params[acc.base])
    return k


def _bind_outputs(task: Task, versions: list[_Version], notes: list[str]) -> None:
    """Which buffers are the task's outputs: of each stem, the buffers no later kernel reads (in
    the order written) are the outputs of that stem (in signature order) when there are as many;
    else an output is the last buffer of its own name. An output still unbound is the last-written
    buffer of its size and dtype that no later kernel reads (TVM's CUDA may call
    `scatter_nd_generic` `scatter_nd_cuda`)."""
    outputs = [b for b in task.buffers if b.role in ("output", "inout")]
    unbound = []
    for stem in dict.fromkeys(_stem(b.name) for b in outputs):
        family = [b for b in outputs if _stem(b.name) == stem]
        left = [i for i, v in enumerate(versions) if _stem(v.param) == stem and not v.consumed and v.buffer is None]
        if len(left) == len(family) and all(versions[i].dtype == b.dtype for i, b in zip(left, family)):
            for i, b in zip(left, family):
                versions[i].buffer = b.name
            continue
        for b in family:
            named = [i for i, v in enumerate(versions) if b.name in _candidates(v.param) and v.buffer is None
                     and v.dtype == b.dtype]
            if named:
                versions[named[-1]].buffer = b.name
            else:
                unbound.append(b)
    for out in unbound:
        fits = [i for i, v in enumerate(versions) if v.buffer is None and v.dtype == out.dtype and v.extent == out.size
                and not v.consumed]
        if not fits:
            raise InferenceError(f"no kernel writes output {out.name}: no parameter is named like it, and none of "
                                 f"its size ({out.size} {out.dtype}) is left unread at the end")
        chosen = fits[-1]
        versions[chosen].buffer = out.name
        notes.append(f"{versions[chosen].param} (written by {versions[chosen].writer}) is output {out.name} "
                     f"(its size{', the last written of ' + str(len(fits)) if len(fits) > 1 else ''})")


def _trim(dims: tuple[int, int, int]) -> list[int]:
    out = list(dims)
    while len(out) > 1 and out[-1] == 1:
        out.pop()
    return out


def _launch_text(launch) -> str:
    def fmt(d):
        return str(d[0]) if len(d) == 1 else f"({', '.join(map(str, d))})"
    return f"{launch.kernel}<<<{fmt(launch.grid)}, {fmt(launch.block)}>>>({', '.join(map(str, launch.args))})"


def _pointee_dtype(ctype: str, kernel: str) -> str:
    words = ctype.replace("*", " ").split()
    base = " ".join(w for w in words if w not in ("const", "volatile", "__restrict__", "__restrict", "restrict"))
    if base not in _POINTEE_DTYPES:
        raise InferenceError(f"kernel {kernel}: intermediate buffer of element type {base!r} is not supported")
    return _POINTEE_DTYPES[base]


def _candidates(param: str) -> list[str]:
    """Task names a kernel parameter may stand for: TVM calls buffer `x`'s parameter `x_ptr`;
    buffers named like C++ keywords carry a trailing underscore in the task (bench/convert.py)."""
    stem = param[:-4] if param.endswith("_ptr") else param
    return list(dict.fromkeys([param, stem, f"{stem}_", param.rstrip("_")]))


def _bind(task, info, source: str) -> _Kernel:
    buffers = {b.name for b in task.buffers}
    known = buffers | {s.name for s in task.scalars}
    args, params, unknown = [], {}, []
    for p in info.params:
        name = next((c for c in _candidates(p.name) if c in known), None)
        if name is None and ("*" in p.type or "[" in p.type):
            name = p.name[:-4] if p.name.endswith("_ptr") else p.name  # an intermediate: a new scratch buffer
            buffers.add(name)
        if name is None:
            unknown.append(p.name)
            continue
        args.append(name)
        if name in buffers:
            params[p.name] = name
    if unknown:
        raise InferenceError(f"kernel {info.name}: parameters {unknown} match no buffer or scalar of the task")
    body = read_kernel(source, info.name)
    if body is None:
        raise InferenceError(f"the body of kernel {info.name} is not in the source")
    k = _Kernel(info, body, args, params, inputs={b.name for b in task.buffers if b.role in ("input", "inout")})
    for acc in body.accesses:
        if acc.base in params:
            (k.writes if acc.write else k.reads).add(params[acc.base])
    return k


def _placeholder_family(task: Task, info) -> bool:
    """A lone kernel that takes a name of a family of TVM's placeholder names (`ph`, `ph_1`, ...)
    of which the task's inputs have several: TVM names a kernel's parameters itself, so its `ph_1`
    need not be the function's `ph_1`, nor its `ph` the function's `ph` (a kernel that reads only
    the function's `ph_1` calls it `ph`); it is bound as a kernel of a sequence is (by size, then in
    the order the kernel and the C reference use them), not by name."""
    stems = {}
    for b in task.buffers:
        if b.role in ("input", "inout"):
            stems.setdefault(_stem(b.name), []).append(b.name)
    params = [p.name for p in info.params if "*" in p.type or "[" in p.type]
    return any(len(names) > 1 and any(_stem(p) == stem for p in params) for stem, names in stems.items())


def _order(kernels: list[_Kernel], inputs: set[str]) -> tuple[list[_Kernel], str]:
    """Launch order from the data flow: every kernel that reads an intermediate or output runs after
    a kernel that writes it. The order of definition when it satisfies that (TVM defines kernels in
    launch order, and reuses intermediate buffers, so that later kernels overwrite what earlier ones
    read); else a topological order over the buffers that exactly one kernel writes."""
    if not _unwritten_reads(kernels, inputs):
        return kernels, "the order of definition, in which every kernel reads only what an earlier one wrote" + _flow(kernels)
    writers: dict[str, list[int]] = {}
    for i, k in enumerate(kernels):
        for name in k.writes:
            writers.setdefault(name, []).append(i)
    after = {j: {w[0] for name in b.reads - b.writes if len(w := writers.get(name, [])) == 1} - {j}
             for j, b in enumerate(kernels)}
    done: list[int] = []
    while len(done) < len(kernels):
        ready = [i for i in range(len(kernels)) if i not in done and after[i] <= set(done)]
        if not ready:
            cycle = [kernels[i].info.name for i in range(len(kernels)) if i not in done]
            raise InferenceError(f"kernels {cycle} read what each other write: no launch order follows from the data flow")
        done.append(ready[0])
    ordered = [kernels[i] for i in done]
    missing = _unwritten_reads(ordered, inputs)
    if missing:
        raise InferenceError(f"no launch order lets every kernel read only written data ({missing[0]})")
    return ordered, "data flow (a kernel runs after the one that writes what it reads)" + _flow(ordered)


def _unwritten_reads(kernels: list[_Kernel], inputs: set[str]) -> list[str]:
    written: set[str] = set()
    out = []
    for k in kernels:
        out += [f"{k.info.name} reads {name} before any kernel writes it" for name in sorted(k.reads - inputs - written - k.writes)]
        written |= k.writes
    return out


def _flow(kernels: list[_Kernel]) -> str:
    last: dict[str, str] = {}
    edges = []
    for k in kernels:
        edges += [f"{k.info.name} reads {name} from {last[name]}" for name in sorted(k.reads) if name in last and last[name] != k.info.name]
        last.update({name: k.info.name for name in k.writes})
    return f": {'; '.join(edges)}" if edges else ""


# --- one kernel --------------------------------------------------------------------


def _configure(k: _Kernel, sizes: dict[str, int | None], scalars: dict) -> _Config:
    candidates = _block_candidates(k, scalars)
    best: _Config | None = None
    tried = []
    for block, how in candidates:
        try:
            configs = _configs_for(k, block, how, sizes, scalars)
        except Unknown as exc:
            tried.append(f"block {_trim(block)}: {exc}")
            continue
        for cfg in configs:
            tried.append(f"block {_trim(block)}: " + ("; ".join(cfg.problems[:2]) if cfg.problems else f"covers {cfg.covered}"))
            if best is None or _score(cfg) > _score(best):
                best = cfg
    if best is None:
        raise InferenceError(f"kernel {k.info.name}: no block shape could be checked ({'; '.join(tried[:4])})")
    if not best.complete and not best.in_bounds:
        raise InferenceError(f"kernel {k.info.name}: no block shape writes its outputs in bounds ({'; '.join(tried[:4])})")
    if len(candidates) > 1:
        best.block_how += (f", of {len(candidates)} shapes tried the first that writes every output element"
                           " and keeps accesses in bounds" if best.complete and best.in_bounds else
                           f", of {len(candidates)} shapes tried the one that writes the most output elements")
    if not best.in_bounds:
        best.grid_how.append(f"note: an access out of bounds as this reader sees it (it ignores ?: conditions): {best.problems[0]}")
    best.grid_how += [f"note: at this launch its stores reach {written} of the {size} elements of {name}"
                      for name, (written, size) in best.partial.items()]
    return best


def _score(cfg: _Config) -> tuple:
    """Writing every element of the outputs matters most (a launch that leaves holes is wrong),
    then staying in bounds (fewer accesses out of bounds), then reading all of the inputs (a
    kernel that writes one partial result per block must see every element), then writing more."""
    return (cfg.complete, cfg.in_bounds, -len(cfg.problems), cfg.reads_all, cfg.covered)


def _launch_bound(k: _Kernel) -> int | None:
    """The first argument of __launch_bounds__, from the source (or the front end's record of it)."""
    first = k.body.launch_bounds or tokenize((k.info.launch_bounds or "").split(",")[0])
    try:
        return int(evaluate(parse_expr(first), {}, {})) if first else None
    except Unknown:
        return None


def _block_candidates(k: _Kernel, scalars) -> list[tuple[tuple[int, int, int], str]]:
    """Block shapes to try, most likely first, each with where its size comes from."""
    coords = k.body.coordinates
    used = [d for d in DIMS if f"threadIdx.{d}" in coords]
    sized = [d for d in DIMS if f"blockDim.{d}" in coords]
    total = _launch_bound(k)
    if total is None and not used and not sized:  # every thread would do the same work
        return [((1, 1, 1), "one thread (the kernel reads neither threadIdx nor blockDim)")]
    if total is not None:
        totals = [(total, f"__launch_bounds__({total})")]
    elif sized:  # the kernel reads its block size: the default works, unless a shared array sized per thread says otherwise
        rank = max(DIMS.index(d) for d in used + sized) + 1
        default = [(DEFAULT_BLOCKS[rank], "the default for a kernel that reads blockDim")]
        if rank > 1:
            return default
        arrays = sorted({n for n in k.body.arrays.values() if n and 32 <= n <= 1024 and n != DEFAULT_BLOCKS[1][0]})
        return [((n, 1, 1), f"the length of a shared or local array ({n})") for n in arrays] + default
    else:
        hinted = _coefficient_hints(k, scalars)
        totals = [(t, f"the stride of blockIdx.x ({t}) in the indexing") for t in hinted]
        totals += [(t, "a trial size") for t in (32, 64, 128, 256, 512, 1024) if t not in hinted]
    out = []
    hints = _shape_hints(k.body)
    for t, how in totals:
        shapes = _shapes(t, used)
        shapes.sort(key=lambda s: (-sum(1 for d, n in hints if s[DIMS.index(d)] == n), -s[0]))
        out += [(s, how + (f", split as {_trim(s)}" if len(shapes) > 1 else "")) for s in shapes]
    return out


def _shapes(total: int, used: list[str]) -> list[tuple[int, int, int]]:
    """Block shapes of `total` threads over the dimensions the kernel indexes (others 1)."""
    if len(used) <= 1:
        d = DIMS.index(used[0]) if used else 0
        return [tuple(total if i == d else 1 for i in range(3))]  # type: ignore[misc]
    divisors = [n for n in range(1, total + 1) if total % n == 0]
    shapes = []
    for x in divisors:
        for y in divisors:
            z = total // (x * y) if total % (x * y) == 0 else 0
            shape = (x, y, z)
            if z and all(shape[i] == 1 for i in range(3) if DIMS[i] not in used) and all(shape[DIMS.index(d)] > 1 for d in used):
                shapes.append(shape)
    return shapes or [(total, 1, 1)]


_PAIR = re.compile(r"threadIdx\.([xyz])\)?\s*\*\s*(\d+)\)?\s*\+\s*\(?\(?(?:\(int\)\s*)?threadIdx\.([xyz])")
_SHFL = re.compile(r"__shfl_(?:down|xor)_sync\s*\([^,]+,[^,]+,\s*(\d+)\s*,\s*32\s*\)")


def _shape_hints(body: KernelBody) -> list[tuple[str, int]]:
    """(dim, extent) pairs read from TVM's index forms: `threadIdx.x * 16 + threadIdx.y` puts 16
    threads along y; a warp shuffle reduction starting at offset 16 spans 32 threads along x."""
    text = body.text
    hints = [(m.group(3), int(m.group(2))) for m in _PAIR.finditer(text) if m.group(1) != m.group(3)]
    first = _SHFL.search(text)
    if first:
        hints.append(("x", 2 * int(first.group(1))))
    return hints


def _coefficient_hints(k: _Kernel, scalars) -> list[int]:
    """Block sizes the indexing suggests: the step of a global index from one block to the next."""
    out = []
    for acc in k.body.accesses:
        if acc.base not in k.params or acc.index is None:
            continue
        try:
            env0 = _point_env(k.body, acc, scalars, {"blockIdx.x": 0})
            env1 = _point_env(k.body, acc, scalars, {"blockIdx.x": 1})
            step = int(evaluate(acc.index, env1, k.body.locals) - evaluate(acc.index, env0, k.body.locals))
        except (Unknown, TypeError, ValueError):
            continue
        if 1 < step <= 1024 and step not in out:
            out.append(step)
    return out


def _point_env(body: KernelBody, acc: Access, scalars, fixed: dict) -> dict:
    env = {f"{c}.{d}": 0 for c in ("threadIdx", "blockIdx") for d in DIMS}
    env.update({f"{c}.{d}": 1 for c in ("blockDim", "gridDim") for d in DIMS})
    env.update(scalars)
    for loop in acc.loops:
        if loop.start is not None:
            env[loop.var] = evaluate(loop.start, dict(env), body.locals)
    env.update(fixed)
    return env


def _configs_for(k: _Kernel, block, how: str, sizes, scalars) -> list[_Config]:
    """The configurations with this block: the grid where the last block stays in bounds (strict),
    and, where that differs, the grid whose last block still writes something in bounds (TVM's
    schedules sometimes let a last partial block run past an output's end)."""
    constants = dict(scalars)
    constants.update({f"blockDim.{d}": block[i] for i, d in enumerate(DIMS)})
    options = []
    for strict in (True, False):
        grid, grid_how = [1, 1, 1], []
        stores = [a for a in k.body.accesses if a.write and a.base in k.params]
        for i, d in enumerate(DIMS):
            if f"blockIdx.{d}" not in k.body.coordinates:
                continue
            grid[i], why, unbounded = _solve_grid(k, d, block, stores, sizes, constants, strict)
            if not grid[i]:  # stores of unknown extent, or through indices this reader does not follow
                loads = [a for a in k.body.accesses if not a.write and a.base in k.params]
                grid[i], why, more = _solve_grid(k, d, block, loads, sizes, constants, strict)
                if not grid[i] and unbounded + more:
                    raise Unknown(f"nothing bounds blockIdx.{d} in the accesses to {sorted(set(unbounded + more))}")
                grid[i], why = (grid[i], why) if grid[i] else (1, "(no store or load depends on it)")
            grid_how.append(f"grid.{d} = {grid[i]} {why}")
        if not grid_how:
            grid_how.append("grid 1 (the kernel does not read blockIdx)")
        if options and options[0].grid == tuple(grid):
            break
        options.append(_Config(tuple(block), tuple(grid), how, grid_how))  # type: ignore[arg-type]
    for cfg in options:
        _check(k, cfg, sizes, {**constants, **{f"gridDim.{d}": cfg.grid[i] for i, d in enumerate(DIMS)}})
    return options


def _space(body: KernelBody, acc: Access, names: set[str], block, grid, constants: dict, fixed: dict):
    """Environments covering every (block, thread, loop iteration) point the names range over,
    in chunks of at most CHUNK_POINTS points."""
    loops = {loop.var: loop for loop in acc.loops}
    axes: list[tuple[str, np.ndarray]] = []
    env: dict = {}
    for name in sorted(names):
        if name in fixed:
            env[name] = np.int64(fixed[name])
        elif name in constants:
            env[name] = constants[name]
        elif name.startswith(("threadIdx.", "blockIdx.")):
            extent = (block if name.startswith("t") else grid)[DIMS.index(name[-1])]
            axes.append((name, np.arange(extent, dtype=np.int64)))
        elif name in loops and loops[name].start is not None:
            loop = loops[name]
            start, end = (int(evaluate(n, dict(constants), body.locals)) for n in (loop.start, loop.end))
            axes.append((name, np.arange(start, end, loop.step, dtype=np.int64)))
        else:
            raise Unknown(f"{name} has no known range")
    total = int(np.prod([len(v) for _, v in axes])) if axes else 1
    if total > MAX_POINTS:
        raise Unknown(f"{total} points to check")
    axes.sort(key=lambda a: -len(a[1]))
    rest = max(1, total // max(1, len(axes[0][1]))) if axes else 1
    step = max(1, CHUNK_POINTS // rest)
    first = axes[0][1] if axes else np.zeros(1, dtype=np.int64)
    for lo in range(0, len(first), step):
        chunk = dict(env)
        for n, (name, values) in enumerate(axes):
            if n == 0:
                values = values[lo:lo + step]
            shape = [1] * len(axes)
            shape[n] = len(values)
            chunk[name] = values.reshape(shape)
        yield chunk
        if not axes:
            return


def _names(acc: Access, body: KernelBody) -> set[str]:
    if acc.index is None:
        raise Unknown("an index this reader does not evaluate")
    names = names_in(acc.index, body.locals)
    for g in _readable_guards(acc, body):
        names |= names_in(g.cond, body.locals)
    return names


def _readable_guards(acc: Access, body: KernelBody) -> list[Guard]:
    """The guards this reader evaluates. The others (on data, on floating-point values) may hold
    or not: the access counts as made."""
    out = []
    for g in acc.guards:
        try:
            names_in(g.cond, body.locals)
        except Unknown:
            continue
        out.append(g)
    return out


def _values(body: KernelBody, acc: Access, env: dict):
    """(index, mask) arrays of an access over one environment."""
    env = dict(env)
    mask = np.bool_(True)
    for g in _readable_guards(acc, body):
        cond = np.asarray(evaluate(g.cond, env, body.locals)).astype(bool)
        mask = np.logical_and(mask, np.logical_not(cond) if g.negated else cond)
    index = evaluate(acc.index, env, body.locals)  # type: ignore[arg-type]
    shape = np.broadcast_shapes(np.shape(index), np.shape(mask))
    return np.broadcast_to(index, shape), np.broadcast_to(mask, shape)


def _alive(k: _Kernel, acc: Access, names, block, d: str, b: int, size: int | None, constants, strict: bool) -> bool:
    """Whether block b (along d; 0 along the others) performs this access somewhere in bounds (where
    the buffer's extent is known), and, if strict, nowhere out of bounds."""
    fixed = {f"blockIdx.{e}": (b if e == d else 0) for e in DIMS}
    works = False
    for env in _space(k.body, acc, names, block, (1, 1, 1), constants, fixed):
        index, mask = _values(k.body, acc, env)
        if size is not None:
            inside = (index >= 0) & (index + (acc.width - 1) < size)
            if strict and (mask & ~inside).any():
                return False
            mask = mask & inside
        works = works or bool(mask.any())
    return works


def _first_dead(alive) -> int | None:
    """Smallest b >= 1 with alive(b) false, for alive true up to some point and false after."""
    hi = 1
    while alive(hi):
        hi *= 2
        if hi > 1 << 31:
            return None
    lo = hi // 2  # alive(lo) (or lo == 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if alive(mid) else (lo, mid)
    return hi


def _solve_grid(k: _Kernel, d: str, block, stores, sizes, constants, strict: bool) -> tuple[int, str, list[str]]:
    """Blocks along d: one past the last block that stores anything in bounds, for the store that
    reaches furthest (0: none bounds it), and the buffers whose accesses nothing bounds. A guard over
    blockIdx (TVM's `if (blockIdx.x * 32 + (threadIdx.x >> 5) < 75)`) ends the stores; an unguarded
    store ends where its index passes the buffer's extent."""
    best, why, unbounded = 0, "", []
    for acc in stores:
        try:
            names = _names(acc, k.body)
        except Unknown:
            continue
        if f"blockIdx.{d}" not in names:
            continue
        size = sizes[k.params[acc.base]]
        guarded = _first_dead(lambda b: _alive(k, acc, names, block, d, b, None, constants, strict))
        bounded = _first_dead(lambda b: _alive(k, acc, names, block, d, b, size, constants, strict)) if size else guarded
        if bounded is None:
            unbounded.append(k.params[acc.base])
            continue
        if bounded > best:
            best = bounded
            guards = [g.text for g in _readable_guards(acc, k.body) if f"blockIdx.{d}" in names_in(g.cond, k.body.locals)]
            what = "store to" if acc.write else "load from"
            if guarded == bounded and guards:
                why = f"from the guard `{guards[-1]}` of the {what} {k.params[acc.base]}"
            else:
                why = f"from the extent of {k.params[acc.base]} ({size} elements, {what})"
    return best, why, unbounded


def _check(k: _Kernel, cfg: _Config, sizes, constants) -> None:
    """Every access in bounds (buffers, shared and local arrays), and what the stores cover."""
    covered: dict[str, np.ndarray] = {}
    read: dict[str, np.ndarray] = {}
    for acc in k.body.accesses:
        name = k.params.get(acc.base)
        size = sizes.get(name) if name else k.body.arrays.get(acc.base)
        outside = None
        try:
            names = _names(acc, k.body)
            spaces = _space(k.body, acc, names, cfg.block, cfg.grid, constants, {})
            for env in spaces:
                index, mask = _values(k.body, acc, env)
                hit = index[mask]
                if not hit.size:
                    continue
                low, high = int(hit.min()), int(hit.max()) + acc.width - 1
                if name:  # an intermediate must hold what its kernels read as well as what they write
                    cfg.extents[name] = max(cfg.extents.get(name, 0), high + 1)
                    if acc.write:
                        cfg.stores[name] = max(cfg.stores.get(name, 0), high + 1)
                if size is None:
                    continue
                if (low < 0 or high >= size) and outside is None:
                    outside = f"{acc.base}[{low}..{high}] outside its {size} elements"
                if name and (acc.write or name in k.inputs):
                    marks = (covered if acc.write else read).setdefault(name, np.zeros(size, dtype=bool))
                    for lane in range(acc.width):
                        lanes = hit + lane
                        marks[lanes[(lanes >= 0) & (lanes < size)]] = True
        except Unknown:
            continue
        if outside:
            cfg.problems.append(outside)
            cfg.in_bounds = False
    cfg.covered = int(sum(int(m.sum()) for m in covered.values()))
    cfg.partial = {name: (int(m.sum()), m.size) for name, m in covered.items() if not m.all()}
    # A kernel that stores only into intermediates of unknown extent has no holes to leave.
    known = any(a.write and sizes.get(k.params.get(a.base, "")) for a in k.body.accesses)
    cfg.complete = all(m.all() for m in covered.values()) and (bool(covered) or not known)
    cfg.reads_all = all(m.all() for m in read.values())


# --- extents of a C function's parameters ----------------------------------------------

def _c_function(source: str, function: str) -> KernelBody | None:
    """The body of the plain C function `function`, read as a kernel's is; None where it is not there."""
    text = re.sub(rf"(?<![\w.])((?:void|int32_t|int)\s+{re.escape(function)}\s*\()", r"__global__ \1", source, count=1)
    try:
        return read_kernel(text, function)
    except (Unknown, IndexError, ValueError, KeyError):
        return None


def _access_range(body: KernelBody, acc: Access) -> tuple[int, int] | None:
    """(lowest, one past the highest) element an access of a plain C function reaches over every
    iteration of its loops under the guards this reader evaluates; None where it reaches nothing.
    Raises for an access this reader does not follow."""
    unit = (1, 1, 1)
    lo, hi = None, None
    for env in _space(body, acc, _names(acc, body), unit, unit, {}, {}):
        index, mask = _values(body, acc, env)
        if mask.any():
            chosen = index[mask]
            low, high = int(chosen.min()), int(chosen.max()) + acc.width
            lo = low if lo is None else min(lo, low)
            hi = high if hi is None else max(hi, high)
    return None if lo is None else (lo, hi)


_NOT_FOLLOWED = (Unknown, IndexError, ValueError, KeyError, TypeError, ZeroDivisionError)


def c_access_extents(source: str, function: str, params: list[str]) -> dict[str, tuple[int, int]]:
    """(lowest, one past the highest) element each parameter of the plain C function `function`
    accesses, over every iteration of its loops under the guards this reader evaluates (a C
    reference of HPCTransEval: TVM's CPU code). Accesses this reader does not follow count for
    nothing; a parameter with no access it follows is absent."""
    body = _c_function(source, function)
    if body is None:
        return {}
    out: dict[str, tuple[int, int]] = {}
    wanted = set(params)
    for acc in body.accesses:
        if acc.base not in wanted:
            continue
        try:
            reach = _access_range(body, acc)
        except _NOT_FOLLOWED:
            continue
        if reach is not None:
            old = out.get(acc.base)
            out[acc.base] = reach if old is None else (min(old[0], reach[0]), max(old[1], reach[1]))
    return out


# --- the C reference's stages ----------------------------------------------------------


@dataclass
class ReferenceStage:
    """A top-level statement of a C reference that touches its buffers (parameters and arrays of
    the whole function): TVM's CPU code computes one operator per loop nest, in the order its
    CUDA launches one kernel per operator."""

    index: int  # which top-level statement of the function
    written: list[str]  # the buffers it stores to, in the order of their first access
    read: list[str]  # the buffers it only loads from, in the order of their first access


@dataclass
class ReferenceFlow:
    """Each kernel's pointer parameters as the buffers its stage of the C reference uses."""

    params: dict[str, dict[str, str]]  # kernel -> parameter -> task buffer, or "%" + the reference's array
    stored: dict[tuple[str, str], int]  # (kernel, reference array) -> one past the last element its stage stores
    stages: int


def reference_stages(source: str, function: str) -> tuple[list[str | None], list[ReferenceStage], KernelBody] | None:
    """The C function's parameters in order (None for those that are no pointers) and its stages,
    or None where it cannot be read."""
    body = _c_function(source, function)
    if body is None:
        return None
    toks = tokenize(source)
    at = next((i for i in range(len(toks) - 1) if toks[i] == function and toks[i + 1] == "("), None)
    if at is None:
        return None
    params, part = [], []
    for tok in toks[at + 2:matching(toks, at + 1)] + [","]:
        if tok != ",":
            part.append(tok)
            continue
        names = [t for t in part if re.match(r"[A-Za-z_]\w*$", t) and not is_type_word(t)]
        if names:
            params.append(names[-1] if "*" in part else None)
        part = []
    buffers = {p for p in params if p} | body.outer_arrays
    stages: dict[int, tuple[dict[str, None], set[str]]] = {}
    for acc in body.accesses:
        if acc.base in buffers:
            order, written = stages.setdefault(acc.stage, ({}, set()))
            order.setdefault(acc.base)
            if acc.write:
                written.add(acc.base)
    return params, [ReferenceStage(i, [b for b in order if b in written], [b for b in order if b not in written])
                    for i, (order, written) in sorted(stages.items())], body


def reference_read(task: Task) -> tuple[list[str | None], list[ReferenceStage], KernelBody] | None:
    """The task's C reference read by reference_stages, or None where it has none or it cannot be read."""
    ref = task.reference
    if ref.kind != "c" or not ref.path or not ref.function:
        return None
    try:
        return reference_stages(task.path_of(ref.path).read_text(), ref.function)
    except OSError:
        return None


def reference_flow(task: Task, infos: list, bodies: list[KernelBody], read) -> ReferenceFlow | None:
    """What each kernel's pointer parameters are, from the task's C reference where it has one stage
    per kernel, in launch order, that stores to as many buffers as the kernel and only loads from as
    many: the buffers pair in the order of their first access (TVM prints one operator's code for
    the CPU and the GPU from one expression). None where the reference does not align so. `read`:
    the reference as reference_read gives it."""
    if read is None:
        return None
    ref = task.reference
    c_params, stages, c_body = read
    if len(stages) != len(infos):
        return None
    task_names = {c: name for c, name in zip(c_params, ref.args or c_params) if c}
    # an array of the reference that the task lists as a scratch buffer of its own is that buffer
    task_names |= {b.name: b.name for b in task.buffers if b.role == "scratch" and b.name in c_body.outer_arrays}
    dtypes = {b.name: b.dtype for b in task.buffers}
    flow = ReferenceFlow({}, {}, len(stages))
    written: set[str] = set()
    for info, body, stage in zip(infos, bodies, stages):
        pointers = {p.name: p.type for p in info.params if "*" in p.type or "[" in p.type}
        order = list(dict.fromkeys(a.base for a in body.accesses if a.base in pointers))
        stores = {a.base for a in body.accesses if a.write}
        mine = [p for p in order if p in stores], [p for p in order if p not in stores]
        if (set(order) != set(pointers) or len(mine[0]) != len(stage.written) or len(mine[1]) != len(stage.read)
                or any(c not in task_names and c not in written for c in stage.read)):
            return None
        params = {}
        for param, c in [*zip(mine[0], stage.written), *zip(mine[1], stage.read)]:
            if c in task_names:
                name = task_names[c]
                if dtypes.get(name) != _pointee_dtype(pointers[param], info.name):
                    return None
                params[param] = name
            else:
                params[param] = "%" + c
        for c in stage.written:
            if c not in task_names:
                reach = []
                for acc in c_body.accesses:
                    if acc.base == c and acc.write and acc.stage == stage.index:
                        try:
                            reach.append(_access_range(c_body, acc))
                        except _NOT_FOLLOWED:
                            pass
                ends = [r[1] for r in reach if r]
                if ends:
                    flow.stored[(info.name, c)] = max(ends)
        written |= set(stage.written)
        flow.params[info.name] = params
    return flow
