"""Reading the text of a lowered translation unit: kernel functions, braces, loop headers.

The deterministic lowering (tools/cuda) emits a regular shape: every kernel is
`void K(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, params...) {...}` inside
`namespace cudacpu_kernels`, blocks as a `collapse(3)` loop, threads as `tx/ty/tz` loops. The
transformations find their way by that shape and give up (return None) on anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KERNEL_HEAD = re.compile(r"^(?P<indent>[ \t]*)void (?P<name>\w+)\(dim3 gridDim(?:_arg)?, dim3 blockDim(?:_arg)?, "
                         r"std::size_t (?:/\*\s*)?dynamicSharedBytes(?:\s*\*/)?"
                         r"(?P<params>[^{;]*)\)\s*\{", re.M)
THREAD_LOOP_X = "for (unsigned int tx = 0; tx < blockDim.x; ++tx) {"
DIMS = "xyz"
# The lowering's full tz/ty/tx thread nest up to the tx loop's `{` (a pattern, for re.compile)
THREAD_NEST = (r"for \(unsigned int tz = 0; tz < blockDim\.z; \+\+tz\)\s*"
               r"for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\s*(?:#pragma omp simd\s*)?"
               r"for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{")
_THREAD_NEST = re.compile(THREAD_NEST)
MARKER = "// tools.optimize:"
NOTHING_APPLIED = "searched, input kept"  # what the marker names where no transformation was kept
# The launch extents as compile-time constants (launch_constants, specialize): grid x, y, z, block x, y, z
CONSTANT_EXTENTS = re.compile(r"constexpr cudaopt::Extent<(\d+), (\d+), (\d+)> gridDim\{\}; "
                              r"constexpr cudaopt::Extent<(\d+), (\d+), (\d+)> blockDim\{\};")
# A block's `__shared__` memory as the lowering declares it (static, or the dynamic buffer's view)
SHARED_DECL = re.compile(r"(\w+)(?:\[[^\]]*\])*;  // __shared__: one per block|(\w+) = dynamic_shared\.as<[^>]*>\(\);  // extern __shared__")


@dataclass
class KernelText:
    name: str
    start: int  # offset of `void`
    body_open: int  # offset of the function's `{`
    end: int  # offset just past the function's closing `}`
    params: str  # ", const float* a, int n" (after dynamicSharedBytes)
    params_start: int  # offset of `params` in the code

    def text(self, code: str) -> str:
        return code[self.start:self.end]

    def body(self, code: str) -> str:
        """Between the function's braces."""
        return code[self.body_open + 1:self.end - 1]


def matching_brace(text: str, open_index: int) -> int:
    """Index of the `}` closing the `{` at open_index; skips comments, strings and char literals."""
    depth, i, n = 0, open_index, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if ch in "\"'":
            i = _skip_literal(text, i)
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError("unbalanced braces")


def _skip_literal(text: str, i: int) -> int:
    quote, i = text[i], i + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def kernels(code: str) -> list[KernelText]:
    """The lowered kernel functions of a translation unit, in order."""
    found = []
    for m in KERNEL_HEAD.finditer(code):
        open_index = m.end() - 1
        try:
            close = matching_brace(code, open_index)
        except ValueError:
            continue
        found.append(KernelText(m["name"], m.start() + len(m["indent"]), open_index, close + 1, m["params"], m.start("params")))
    return found


def template_values(code: str, k: KernelText) -> dict[str, str]:
    """The kernel's integral template parameters (`template <int BLOCK>` before it): name -> type.
    They are constants of each instantiation, the same for every thread."""
    line_start = code.rfind("\n", 0, k.start - 1) + 1
    m = re.fullmatch(r"\s*template\s*<(?P<params>[^<>]*)>\s*", code[line_start:k.start])
    if m is None:
        return {}
    found = (re.fullmatch(r"\s*(?P<type>(?:unsigned\s+|signed\s+)?(?:int|long|short|char)|unsigned|bool|(?:std::)?size_t)"
                          r"\s+(?P<name>\w+)\s*", p) for p in m["params"].split(","))
    return {f["name"]: f["type"] for f in found if f}


def kernel_named(code: str, name: str) -> KernelText | None:
    matches = [k for k in kernels(code) if k.name == name]
    return matches[0] if len(matches) == 1 else None


def replace_span(code: str, start: int, end: int, text: str) -> str:
    return code[:start] + text + code[end:]


def split_params(params: str) -> list[str]:
    """Top-level comma split of a parameter list (templates may hold commas)."""
    out, depth, cur = [], 0, []
    for ch in params:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def param_name(param: str) -> str | None:
    m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", param)
    return m.group(1) if m else None


def call_end(text: str, open_paren: int) -> int:
    """Index of the `)` closing the `(` at open_paren, or of the `]` closing a `[` there (no strings
    or comments inside calls and subscripts here)."""
    opening, closing = ("[", "]") if text[open_paren] == "[" else ("(", ")")
    depth = 0
    for i in range(open_paren, len(text)):
        depth += text[i] == opening
        depth -= text[i] == closing
        if depth == 0:
            return i
    raise ValueError("unbalanced parentheses")


def thread_loop_bodies(body: str) -> list[tuple[int, int]]:
    """(open, close) brace offsets of every `tx` thread loop in a kernel body."""
    spans, pos = [], 0
    while (i := body.find(THREAD_LOOP_X, pos)) >= 0:
        open_index = i + len(THREAD_LOOP_X) - 1
        close = matching_brace(body, open_index)
        spans.append((open_index, close))
        pos = close
    return spans


class ThreadNest:
    """A thread-loop nest of a block's body: where it starts, its tx loop's braces, its chain (see thread_nests)."""

    def __init__(self, start: int, open_: int, close: int, chain: int):
        self.start, self.open, self.close, self.chain = start, open_, close, chain


def thread_nests(body: str) -> list[ThreadNest]:
    """The thread-loop nests of a block's body, in order; nests separated only by comments or
    whitespace share a chain number (straight-line code between them)."""
    out: list[ThreadNest] = []
    chain, pos = 0, 0
    for m in _THREAD_NEST.finditer(body):
        if m.start() < pos:
            continue
        close = matching_brace(body, m.end() - 1)
        if not out or strip_comments(body[out[-1].close + 1:m.start()]).strip():
            chain += 1
        out.append(ThreadNest(m.start(), m.end() - 1, close, chain))
        pos = close + 1
    return out


def statement_end(text: str) -> int | None:
    """Index of the `;` ending the simple statement text starts with; None when a brace comes
    first (a compound statement) or no statement ends."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch in "{}":
            return None
        elif ch == ";" and depth == 0:
            return i
    return None


def statements(text: str) -> list[tuple[int, int, bool]] | None:
    """(start, end, compound) of each top-level statement of a block's text; None where the text
    is not a sequence of statements this reader knows."""
    out, i = [], skip_space(text, 0)
    while i < len(text):
        end = statement_span(text, i)
        if end is None:
            return None
        head = i
        while text.startswith("#", head):  # pragmas belong to the statement they precede
            head = skip_space(text, text.index("\n", head))
        out.append((i, end, text[head] in "{" or re.match(r"(for|if|while|do)\b", text[head:]) is not None))
        i = skip_space(text, end)
    return out


def statement_span(text: str, i: int) -> int | None:
    """Offset just past the statement starting at i (pragmas before it, an if's else included);
    None where the reader does not know the statement (do-while) or it does not end."""
    if text.startswith("#", i):
        newline = text.find("\n", i)
        return None if newline < 0 else statement_span(text, skip_space(text, newline))
    if text.startswith("{", i):
        return matching_brace(text, i) + 1
    m = re.match(r"(for|while|switch|if)\s*\(", text[i:])
    if m:
        after = skip_space(text, call_end(text, i + m.end() - 1) + 1)
        end = statement_span(text, after)
        if end is not None and m[1] == "if":
            nxt = skip_space(text, end)
            if re.match(r"else\b", text[nxt:]):
                end = statement_span(text, skip_space(text, nxt + 4))
        return end
    if re.match(r"do\b", text[i:]):
        return None
    end = statement_end(text[i:])
    return None if end is None else i + end + 1


def skip_space(text: str, i: int) -> int:
    """The first offset at or after i that is neither blank nor in a comment."""
    while i < len(text):
        if text[i].isspace():
            i += 1
        elif text.startswith("//", i):
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline + 1
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        else:
            break
    return i


_DECLARATION_TYPE = re.compile(r"(?:const\s+)?[A-Za-z_][\w:]*(?:<[^;]*>)?[\s*&]+(?=[A-Za-z_]\w*\s*(?:\[|;|,|=))")


def declaration_type(stmt: str) -> re.Match | None:
    """The type of a statement (stripped) that declares variables (`const float* p = q;`,
    `int a[4], b;`): the match ends where its declarators begin. None for other statements."""
    if re.match(r"(return|delete|goto|case|else)\b", stmt):
        return None
    return _DECLARATION_TYPE.match(stmt)


def split_top_level(text: str) -> list[str]:
    """text split at its commas outside parentheses and brackets (declarators, initialisers)."""
    out, depth, cur = [], 0, ""
    for c in text:
        depth += c in "(["
        depth -= c in ")]"
        if c == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    return out + [cur]


_CONSTANT_MACRO = re.compile(r"^[ \t]*#define[ \t]+(\w+)[ \t]+(?:[-+*/%()<>&|^~ \t]|0[xX][0-9a-fA-F]+|\d+[uUlL]*)+$", re.M)


def constant_macros(code: str) -> set[str]:
    """Object-like macros defined as integer arithmetic of literals (`#define BS 16`,
    `#define TILE (16 + 2)`): names that read nothing and never change."""
    return set(_CONSTANT_MACRO.findall(code))


def macro_values(code: str) -> dict[str, tuple[int, bool]]:
    """The macros defined once as one integer literal: name -> (value, whether it is unsigned)."""
    found = re.findall(r"^[ \t]*#define[ \t]+(\w+)[ \t]+(0[xX][0-9a-fA-F]+|\d+)([uU]?)[ \t]*$", code, re.M)
    names = [name for name, _, _ in found]
    return {name: (int(value, 0), bool(suffix)) for name, value, suffix in found
            if names.count(name) == 1 and not re.search(rf"#[ \t]*undef[ \t]+{name}\b", code)}


def address_kept(body: str, name: str) -> bool:
    """Is `&name` taken anywhere but as the target of an atomic (where no pointer outlives the call)?"""
    return any(not re.search(r"atomic\w*\(\s*$", body[max(0, m.start() - 40):m.start()])
               for m in re.finditer(rf"&\s*{name}\b", body))


def shared_scalars(body: str) -> set[str]:
    """The kernel body's static `__shared__` scalars that no kept pointer reaches (see address_kept):
    a store through such a pointer would escape any test of the name itself."""
    return {a for a, _ in SHARED_DECL.findall(body) if a and re.search(rf"\b{a};  // __shared__", body)
            and not address_kept(body, a)}


def with_body(code: str, k: KernelText, body: str) -> str:
    """The translation unit with kernel k's body (the text between its braces) replaced."""
    return code[:k.body_open + 1] + body + code[k.end - 1:]


def with_support(code: str, support: str) -> str | None:
    """`support` (definitions that rewritten kernels use) placed before the first lowered
    kernel; None when the code has none."""
    first = code.find("// CUDA kernel")
    return code[:first] + support + "\n" + code[first:] if first >= 0 else None


def brace_depth(text: str, pos: int) -> int:
    """How many braces are open at pos (in text without comments or string literals)."""
    return text.count("{", 0, pos) - text.count("}", 0, pos)


def changes(name: str, text: str) -> bool:
    """Whether `text` assigns, increments or takes the address of the variable `name`."""
    assign = re.compile(rf"(?<![\w.]){name}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)")
    if assign.search(text) or re.search(rf"(?:\+\+|--)\s*{name}\b|\b{name}\s*(?:\+\+|--)", text):
        return True
    for m in re.finditer(rf"&\s*{name}\b", text):  # the address taken, not `a & name` or `a && name`
        before = text[:m.start()].rstrip()
        if not before or not (before[-1].isalnum() or before[-1] in "_)]&"):
            return True
    return False


def writes(name: str, text: str) -> bool:
    """Whether `text` assigns or increments the variable `name` (its address taken is not a write: see changes)."""
    return bool(re.search(rf"(?<![\w.])(?:\+\+|--)\s*{name}\b|(?<![\w.]){name}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                          rf"(?<![\w.]){name}\s*(?:\+\+|--)", text))


def indent_at(text: str, pos: int) -> str:
    """The blanks that start pos's line, up to pos."""
    line_start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[line_start:pos]).group()


def only_read(body: str, name: str) -> bool:
    """Every use of pointer `name` is a subscript read: not written, incremented, passed or
    taken the address of."""
    text = strip_comments(body)
    for m in re.finditer(rf"(?<![\w.]){name}\b", text):
        after = text[m.end():].lstrip()
        if not after.startswith("[") or text[:m.start()].rstrip().endswith("&"):
            return False
        close = call_end(text, text.index("[", m.end()))
        rest = text[close + 1:].lstrip()
        if re.match(r"(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--|\.", rest) or text[:m.start()].rstrip().endswith(("++", "--")):
            return False
    return True


def assigned(body: str, name: str) -> bool:
    """Written (see writes) or its address taken."""
    text = strip_comments(body)
    return writes(name, text) or bool(re.search(rf"&\s*{name}\b", text))


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def mark(code: str, applied: list[str]) -> str:
    """The optimized file names what was applied on its first line (and is recognised by it)."""
    lines = code.split("\n", 1)
    if lines[0].startswith(MARKER):
        code = lines[1] if len(lines) > 1 else ""
    return f"{MARKER} {', '.join(applied) or NOTHING_APPLIED}\n{code}"


def is_marked(code: str) -> bool:
    return code.startswith(MARKER)


def applied(code: str) -> list[str] | None:
    """The transformations an optimized file names on its first line (see mark); None where the
    file is not the optimizer's."""
    if not is_marked(code):
        return None
    names = code.split("\n", 1)[0][len(MARKER):].strip()
    return [] if names == NOTHING_APPLIED else [n.strip() for n in names.split(",")]
