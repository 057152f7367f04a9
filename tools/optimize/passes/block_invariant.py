"""block_invariant: work that every block of a launch repeats identically, done once per worker.

TVM's fused kernels often recompute in every block a reduction over the whole batch (the column
sums of `sum_broadcast`, `center`, ...): a stretch of the block's body that reads neither its
block's coordinates nor anything the launch writes, and leaves its result in shared (or
per-thread) arrays for the rest of the block. That stretch leaves the same values in every block,
so each OpenMP thread runs it for its first block only, keeps the arrays it leaves, and copies
them back in its later blocks. Exact: the values copied are the ones the same operations gave.

A stretch (consecutive compound statements of the block's body) qualifies when
- it names no block coordinate, no name declared earlier in the block, no pointer the kernel
  writes (or passes on), no scalar parameter it assigns, no warp exchange or dynamic shared
  memory, and calls pure math functions only;
- every shared or per-thread array it names is written nowhere earlier in the block, other than
  by such a stretch taken before it (whose arrays hold the same values in every block): what
  an array never written holds is undefined in CUDA, so a race-free kernel's results cannot
  depend on it;
- every launch passes distinct buffers (a pointer only read is not another's alias).
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.block_nest import BLOCK_NEST, PARALLEL_FOR, PERTHREAD_DECL, REGION_FOR, SHARED_ARRAY_DECL
from ..analysis.launches import distinct_buffers
from ..analysis.math_calls import DOUBLE_CALLS, FLOAT_CALLS, PURE_CALLS
from ..base import Context, Transform

_HIDDEN_STATE = re.compile(r"cudacpu::(?:WarpExchange|SharedBuffer) (\w+)\(")
_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_CALLED = re.compile(r"(?<![\w.>])([A-Za-z_][\w:]*)\s*\(")
_LOOP_VAR = re.compile(r"\bfor \((?:[\w:]+\s+)+(\w+)\s*=")
_DECLARED = re.compile(r"^(?:alignas\(\d+\)\s*)?(?:(?:const|static|volatile|unsigned|signed)\s+)*[A-Za-z_][\w:]*"
                       r"(?:\s*<[^;]*?>)?[\s*&]+(?P<name>\w+)\s*(?:\[|=|;|\(|\{)")
# calls a stretch may make besides PURE_CALLS: casts, constructors and the lowering's own helpers
_ALLOWED_CALLS = {"for", "if", "while", "switch", "sizeof", "alignas", "static_cast", "make_uint3", "std::size_t",
                  "float", "double", "int", "unsigned", "bool", "char", "short", "long", "uint",
                  "cudaopt::at_most", "cudaopt::at_least", "cudaopt::first_true", "cudaopt::lane_shfl",
                  "cudaopt::lane_shfl_up", "cudaopt::lane_shfl_down", "cudaopt::lane_shfl_xor"}
_THREAD_LOOP_VARS = {"tx", "ty", "tz", "tid", "cudaopt_w"}
_COSTLY = set(FLOAT_CALLS + DOUBLE_CALLS)


def block_invariant(ctx: Context, code: str) -> str | None:
    changed = False
    for k in reversed(C.kernels(code)):
        new = _kernel(ctx, k, k.body(code))
        if new is not None:
            code, changed = C.with_body(code, k, new), True
    return code if changed else None


def _kernel(ctx: Context, k: C.KernelText, body: str) -> str | None:
    launches = ctx.launches_of(k.name)
    params = C.split_params(k.params)
    if not launches or any(len(launch.args) != len(params) for launch in launches):
        return None
    pointers = [i for i, p in enumerate(params) if "*" in p]
    if not distinct_buffers(launches, pointers, {b.name for b in ctx.task.buffers}):
        return None
    nests = list(BLOCK_NEST.finditer(body))
    if len(nests) != 1:
        return None
    nest = nests[0]
    line_start = body.rfind("\n", 0, nest.start()) + 1
    pragma_start = body.rfind("\n", 0, line_start - 1) + 1
    pragma = body[pragma_start:line_start].strip()
    if pragma not in (REGION_FOR, PARALLEL_FOR):
        return None
    names = [C.param_name(p) or "" for p in params]
    deny = {nest["bx"], nest["by"], nest["bz"], "blockIdx"} | set(_HIDDEN_STATE.findall(body))
    deny |= {names[i] for i in pointers if not C.only_read(body, names[i])}
    deny |= {n for i, n in enumerate(names) if i not in pointers and n and C.assigned(body, n)}
    perthread = {m["pname"] or m["sname"]: m for m in PERTHREAD_DECL.finditer(body)}
    open_brace = nest.end() - 1
    close = C.matching_brace(body, open_brace)
    block = body[open_brace + 1:close]
    shared = {m["name"]: m["decl"] for m in SHARED_ARRAY_DECL.finditer(block)}
    statements = C.statements(block)
    if statements is None:
        return None
    runs = _runs(block, statements, deny, set(shared) | set(perthread))
    if not runs:
        return None
    decls, new_block, pos = [], [], 0
    for number, (start, end, outputs) in enumerate(runs):
        saved = [_saved_decl(name, number, shared, perthread) for name in outputs]
        done = f"cudaopt_inv_done_{number}"
        decls.append(f"bool {done} = false;  // tools.optimize: this worker ran the block-invariant work {number}")
        decls += saved
        indent = C.indent_at(block, start)
        run = block[start:end]
        by_thread = {name for name in outputs if name in perthread and perthread[name]["pname"]}
        keep = [_copy(f"cudaopt_inv{number}_{name}", name, name in by_thread) for name in outputs]
        restore = [_copy(name, f"cudaopt_inv{number}_{name}", name in by_thread) for name in outputs]
        text = (f"if (!{done}) {{  // tools.optimize: the same in every block (no block index, inputs only read): "
                f"once per worker\n{indent}    " + run.replace("\n", "\n    ") + "\n"
                + "".join(f"{indent}    {line}\n" for line in keep + [f"{done} = true;"])
                + f"{indent}}} else {{\n" + "".join(f"{indent}    {line}\n" for line in restore) + f"{indent}}}")
        new_block.append(block[pos:start] + text)
        pos = end
    block = "".join(new_block) + block[pos:]
    body = body[:open_brace + 1] + block + body[close:]
    return _with_worker_state(body, decls, pragma_start, line_start, open_brace, pragma == REGION_FOR)


def _runs(block: str, statements, deny: set[str], arrays: set[str]) -> list[tuple[int, int, list[str]]]:
    """Maximal stretches of qualifying compound statements: (start, end, arrays kept after them)."""
    runs, i = [], 0
    declared: set[str] = set()
    while i < len(statements):
        start = statements[i][0]
        # what the block ran before, less the stretches taken (their arrays hold the same in every block)
        before, pos = [], 0
        for s, e, _ in runs:
            before.append(block[pos:s])
            pos = e
        before = C.strip_comments(SHARED_ARRAY_DECL.sub("", "".join(before) + block[pos:start]))
        touched = {name for name in arrays if _array_written(name, before)}
        j = i
        while j < len(statements) and _qualifies(block, statements[j], deny | declared | touched):
            j += 1
        if j > i:
            end = statements[j - 1][1]
            text = C.strip_comments(block[start:end])
            outputs = sorted(_names(text) & arrays & _names(block[end:]))
            if outputs and _worth(text):
                runs.append((start, end, outputs))
            i = j
            continue
        s, e, compound = statements[i]
        if not compound and (m := _DECLARED.match(block[s:e].strip())) and m["name"] not in arrays:
            declared.add(m["name"])
        i += 1
    return runs


def _array_written(name: str, text: str) -> bool:
    """Is the array assigned an element in the text, or its address taken (then it may be)?"""
    for m in re.finditer(rf"(?<![\w.]){name}\b", text):
        if re.search(r"(?:\+\+|--)\s*$", text[:m.start()]):
            return True
        i = m.end()
        while (j := C.skip_space(text, i)) < len(text) and text[j] == "[":
            i = C.call_end(text, j) + 1
        if i == m.end() or re.match(r"\s*(?:(?:[-+*/%&|^]|<<|>>)?=(?!=)|\+\+|--)", text[i:]):
            return True
    return False


def _qualifies(block: str, statement, deny: set[str]) -> bool:
    s, e, compound = statement
    text = C.strip_comments(block[s:e])
    if not compound or _names(text) & deny:
        return False
    if any(call not in PURE_CALLS and call not in _ALLOWED_CALLS for call in _CALLED.findall(text)):
        return False
    exits = ("return", "goto") if re.match(r"\s*(?:#[^\n]*\n\s*)*(for|while)\b", text) else ("return", "goto", "break", "continue")
    return not any(re.search(rf"\b{word}\b", text) for word in exits)


def _worth(text: str) -> bool:
    """Some work beyond a pass over the threads: a loop of its own or a costly math call."""
    return any(var not in _THREAD_LOOP_VARS for var in _LOOP_VAR.findall(text)) or bool(_names(text) & _COSTLY)


def _names(text: str) -> set[str]:
    return set(_NAME.findall(C.strip_comments(text)))


def _saved_decl(name: str, number: int, shared: dict[str, str], perthread: dict[str, re.Match]) -> str:
    copy = f"cudaopt_inv{number}_{name}"
    if name in shared:
        decl = shared[name]
        return re.sub(rf"\b{name}\b", copy, decl, count=1) + ";"
    m = perthread[name]
    if m["pname"]:
        return f"cudacpu::PerThread<{m['ptype']}> {copy}(nthreads);"
    return f"{m['stack']} {copy}[{m['n']}];"


def _copy(dst: str, src: str, per_thread_object: bool) -> str:
    """Arrays (shared, or per-thread on the stack) in one copy; a cudacpu::PerThread thread by thread."""
    if not per_thread_object:
        return f"std::memcpy(&{dst}, &{src}, sizeof({src}));"
    return (f"for (std::size_t cudaopt_t = 0; cudaopt_t < nthreads; ++cudaopt_t) "
            f"std::memcpy(&{dst}[cudaopt_t], &{src}[cudaopt_t], sizeof({src}[cudaopt_t]));")


def _with_worker_state(body: str, decls: list[str], pragma_start: int, nest_line: int, nest_open: int,
                       in_region: bool) -> str:
    """The saved copies declared where each OpenMP thread has its own: in the parallel region,
    before its loop over blocks (a combined `parallel for` is split into the two). Offsets: the
    pragma's line, the block loops' first line and their opening brace (the edits lie after it)."""
    indent = re.match(r"[ \t]*", body[pragma_start:]).group()
    lines = "".join(f"{indent}{d}\n" for d in decls)
    if in_region:
        return body[:pragma_start] + lines + body[pragma_start:]
    close = C.matching_brace(body, nest_open)
    return (body[:pragma_start] + f"{indent}#pragma omp parallel\n{indent}{{\n" + lines + f"{indent}{REGION_FOR}\n"
            + body[nest_line:close + 1] + f"\n{indent}}}" + body[close + 1:])


BLOCK_INVARIANT = Transform("block_invariant", "work every block repeats identically (no block index, inputs only "
                            "read) done once per worker and copied", block_invariant)
