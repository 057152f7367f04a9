"""Benchmark records -> kernel task files (docs/formats.md task format).

Each record becomes `<name>.json` (the task), `<name>.cu` (the CUDA) and `<name>_ref.c`
(the C reference) in the output directory. Buffers are the record's inputs and outputs,
then the scratch buffers its kernels share. The reference's argument order is taken by
name: from the C prototype of the reference function where it can be parsed, else from
the TVMScript signature in ir_code, else inputs then outputs.

Published HPCTransEval records have no launches: the task then has none either, and the
planner infers them. Their buffers are rebuilt from the signatures (`published.repair`), their
C references repaired (`csource.repair_reference`), and what was changed is said in the task's
description. `convert_file` converts every record it can: one that cannot become a task is
returned as an `InvalidRecord` with the reason, and the rest go on.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from dataclasses import dataclass

from .csource import repair_reference
from .format import Record, load_records
from .published import PublishedFormatError, category_of, file_kind, params_by_use, rename_params, repair, safe_name

_C_DTYPES = {
    "float": "float32", "double": "float64", "int": "int32", "int32_t": "int32", "int64_t": "int64",
    "int8_t": "int8", "uint8_t": "uint8", "int16_t": "int16", "bool": "bool", "signed char": "int8",
}
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


class ConvertError(Exception):
    """A record that cannot become a task; the message names the record."""


@dataclass(frozen=True)
class InvalidRecord:
    """A record of a benchmark file that could not become a task, and why."""

    name: str
    category: str | None
    reason: str


def c_prototype(code: str, function: str | None = None) -> tuple[str, list[tuple[str, str]]] | None:
    """(function name, [(param name, C element type)]) of the reference's entry function."""
    pattern = r"(?:^|\n)\s*(?:extern\s+\"C\"\s+)?(?:static\s+)?(?:void|int32_t|int)\s+(\w+)\s*\(([^)]*)\)\s*\{"
    found = [(m.group(1), m.group(2)) for m in re.finditer(pattern, code)]
    if function:
        found = [f for f in found if f[0] == function] or found
    if not found:
        return None
    name, raw = found[-1] if not function else found[0]
    params = []
    for part in raw.split(","):
        part = part.replace("__restrict__", "").replace("restrict", "").replace("const ", "").strip()
        m = re.match(r"(.+?)\s*\*\s*(\w+)$", part)
        if m:
            params.append((m.group(2), m.group(1).strip()))
        elif part and part != "void":
            words = part.split()
            params.append((words[-1], " ".join(words[:-1])))
    return name, params


def ir_signature(ir_code: str) -> list[str]:
    """Parameter names of the first prim_func in a TVMScript text."""
    m = re.search(r"def \w+\((.*?)\)(?:\s*->[^:]*)?:\n", ir_code, re.S)
    if not m:
        return []
    return re.findall(r"(\w+)\s*:\s*T\.(?:Buffer|handle)", m.group(1))


def _order(rec: Record, proto: list[tuple[str, str]] | None) -> list[str]:
    names = [safe_name(n) for n in (*rec.input_name, *rec.output_name)]
    ir_names = [safe_name(n) for n in ir_signature(rec.ir_code)]
    for candidate in ([p for p, _ in proto] if proto else [], ir_names):
        if candidate and set(names) <= set(candidate):
            return [n for n in candidate if n in names]
    return names


def to_task(rec: Record, out_dir: Path, index: int = 0, kind: str = "operator") -> Path:
    name = rec.task_name(index)
    out_dir.mkdir(parents=True, exist_ok=True)
    code, notes = repair_reference(rec.c_code)
    proto = c_prototype(code, rec.c_function)
    if proto is None:
        raise ConvertError(f"{name}: no function definition found in c_code")
    function, params = proto
    if rec.launches is None and rec.ir_code.strip():
        renames = params_by_use(code, function, params, rec.ir_code)
        if renames:
            code = rename_params(code, function, renames)
            params = [(renames.get(n, n), t) for n, t in params]
            notes.append("C parameters renamed to the TVMScript buffers they access (by first use; by name "
                         "they would run past their buffers): " + ", ".join(f"{c}->{i}" for c, i in renames.items()))
    try:
        rec, repaired = repair(rec, params, kind)
    except PublishedFormatError as exc:
        raise ConvertError(f"{name}: {exc}") from None
    notes = repaired + notes
    if len(rec.input_name) != len(rec.input_shape) or len(rec.output_name) != len(rec.output_shape):
        raise ConvertError(f"{name}: input/output names and shapes differ in number")
    ctypes = dict(params)
    dtypes = dict(zip(rec.input_name, rec.input_dtype or [])) | dict(zip(rec.output_name, rec.output_dtype or []))
    ranges = dict(zip(rec.input_name, rec.input_range or []))
    buffers = []
    for role, names, shapes in (("input", rec.input_name, rec.input_shape), ("output", rec.output_name, rec.output_shape)):
        for bname, shape in zip(names, shapes):
            dtype = dtypes.get(bname) or _C_DTYPES.get(ctypes.get(safe_name(bname), "float"), "float32")
            buf = {"name": safe_name(bname), "dtype": dtype, "shape": list(shape) or [1], "role": role}
            if role == "input":
                buf.update(_input_gen(dtype, ranges.get(bname)))
            buffers.append(buf)
    if rec.launches is None:
        notes += _pad_inputs_read_past(code, function, [n for n, _ in params], buffers)
    for s in rec.scratch:
        buffers.append({"name": s.name, "dtype": s.dtype, "shape": s.shape, "role": "scratch"})
    (out_dir / f"{name}.cu").write_text(rec.cuda_code)
    (out_dir / f"{name}_ref.c").write_text(_extern_c(code, function))
    task = {
        "name": name,
        "cuda": f"{name}.cu",
        "entry": name,
        "category": rec.category,
        "description": f"{rec.op_name} {json.dumps(rec.op_args, sort_keys=True)}"[:500],
        "buffers": buffers,
        "reference": {"kind": "c", "path": f"{name}_ref.c", "function": function, "args": _order(rec, params)},
        "inputs": {"seed": 42, "distribution": "uniform", "low": -1.0, "high": 1.0},
        "tolerance": TOLERANCE,
    }
    if rec.launches:
        task["launches"] = [{"kernel": l.kernel, "grid": l.grid, "block": l.block, "shared_bytes": l.shared_bytes,
                             "args": [safe_name(a) for a in l.args]} for l in rec.launches]
    if notes:
        task["description"] += " | repaired: " + "; ".join(notes)
    path = out_dir / f"{name}.json"
    path.write_text(json.dumps(task, indent=1) + "\n")
    return path


def _pad_inputs_read_past(code: str, function: str, params: list[str], buffers: list[dict]) -> list[str]:
    """Pads each input that the C reference reads past (a published block's 1x1 convolution reads
    128 channels of a 64-channel weight): on a GPU or a CPU those reads see whatever memory
    follows, so the task makes them defined, the same elements for the reference and the
    candidate (the harness repeats the buffer's first elements there). Notes what was padded."""
    from tools.cuda.launch_inference import c_access_extents

    extents = c_access_extents(code, function, params)
    notes = []
    for buf in buffers:
        size = math.prod(buf["shape"])
        if buf["role"] == "input" and buf["name"] in extents and extents[buf["name"]][1] > size:
            buf["padding"] = extents[buf["name"]][1] - size
            notes.append(f"input {buf['name']} padded by {buf['padding']} elements: the C reference reads "
                         f"{extents[buf['name']][1]} of its {size} (the padding repeats its first elements)")
    return notes


def _input_gen(dtype: str, bounds) -> dict:
    if dtype.startswith(("int", "uint")):
        low, high = bounds or (0, 8)
        # records keep numpy's exclusive high; the task format's randint includes its high
        return {"inputs": {"distribution": "randint", "low": float(low), "high": float(high) - 1}}
    if bounds:
        return {"inputs": {"distribution": "uniform", "low": float(bounds[0]), "high": float(bounds[1])}}
    return {}


def _extern_c(code: str, function: str) -> str:
    """Give the entry function C linkage whether the file is compiled as C or C++."""
    if 'extern "C"' in code:
        return code
    guard = '#ifdef __cplusplus\nextern "C"\n#endif\n'
    return re.sub(rf"(^|\n)((?:static\s+)?(?:void|int32_t|int)\s+{re.escape(function)}\s*\()", rf"\1{guard}\2", code, count=1)


def convert_file(path: Path, out_dir: Path, *, limit: int | None = None) -> list[Path]:
    """Every record's task file; raises ConvertError at the first record that cannot be one."""
    paths, invalid = convert_records(path, out_dir, limit=limit)
    if invalid:
        raise ConvertError(f"{invalid[0].name}: {invalid[0].reason}")
    return paths


def convert_records(path: Path, out_dir: Path, *, limit: int | None = None) -> tuple[list[Path], list[InvalidRecord]]:
    """Task files for the records that can be tasks, and the others with the reason."""
    records = load_records(path)
    kind = file_kind(Path(path).stem)
    paths: list[Path] = []
    invalid: list[InvalidRecord] = []
    for i, rec in enumerate(records[:limit] if limit else records):
        try:
            paths.append(to_task(rec, out_dir, i, kind))
        except ConvertError as exc:
            invalid.append(InvalidRecord(rec.task_name(i), rec.category or category_of(rec, kind),
                                         str(exc).removeprefix(f"{rec.task_name(i)}: ")))
    return paths, invalid
