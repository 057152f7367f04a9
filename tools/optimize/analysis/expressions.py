"""C expressions of the lowered code as trees with their place in the text.

Enough of C for what TVM and the lowering write inside thread loops: numbers (hex floats
included), names (`threadIdx.x`, `std::max`), parentheses, casts to a named type, calls,
subscripts, unary and binary operators, the conditional operator. Anything else raises
ValueError, and a transformation that asked leaves the code alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TOKEN = re.compile(r"\s*(?:(?P<num>(?:0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*(?:[pP][-+]?\d+)?|\d+\.?\d*(?:[eE][-+]?\d+)?"
                    r"|\.\d+(?:[eE][-+]?\d+)?)[fFlLuU]*)"
                    r"|(?P<name>[A-Za-z_]\w*(?:::\w+)*(?:\.[xyzw])?)"
                    r"|(?P<op>\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>()!~&|^?:,\[\]]))")  # ++ and -- only to refuse them
_TYPES = {"int", "unsigned", "signed", "long", "short", "char", "float", "double", "bool", "const", "size_t",
          "std::size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uint"}
_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
           "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}


@dataclass
class Expr:
    kind: str  # num, name, call, index, cast, unary, binary, cond, paren
    start: int  # span in the text parsed
    end: int
    op: str = ""  # operator, called or subscripted name, cast type
    args: list["Expr"] = field(default_factory=list)


def parse_expression(text: str) -> Expr:
    tokens = _tokenize(text)
    parser = _Parser(tokens, len(text))
    node = parser.conditional()
    if parser.i != len(tokens):
        raise ValueError(f"unparsed text at {tokens[parser.i][0]!r}")
    return node


def _tokenize(text: str) -> list[tuple[str, str, int, int]]:
    """(text, kind, start, end) of each token; comments are whitespace."""
    text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group()), text, flags=re.S)
    out, pos = [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read {text[pos:pos + 12]!r}")
        kind = m.lastgroup or ""
        out.append((m.group(kind), kind, m.start(kind), m.end()))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens, length: int):
        self.t, self.i, self.length = tokens, 0, length

    def peek(self) -> str:
        return self.t[self.i][0] if self.i < len(self.t) else ""

    def take(self, expected: str | None = None) -> tuple[str, str, int, int]:
        if self.i >= len(self.t) or (expected is not None and self.t[self.i][0] != expected):
            raise ValueError(f"expected {expected!r}")
        self.i += 1
        return self.t[self.i - 1]

    def conditional(self) -> Expr:
        cond = self.binary(1)
        if self.peek() != "?":
            return cond
        self.take("?")
        yes = self.conditional()
        self.take(":")
        no = self.conditional()
        return Expr("cond", cond.start, no.end, "?", [cond, yes, no])

    def binary(self, min_prec: int) -> Expr:
        left = self.unary()
        while _BINARY.get(self.peek(), 0) >= min_prec:
            op = self.take()[0]
            right = self.binary(_BINARY[op] + 1)
            left = Expr("binary", left.start, right.end, op, [left, right])
        return left

    def unary(self) -> Expr:
        tok, kind, start, _ = self.t[self.i] if self.i < len(self.t) else ("", "", self.length, self.length)
        if tok in ("-", "+", "!", "~"):
            self.take()
            inner = self.unary()
            return Expr("unary", start, inner.end, tok, [inner])
        if tok == "(" and self._cast_ahead():
            self.take("(")
            words = []
            while self.peek() != ")":
                words.append(self.take()[0])
            self.take(")")
            inner = self.unary()
            return Expr("cast", start, inner.end, " ".join(words), [inner])
        return self.postfix(self.primary())

    def _cast_ahead(self) -> bool:
        j = self.i + 1
        while j < len(self.t) and self.t[j][0] in _TYPES:
            j += 1
        return j > self.i + 1 and j < len(self.t) and self.t[j][0] == ")"

    def primary(self) -> Expr:
        if self.i >= len(self.t):
            raise ValueError("expression ends early")
        tok, kind, start, end = self.take()
        if kind == "num":
            return Expr("num", start, end, tok)
        if kind == "name":
            return Expr("name", start, end, tok)
        if tok == "(":
            inner = self.conditional()
            close = self.take(")")
            return Expr("paren", start, close[3], "()", [inner])
        raise ValueError(f"unexpected {tok!r}")

    def postfix(self, node: Expr) -> Expr:
        while self.peek() in ("(", "["):
            if self.peek() == "(":
                if node.kind != "name":
                    raise ValueError("call of an expression")
                self.take("(")
                args = []
                while self.peek() != ")":
                    args.append(self.conditional())
                    if self.peek() != ")":
                        self.take(",")
                close = self.take(")")
                node = Expr("call", node.start, close[3], node.op, args)
            else:
                self.take("[")
                index = self.conditional()
                close = self.take("]")
                node = Expr("index", node.start, close[3], node.op if node.kind == "name" else "", [node, index])
        return node
