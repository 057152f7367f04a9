"""C source surgery, pure text (no TVM needed).

`make_self_contained` turns the C that TVM's C target emits (a packed-API function over
DLTensor handles, TVM runtime headers, TVMBackendAllocWorkspace) into a plain C function
over typed pointers that compiles with gcc alone. TVM's C target prints parallel loops
as serial ones; the loops named parallel become OpenMP loops.

`repair_reference` makes a published HPCTransEval C reference usable: it includes the C
headers its bare function needs (`int32_t`, `expf`), defines `max` and `min` where they are
called but not defined, moves very large stack arrays to static storage, and renames
parameters that are C++ keywords.
"""

from __future__ import annotations

import re

C_TYPES = {
    "float32": "float", "float64": "double", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "bool": "int8_t",
}

HEADER = "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <stdlib.h>\n"


class CSourceError(Exception):
    """The C text does not have the shape this module expects."""


def make_self_contained(source: str, function: str, params: list[tuple[str, str]], parallel: list[str] = ()) -> str:
    """Rewrite TVM C-target output into `void function(T* p0, T* p1, ...)`.

    `params` are (name, dtype) in the order of the TVM function's parameters; `parallel`
    the loop variables of the schedule's parallel loops.
    """
    body = _packed_body(source)
    body = _drop_unpacking(body, [name for name, _ in params])
    body = _plain_memory(body)
    body = _openmp_loops(body, parallel)
    signature = ", ".join(f"{C_TYPES[dtype]}* __restrict__ {name}" for name, dtype in params)
    return f"{HEADER}\nvoid {function}({signature}) {{\n{body}}}\n"


def _packed_body(source: str) -> str:
    """The body of the packed function TVM emits (there is one per workload)."""
    m = re.search(r"int32_t __tvm_ffi_\w+\(void\* self_handle, void\* args, int32_t num_args, void\* result\) \{\n", source)
    if not m:
        raise CSourceError("no TVM packed function in the C source")
    start = m.end()
    end = source.find("\n}\n", start)  # the function's closing brace is the first one in column 0
    if end < 0:
        raise CSourceError("unterminated TVM packed function")
    if re.search(r"TVMBackendParallelLaunch|__tvm_parallel_lambda", source):
        raise CSourceError("parallel TVM C code is not supported (use a serial CPU schedule)")
    return source[start:end + 1]


def _drop_unpacking(body: str, names: list[str]) -> str:
    """Cut the argument checking up to the last `T* name = ... name_handle ... data` line."""
    last = -1
    for name in names:
        m = None
        for m in re.finditer(rf"^  \w+\* {re.escape(name)} = .*\b{re.escape(name)}_handle\b.*\.data.*;\n", body, re.M):
            pass
        if m is None:
            raise CSourceError(f"parameter {name} is never unpacked in the TVM C source")
        last = max(last, m.end())
    return body[last:]


def _plain_memory(body: str) -> str:
    body = re.sub(r"TVMBackendAllocWorkspace\(\s*\d+,\s*\w+,\s*\(uint64_t\)(\d+)ULL,\s*\d+,\s*\d+\)", r"malloc(\1ULL)", body)
    body = re.sub(r"if \(TVMBackendFreeWorkspace\(\s*\d+,\s*\w+,\s*(\w+)\) != 0\) \{\n\s*return -1;\n\s*\}\n", r"free(\1);\n", body)
    body = re.sub(r"\breturn -?\d+;", "return;", body)
    body = re.sub(r"\n  return;\n$", "\n", body)
    if "TVM" in body or "DLTensor" in body:
        left = re.search(r".*(TVM|DLTensor).*", body)
        raise CSourceError(f"TVM runtime call left in the C body: {left.group(0).strip() if left else ''}")
    return body


def _openmp_loops(body: str, parallel: list[str]) -> str:
    """Put `#pragma omp parallel for` on the loops over the given variables.

    Each iteration of a TVM parallel loop touches its own part of every buffer and
    declares its temporaries inside the loop (TVM runs it as a parallel launch), so the
    loop can be shared out as it is. A parallel loop TVM removed (extent 1) needs nothing.
    """
    marked = body
    for name in parallel:
        loop = re.compile(rf"^(?P<indent> *)for \(int(?:32|64)_t {re.escape(name)} = ", re.M)
        marked = loop.sub(lambda m: f"{m['indent']}#pragma omp parallel for\n{m.group(0)}", marked)
    if marked != body:  # no return may leave an OpenMP loop: a failed allocation aborts instead
        marked = re.sub(r"(if \(\w+ == NULL\) \{\n\s*)return;", r"\1abort();", marked)
    return marked


# ------------------------------------------------------------ published references

CXX_KEYWORDS = {
    "new", "delete", "class", "template", "this", "operator", "private", "public", "protected", "virtual",
    "namespace", "using", "typename", "friend", "explicit", "mutable", "export", "throw", "try", "catch",
    "bool", "true", "false", "and", "or", "not", "xor", "compl", "bitand", "bitor", "and_eq", "or_eq",
    "xor_eq", "not_eq", "nullptr", "decltype", "constexpr", "noexcept", "static_assert", "thread_local",
    "alignas", "alignof", "char16_t", "char32_t", "concept", "requires", "module", "import",
}
MINMAX = (
    "#ifndef max\n#define max(a, b) ((a) > (b) ? (a) : (b))\n#endif\n"
    "#ifndef min\n#define min(a, b) ((a) < (b) ? (a) : (b))\n#endif\n"
)
STACK_LIMIT_BYTES = 1 << 20
_SIZES = {"float": 4, "double": 8, "int": 4, "int32_t": 4, "int64_t": 8, "int8_t": 1, "uint8_t": 1, "char": 1,
          "short": 2, "int16_t": 2, "uint32_t": 4, "uint64_t": 8, "bool": 1, "signed char": 1}


def repair_reference(code: str) -> tuple[str, list[str]]:
    """Return (repaired code, list of what was changed)."""
    notes: list[str] = []
    code, renamed = _rename_keyword_params(code)
    if renamed:
        notes.append(f"renamed C++ keyword parameters: {', '.join(renamed)}")
    if re.search(r"\b(max|min)\s*\(", code) and not re.search(r"#define\s+(max|min)\b|\b(max|min)\s*\([^)]*\)\s*\{", code):
        code = MINMAX + code
        notes.append("defined max/min")
    code, moved = _static_big_arrays(code)
    if moved:
        notes.append(f"moved large stack arrays to static storage: {', '.join(moved)}")
    if not re.search(r"^\s*#\s*include\b", code, re.M):
        code = HEADER + code
        notes.append("included math.h, stdbool.h, stdint.h, stdlib.h")
    return code, notes


def _rename_keyword_params(code: str) -> tuple[str, list[str]]:
    renamed = []
    for m in re.finditer(r"\b(?:void|int32_t|int)\s+\w+\s*\(([^)]*)\)\s*\{", code):
        for param in m.group(1).split(","):
            words = re.findall(r"[A-Za-z_]\w*", param)
            if words and words[-1] in CXX_KEYWORDS and len(words) > 1:
                renamed.append(words[-1])
    for word in dict.fromkeys(renamed):
        code = re.sub(rf"\b{word}\b(?!\s*\()", f"{word}_", code)
    return code, list(dict.fromkeys(renamed))


def _static_big_arrays(code: str) -> tuple[str, list[str]]:
    """Large arrays declared directly in a function body become static.

    Only at the function's top level (brace depth 1): there one instance per call is all
    the code can use, while an array inside a loop may be private to an OpenMP thread.
    """
    moved = []
    depth_at = _brace_depths(code)

    def fix(m: re.Match) -> str:
        dims = re.findall(r"\[(\d+)\]", m["dims"])
        size = _SIZES.get(m["type"].split()[-1], 8)
        for d in dims:
            size *= int(d)
        if size <= STACK_LIMIT_BYTES or depth_at[m.start("type")] != 1:
            return m.group(0)
        moved.append(m["name"])
        return f"{m['indent']}static {m.group(0).lstrip()}"

    pattern = re.compile(r"^(?P<indent>[ \t]*)(?!static\b|return\b)(?P<type>(?:signed |unsigned )?[A-Za-z_]\w*)\s+(?P<name>\w+)(?P<dims>(?:\[\d+\])+)\s*;", re.M)
    return pattern.sub(fix, code), moved


def _brace_depths(code: str) -> list[int]:
    """The brace nesting depth at every character position (comments and strings are rare here)."""
    depths, depth = [], 0
    for ch in code:
        depths.append(depth)
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
    return depths
