"""Our generated records rewritten in the layout of the published HPCTransEval files.

The published records come from an older TVM and say less than ours: no launches, no scratch
buffers, no dtypes or ranges; the C reference is a bare `default_function_kernel` with its outputs
first and its inputs called `ph`, `ph_1`, ...; the TVMScript function is `main`; the CUDA has no
preamble, its kernels are `default_function_kernel`, `default_function_kernel_1`, ... (numbered in
launch order, defined in another order), and every kernel names its parameters itself: the inputs
`ph`, `ph_1`, ... and the other buffers by their operator (`T_add`, `T_add_1`), numbered within the
kernel, so one name in two kernels may be two buffers. The names lists are absent, or give `ph`
for every input.

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


def _published_kernel_name(name: str, stem: str) -> str:
    rest = name[len(stem):]
    return FUNCTION + rest


def as_published(rec: Record, rng: random.Random, *, names: str = "stem") -> dict:
    """The published-layout record for `rec` (one of ours, with launches). `names`: "stem" names
    every kernel's parameters as TVM's older code generator did (by operator, numbered per kernel,
    inputs `ph`); "keep" keeps each buffer's own name (only `_ptr` dropped)."""
    inputs, outputs = list(rec.input_name), list(rec.output_name)
    ph = {n: "ph" if i == 0 else f"ph_{i}" for i, n in enumerate(inputs)}
    # C: bare, outputs first, inputs renamed
    code = _INCLUDE.sub("", rec.c_code).lstrip()
    function = rec.c_function or rec.name
    code = _sub_names(code, {**ph, function: FUNCTION})
    m = re.search(rf"void\s+{FUNCTION}\s*\(([^)]*)\)", code)
    params = [p.strip() for p in m[1].split(",")]
    order = [*outputs, *[ph[n] for n in inputs]]

    def pname(p: str) -> str:
        return re.findall(r"\w+", p)[-1]
    params.sort(key=lambda p: order.index(pname(p)) if pname(p) in order else len(order))
    params = [p.replace("__restrict__ ", "") for p in params]
    code = code[:m.start(1)] + ", ".join(params) + code[m.end(1):]
    # TVMScript: `main`, inputs renamed
    ir = _sub_names(rec.ir_code, ph)
    ir = re.sub(r"(def\s+)\w+(\s*\()", r"\1main\2", ir, count=1)
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
        out_kernels.append(_sub_names(text, renames))
    rng.shuffle(out_kernels)
    out = {
        "op_name": rec.op_name if rec.category not in FILES else (rec.name or rec.op_name),
        "c_code": code,
        "cuda_code": "\n\n".join(out_kernels) + "\n",
        "ir_code": ir,
        "op_args": rec.op_args,
        "input_shape": rec.input_shape,
        "output_shape": rec.output_shape,
    }
    if rng.random() < 0.5:
        out["input_name"] = ["ph"] * len(inputs)
        out["output_name"] = [_stem(n) for n in outputs]
    return out
