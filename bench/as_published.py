"""Our generated records rewritten in the layout of the published HPCTransEval files.

The published records come from an older TVM and say less than ours: no launches, no scratch
buffers, no dtypes or ranges; the C reference is a bare `default_function_kernel` with its outputs
first and its inputs called `ph`, `ph_1`, ...; the TVMScript function is `main`; the CUDA has no
preamble, its kernels are `default_function_kernel`, `default_function_kernel_1`, ... (numbered in
launch order, defined in another order), and every kernel names its parameters itself: the inputs
`ph`, `ph_1`, ... and the other buffers by their operator (`T_add`, `T_add_1`), numbered within the
kernel, so one name in two kernels may be two buffers. The names lists are absent, or give `ph`
for every input. As in the published files, the C reference takes its parameters in name order
(`T_add, ph, ph_1, ..., ph_10`) and, in about half the records, has `#pragma omp parallel for` on
the outer loops whose iterations write their own elements; about a quarter of the records list
(and declare in `main`) an input the computation does not take; a kernel that binds no threads
has no `__launch_bounds__`.

`as_published(record, rng)` makes such a record from one of ours, so that launch inference, the
converter and the lowering can be measured on records in the published layout whose answers we
know (scripts/check_published_layout.py). Text is rewritten by identifier (word-bounded names of
generated code), which is all this needs: it only makes test data.
"""

from __future__ import annotations

import random
import re

from .format import Record

FUNCTION = "default_function_kernel"
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\(\d+\)\s+)?(\w+)\s*\(([^)]*)\)\s*([;{])')
_INCLUDE = re.compile(r"^[ \t]*#include[^\n]*\n", re.M)
FILES = {"graph": "ComputationGraph", "block": "ModelBuildingBlock"}  # the rest: IndependentOperator


def file_of(category: str | None) -> str:
    return FILES.get(category or "", "IndependentOperator")


def _sub_names(text: str, renames: dict[str, str]) -> str:
    """`text` with every identifier of `renames` replaced at once (a permutation is safe)."""
    if not renames:
        return text
    pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, renames), key=len, reverse=True)) + r")(?![\w])")
    return pattern.sub(lambda m: renames[m[1]], text)


def _stem(name: str) -> str:
    return re.sub(r"_\d+$", "", name)


def _kernels(cuda: str) -> list[tuple[str, str, str]]:
    """(name, parameter text, definition text) of every kernel definition, in text order."""
    out = []
    for m in _KERNEL.finditer(cuda):
        if m[3] != "{":
            continue
        depth, i = 0, m.end() - 1
        while True:
            depth += {"{": 1, "}": -1}.get(cuda[i], 0)
            if depth == 0:
                break
            i += 1
        out.append((m[1], m[2], cuda[m.start():i + 1]))
    return out


def _natural(name: str) -> list:
    """Sort key of TVM's C parameter order: by name, numbers by value (`ph_9` before `ph_10`)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _matching(text: str, i: int, open_: str, close: str) -> int:
    """Index of the bracket closing the one at `i`."""
    depth = 0
    for j in range(i, len(text)):
        depth += (text[j] == open_) - (text[j] == close)
        if depth == 0:
            return j
    raise ValueError("unbalanced")


_FOR = re.compile(r"^(?P<indent>[ \t]*)for\s*\(\s*int(?:32|64)_t\s+(?P<var>\w+)\s*=", re.M)
_TYPE = r"(?:const\s+)?(?:float|double|u?int\d+_t|int|bool|char|signed char|half)"
_DECL = re.compile(r"^" + _TYPE + r"\s*\*?\s*(\w+)\s*(\[[^\]]*\])?$")


def _iterations_disjoint(body: str, var: str) -> bool:
    """Whether the iterations of a loop over `var` with this body write disjoint elements (as TVM
    marks its parallel loops): every element store's index depends on `var` through sums and
    products of loop variables alone (local definitions followed), and no scalar declared outside
    the loop is written."""
    text = re.sub(r"for\s*\(", "for(", body)
    while "for(" in text:  # drop loop headers (their `=` and `;`)
        i = text.index("for(") + 3
        text = text[:i - 3] + text[_matching(text, i, "(", ")") + 1:]
    local: dict[str, str] = {}
    arrays: set[str] = {m[1] for m in re.finditer(r"(?:^|[;{}])\s*" + _TYPE + r"\s+(\w+)\s*\[", text)}
    scalars = {m[1] for m in re.finditer(r"(?:^|[;{}])\s*" + _TYPE + r"\s+(\w+)\s*[;=]", text)}
    for statement in re.split(r"[;{}]", text):
        m = re.match(r"\s*(.*?)\s*(?<![<>=!+\-*/%])(\+|-|\*)?=(?!=)\s*(.*)$", statement, re.S)
        if not m:
            continue
        lhs, rhs = m[1], m[3]
        decl = _DECL.match(lhs)
        if decl:
            if decl[2] or "*" in lhs:  # an array or a pointer of the iteration's own
                arrays.add(decl[1])
            else:
                local[decl[1]] = rhs
            continue
        if re.fullmatch(r"\w+", lhs):
            if lhs not in local and lhs not in scalars:
                return False  # a scalar of the enclosing scope
            continue
        store = re.fullmatch(r"(\w+)\s*\[(.*)\]", lhs, re.S)
        if not store:
            return False
        if store[1] in arrays:
            continue
        index = store[2]
        for _ in range(8):  # follow local definitions
            expanded = re.sub(r"\b\w+\b", lambda w: f"({local[w[0]]})" if w[0] in local else w[0], index)
            if expanded == index:
                break
            index = expanded
        if re.search(r"[\[%/?<>]", index) or not re.search(rf"\b{re.escape(var)}\b", index):
            return False
    return True


def openmp_outer_loops(code: str, function: str = FUNCTION) -> str:
    """`code` with `#pragma omp parallel for` on each outermost loop of `function` whose iterations
    write disjoint elements, as TVM's C for the CPU has them in the published references."""
    m = re.search(rf"\bvoid\s+{re.escape(function)}\s*\([^)]*\)\s*\{{", code)
    if not m or "#pragma omp" in code:
        return code
    start, end = m.end() - 1, _matching(code, m.end() - 1, "{", "}")
    inserts = []
    for loop in _FOR.finditer(code, start, end):
        depth = code.count("{", start, loop.start()) - code.count("}", start, loop.start())
        if depth != 1:
            continue
        brace = code.find("{", loop.end())
        header_end = _matching(code, code.index("(", loop.start()), "(", ")")
        if brace < 0 or code[header_end + 1:brace].strip():
            continue
        if _iterations_disjoint(code[brace + 1:_matching(code, brace, "{", "}")], loop["var"]):
            inserts.append((loop.start(), f"{loop['indent']}#pragma omp parallel for\n"))
    for at, text in reversed(inserts):
        code = code[:at] + text + code[at:]
    return code


def _published_kernel_name(name: str, stem: str) -> str:
    rest = name[len(stem):]
    return FUNCTION + rest


def as_published(rec: Record, rng: random.Random, *, names: str = "stem") -> dict:
    """The published-layout record for `rec` (one of ours, with launches). `names`: "stem" names
    every kernel's parameters as TVM's older code generator did (by operator, numbered per kernel,
    inputs `ph`); "keep" keeps each buffer's own name (only `_ptr` dropped)."""
    inputs, outputs = list(rec.input_name), list(rec.output_name)
    ph = {n: "ph" if i == 0 else f"ph_{i}" for i, n in enumerate(inputs)}
    # C: bare, its parameters in name order, inputs renamed
    code = _INCLUDE.sub("", rec.c_code).lstrip()
    function = rec.c_function or rec.name
    code = _sub_names(code, {**ph, function: FUNCTION})
    m = re.search(rf"void\s+{FUNCTION}\s*\(([^)]*)\)", code)
    params = [p.strip() for p in m[1].split(",")]

    def pname(p: str) -> str:
        return re.findall(r"\w+", p)[-1]
    params.sort(key=lambda p: _natural(pname(p)))  # TVM's C takes its parameters by name
    params = [p.replace("__restrict__ ", "") for p in params]
    code = code[:m.start(1)] + ", ".join(params) + code[m.end(1):]
    if rng.random() < 0.5:  # the CPU schedule's parallel loops
        code = openmp_outer_loops(code)
    # TVMScript: `main`, inputs renamed
    ir = _sub_names(rec.ir_code, ph)
    ir = re.sub(r"(def\s+)\w+(\s*\()", r"\1main\2", ir, count=1)
    input_shape = list(rec.input_shape)
    listed_inputs = len(inputs)
    if inputs and rng.random() < 0.25:  # an input the computation does not take: in `main` and the lists only
        k = rng.randrange(len(inputs) + 1)
        before = ph[inputs[k]] if k < len(inputs) else outputs[0]
        unused, shape = f"ph_{len(inputs)}", rec.input_shape[rng.randrange(len(inputs))]
        at = re.search(rf"(?<![\w.]){re.escape(before)}\s*:\s*T\.Buffer", ir)
        if at:
            ir = ir[:at.start()] + f'{unused}: T.Buffer({tuple(shape)!r}, "float32"), ' + ir[at.start():]
            input_shape.insert(k, shape)
            listed_inputs += 1
    # CUDA: the kernel definitions alone, renamed and shuffled
    kernels = _kernels(rec.cuda_code)
    kernel_stem = rec.launches[0].kernel if rec.launches else kernels[0][0]
    out_kernels = []
    for kname, ptext, text in kernels:
        renames = {kname: _published_kernel_name(kname, kernel_stem)}
        counts: dict[str, int] = {}
        for p in [q.strip() for q in ptext.split(",") if q.strip()]:
            param = re.findall(r"\w+", p)[-1]
            buffer = param.removesuffix("_ptr")
            if names == "keep":
                renames[param] = ph.get(buffer, buffer)
                continue
            stem = "ph" if buffer in ph else _stem(buffer)
            n = counts.get(stem, 0)
            counts[stem] = n + 1
            renames[param] = stem if n == 0 else f"{stem}_{n}"
        text = _sub_names(text, renames)
        if "threadIdx" not in text:  # TVM bounds the threads of a kernel that binds them, only
            text = re.sub(r"__launch_bounds__\(\d+\)\s*", "", text, count=1)
        out_kernels.append(text)
    rng.shuffle(out_kernels)
    out = {
        "op_name": rec.op_name if rec.category not in FILES else (rec.name or rec.op_name),
        "c_code": code,
        "cuda_code": "\n\n".join(out_kernels) + "\n",
        "ir_code": ir,
        "op_args": rec.op_args,
        "input_shape": input_shape,
        "output_shape": rec.output_shape,
    }
    if rng.random() < 0.5:  # else no names; one name for many buffers where they are listed
        out["input_name"] = ["ph"] * listed_inputs
        out["output_name"] = [_stem(n) for n in outputs]
    return out
