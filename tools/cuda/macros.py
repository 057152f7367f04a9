"""The project's own macros expanded inside device code, so that the lowering sees what the
compiler sees: a `__shared__` array used only through `SCORE(i, j)`, a `FOR_KERNEL_LOOP`
naming `blockIdx`, `#define __shfl(v, d) __shfl_sync(...)`.

Only macros defined in the file itself or in the project's headers are expanded (the C
preprocessor's rules: arguments expanded unless next to `#` or `##`, a macro not expanded
inside its own expansion); those of system headers and of the CUDA shim (`assert`, `FLT_MAX`,
`__shared__`) stay as written. Each expansion keeps its invocation's line count.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import clang.cindex as ci

from . import frontend as fe

K = ci.CursorKind


@dataclass
class Macro:
    params: list[str] | None  # None: object-like
    variadic: bool
    body: list[str]


def _definitions(tr, own_dirs: list[Path]) -> dict[str, Macro]:
    """The project's macro definitions (the last of each name)."""
    dirs = [d.resolve() for d in own_dirs]
    out: dict[str, Macro] = {}
    for c in tr.tu.cursor.get_children():
        if c.kind != K.MACRO_DEFINITION or c.location.file is None:
            continue
        path = Path(c.location.file.name)
        if path.name != Path(tr.filename).name and not any(path.resolve().is_relative_to(d) for d in dirs):
            continue
        raw = list(c.get_tokens())
        tokens = [t.spelling for t in raw]
        if not tokens:
            continue
        # Function-like: `(` right after the name, with no space between.
        if len(raw) > 1 and tokens[1] == "(" and raw[1].extent.start.offset == raw[0].extent.end.offset:
            close = tokens.index(")") if ")" in tokens else len(tokens) - 1
            params = [t for t in tokens[2:close] if t != ","]
            variadic = bool(params) and params[-1] == "..."
            if variadic:
                params[-1] = "__VA_ARGS__"
            elif params and params[-1].endswith("..."):  # a named variadic parameter: `args...`
                variadic = True
            out[tokens[0]] = Macro(params, variadic, tokens[close + 1:])
        else:
            out[tokens[0]] = Macro(None, False, tokens[1:])
    return out


def call_arguments(tokens: list[str], start: int) -> tuple[list[list[str]], int] | None:
    """The arguments of a call whose `(` is at tokens[start], and the index after its `)`."""
    if start >= len(tokens) or tokens[start] != "(":
        return None
    args: list[list[str]] = [[]]
    depth = 0
    for i in range(start, len(tokens)):
        t = tokens[i]
        if t in ("(", "[", "{"):
            depth += 1
            if depth == 1:
                continue
        elif t in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return ([] if args == [[]] else args), i + 1
        elif t == "," and depth == 1:
            args.append([])
            continue
        args[-1].append(t)
    return None


def _stringify(tokens: list[str]) -> str:
    text = " ".join(tokens)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Expander:
    def __init__(self, macros: dict[str, Macro]):
        self.macros = macros

    def expand(self, tokens: list[str], disabled: frozenset[str] = frozenset()) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(tokens):
            t = tokens[i]
            macro = self.macros.get(t) if t not in disabled else None
            if macro is None:
                out.append(t)
                i += 1
                continue
            if macro.params is None:
                out += self.expand(macro.body, disabled | {t})
                i += 1
                continue
            found = call_arguments(tokens, i + 1)
            if found is None:  # a function-like macro's name not called: left alone
                out.append(t)
                i += 1
                continue
            args, after = found
            out += self.expand(self._substitute(macro, args, disabled), disabled | {t})
            i = after
        return out

    def _substitute(self, macro: Macro, args: list[list[str]], disabled: frozenset[str]) -> list[str]:
        params = macro.params or []
        named = len(params) - (1 if macro.variadic else 0)
        values: dict[str, list[str]] = {}
        for n, p in enumerate(params[:named]):
            values[p] = args[n] if n < len(args) else []
        if macro.variadic:
            rest = args[named:]
            joined: list[str] = []
            for n, a in enumerate(rest):
                joined += ([","] if n else []) + a
            values[params[-1].removesuffix("...")] = joined
        body = macro.body
        out: list[str] = []
        i = 0
        while i < len(body):
            t = body[i]
            if t == "#" and i + 1 < len(body) and body[i + 1] in values:
                out.append(_stringify(values[body[i + 1]]))
                i += 2
                continue
            if t == "##" and out and i + 1 < len(body):
                right = body[i + 1]
                right_tokens = values.get(right, [right])
                left = out.pop()
                out.append(left + (right_tokens[0] if right_tokens else ""))
                out += right_tokens[1:]
                i += 2
                continue
            if t in values:
                pasted = (i + 1 < len(body) and body[i + 1] == "##") or (i > 0 and body[i - 1] == "##")
                out += values[t] if pasted else self.expand(values[t], disabled)
            else:
                out.append(t)
            i += 1
        return out


def _bodies(tr) -> list[ci.Cursor]:
    """The bodies of the file's kernels and __device__ functions."""
    out = []
    for c in tr.walk_main():
        if c.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) and c.is_definition() and tr.in_main(c) \
                and (fe.is_kernel(c) or fe.is_device(c)):
            body = fe.body_of(c)
            if body is not None:
                out.append(body)
    return out


# Words of expansions that name nothing the lowering could rewrite.
_KEYWORDS = {"sizeof", "alignof", "const", "volatile", "unsigned", "signed", "int", "long", "short", "char", "float",
             "double", "bool", "void", "true", "false", "nullptr", "static_cast", "reinterpret_cast", "const_cast",
             "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"}


def _names_something(tokens: list[str]) -> bool:
    """An expansion that mentions a variable, function or CUDA built-in (not only constants)."""
    return any((t[0].isalpha() or t[0] == "_") and t not in _KEYWORDS for t in tokens)


def expand_device_macros(tr, own_dirs: list[Path]) -> str | None:
    """The file's text with the project's macros expanded inside its device code where their
    expansion names something (constants such as `#define TILE 16` stay as written); None where
    nothing is expanded."""
    macros = _definitions(tr, own_dirs)
    spans = [(b.extent.start.offset, b.extent.end.offset) for b in _bodies(tr)]
    return _expanded(tr, macros, None, spans) if macros and spans else None


def expand_header_macros(tr, own_dirs: list[Path]) -> dict[str, str]:
    """The same for the project headers whose device functions the file's code calls (the
    lowering inlines those with barriers): header path -> its text, for the headers with any
    expansion."""
    macros = _definitions(tr, own_dirs)
    spans: dict[str, list[tuple[int, int]]] = {}
    for fn in [*tr.functions.values(), *tr.members.values()]:
        body = fe.body_of(fn)
        if body is not None and not tr.in_main(fn) and fn.location.file is not None:
            spans.setdefault(fn.location.file.name, []).append((body.extent.start.offset, body.extent.end.offset))
    out = {}
    for path, bodies in spans.items():
        if macros and (text := _expanded(tr, macros, path, bodies)) is not None:
            out[path] = text
    return out


def _expanded(tr, macros: dict[str, Macro], file: str | None, spans: list[tuple[int, int]]) -> str | None:
    """`file`'s text (the file parsed where None) with the macros invoked inside `spans` expanded."""
    sites = []
    for c in tr.tu.cursor.get_children():
        if c.kind != K.MACRO_INSTANTIATION or c.spelling not in macros:
            continue
        if not (tr.in_main(c) if file is None else c.location.file is not None and c.location.file.name == file):
            continue
        start, end = c.extent.start.offset, c.extent.end.offset
        if any(s <= start and end <= e for s, e in spans):
            sites.append((start, end))
    expander = Expander(macros)
    edits = fe.SourceEdits(tr, file)
    taken = 0
    for start, end in sorted(sites):
        if start < taken:  # inside an expansion already taken
            continue
        extent = tr.tu.get_extent(file or tr.filename, (start, end))
        expansion = expander.expand([t.spelling for t in tr.tu.get_tokens(extent=extent)])
        if not _names_something(expansion):
            continue
        edits.replace(start, end, " ".join(expansion) + "\n" * tr.text(start, end, file).count("\n"))
        taken = end
    return edits.apply() if edits.edits else None
