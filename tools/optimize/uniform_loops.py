"""A loop that every thread of a block runs the same way, taken outside the thread loops.

After barrier fission a thread loop often holds one counted loop whose header no thread changes:
the n-body kernel's `for (int k = 0; k < BLOCK; ++k) a[tid] = interact(me[tid], sh[k], a[tid]);`.
Written that way, each thread runs the whole loop before the next thread starts, and the SIMD
loop over threads has a loop inside it, which g++ does not vectorize. Turned inside out, the
same loop runs outside and a SIMD loop over the threads runs inside it, as a GPU's warps would
run it:

    for (k ...) { for tz { for ty { #pragma omp simd for tx { decls; body } } } }

Between two barriers the threads of a block are unordered, and a kernel without data races gives
the same result in any order that keeps each thread's own statements in order. Lockstep is such
an order. The statements after the loop run in a second thread loop, as they were written. The
declarations before the loop are computed again in each thread loop. So they must be plain values that nothing changes: no
memory reads, no calls other than casts. Loop bodies with jumps (continue, break, return: an
exited thread), atomics, warp operations or runtime objects are left alone. So is a header that
reads a thread's values or anything the body writes.
"""

from __future__ import annotations

import re
import textwrap

from . import code as C
from .block_invariant import _statements
from .transforms import Context, Transform

_DECL = re.compile(r"(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:long\s+)?[\w:]+(?:\s*<[^;=]*>)?(?:\s*\*)*\s+"
                   r"(?P<name>\w+)\s*=\s*(?P<init>[^;]*);", re.S)
_PURE_CALLS = {"make_uint3", "reinterpret_cast", "static_cast", "const_cast"}
_LOOP = re.compile(r"for\s*\(")
_REFUSED = re.compile(r"\b(?:continue|break|return|goto|atomic\w*|__shfl\w*|cudacpu|exited|omp)\b")
_THREAD_NAMES = {"tx", "ty", "tz", "threadIdx", "tid"}
MIN_TRIPS = 8


def uniform_loops(ctx: Context, code: str) -> str | None:
    out, changed = code, False
    for k in reversed(C.kernels(code)):
        body = k.body(out)
        new = _kernel_body(body)
        if new is not None:
            out, changed = C.with_body(out, k, new), True
    return out if changed else None


def _kernel_body(body: str) -> str | None:
    edits = []
    for nest in re.finditer(C.THREAD_NEST, body):
        close = C.matching_brace(body, nest.end() - 1)
        indent = body[body.rfind("\n", 0, nest.start()) + 1:nest.start()]
        text = _inside_out(body[nest.start():nest.end()], body[nest.end():close], indent)
        if text is not None:
            edits.append((nest.start(), close + 1, text))
    for start, end, text in reversed(edits):
        body = body[:start] + text + body[end:]
    return body if edits else None


def _inside_out(head: str, inner: str, indent: str) -> str | None:
    """The thread nest `head { inner }` with its uniform loop outside; None where it has none."""
    statements = _statements(inner)
    if statements is None:
        return None
    compound = [s for s in statements if s[2]]
    if not compound or not _LOOP.match(inner, compound[0][0]):
        return None
    start, end, _ = compound[0]
    prefix = [(a, b) for a, b, _ in statements if b <= start]
    suffix = inner[end:]
    names = set()
    for a, b in prefix:
        m = _DECL.fullmatch(inner[a:b].strip())
        if m is None or not _plain_value(m["init"]) or C.changes(m["name"], inner[b:]):
            return None
        names.add(m["name"])
    loop = inner[start:end]
    open_paren = loop.index("(")
    close_paren = C.call_end(loop, open_paren)
    header, loop_body = loop[open_paren + 1:close_paren], loop[close_paren + 1:]
    counter = re.match(r"\s*(?:[\w:]+\s+)?(\w+)\s*=", header)
    if counter is None or _REFUSED.search(loop_body) or _short(header):
        return None
    read = set(re.findall(r"\b[A-Za-z_]\w*\b", header)) - {counter[1]}
    if not _plain_value(header) or read & (_THREAD_NAMES | names) or any(C.changes(name, loop_body) for name in read):
        return None
    tx_indent = re.search(r"\n([ \t]*)for \(unsigned int tx", head)[1]

    def nest(statements: list[str]) -> str:
        text = "\n".join(textwrap.dedent(s).strip("\n") for s in statements)
        return f"{head}\n{textwrap.indent(text, tx_indent + '    ')}\n{tx_indent}}}"

    decls = [inner[inner.rfind("\n", 0, a) + 1:b] for a, b in prefix]
    body = loop_body.strip()
    if body.startswith("{"):
        body = loop_body[loop_body.index("{") + 1:loop_body.rindex("}")]
    else:  # a single statement: dedent it as written on its own line
        body = " " * 8 + body
    moved = nest(decls + [body]).replace("\n", "\n    ")
    text = f"for ({header}) {{\n{indent}    {moved}\n{indent}}}"
    if suffix.strip():
        text += f"\n{indent}{nest(decls + [suffix])}"
    return text


def _short(header: str) -> bool:
    """A loop of a few constant trips (TVM's unrolled ones): g++ unrolls it inside the thread
    loop, and outside it would only add loop overhead."""
    m = re.fullmatch(r"\s*int\s+(\w+)\s*=\s*(\d+)\s*;\s*\1\s*<\s*(\d+)\s*;\s*(?:\+\+\1|\1\+\+)\s*", header)
    return m is not None and int(m[3]) - int(m[2]) < MIN_TRIPS


def _plain_value(text: str) -> bool:
    """No memory read and no call but a cast: the same value wherever it is computed again."""
    calls = set(re.findall(r"\b(\w+)\s*(?:<[^<>]*>)?\s*\(", text))
    return "[" not in text and "->" not in text and not calls - _PURE_CALLS


UNIFORM_LOOPS = Transform("uniform_loops", "a loop every thread runs the same way taken outside the thread loops "
                          "(threads in lockstep, SIMD inside)", uniform_loops)
