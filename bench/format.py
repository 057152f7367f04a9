"""The HPCTransEval record format, with our additions, and its loader.

A benchmark file is a JSON list of records. The published HPCTransEval fields are
op_name, op_args, input_shape, output_shape, input_name, output_name, cuda_code,
c_code, ir_code. We add: name, category, input_dtype/output_dtype, input_range,
launches (kernel, grid, block, shared_bytes, args, in launch order), scratch (global
intermediates the kernels share), c_function and check (seed and output statistics of
the verified reference). Records from the published benchmark load with the additions
left empty.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class BenchFormatError(Exception):
    """A benchmark file that cannot be read; the message names the file and the record."""


class LaunchRecord(BaseModel):
    kernel: str
    grid: list[int]
    block: list[int]
    shared_bytes: int = 0
    args: list[str]


class ScratchRecord(BaseModel):
    name: str
    dtype: str = "float32"
    shape: list[int]


class OutputStats(BaseModel):
    sum: float
    abs_sum: float
    head: list[float]


class CheckRecord(BaseModel):
    seed: int
    outputs: list[OutputStats]
    max_abs_err: float = 0.0  # C reference vs TVM's LLVM build, at generation time


class Record(BaseModel):
    model_config = ConfigDict(extra="allow")

    op_name: str
    op_args: Any = None
    input_shape: list[list[int]] = []
    output_shape: list[list[int]] = []
    input_name: list[str] = []
    output_name: list[str] = []
    cuda_code: str
    c_code: str
    ir_code: str = ""
    # additions
    name: str | None = None
    category: str | None = None
    input_dtype: list[str] | None = None
    output_dtype: list[str] | None = None
    input_range: list[list[float] | None] | None = None
    launches: list[LaunchRecord] | None = None
    scratch: list[ScratchRecord] = Field(default_factory=list)
    c_function: str | None = None
    check: CheckRecord | None = None

    def task_name(self, index: int = 0) -> str:
        raw = self.name or f"{self.op_name}_{index}"
        return re.sub(r"\W", "_", raw)


def load_records(path: Path | str) -> list[Record]:
    """Read a benchmark JSON file (a list of records, or {"records": [...]}, or JSON Lines)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise BenchFormatError(f"{path}: cannot read ({exc.strerror})") from None
    raw = _parse(text, path)
    if isinstance(raw, dict):
        raw = raw.get("records", raw.get("data"))
    if not isinstance(raw, list):
        raise BenchFormatError(f"{path}: expected a list of records")
    records = []
    for i, item in enumerate(raw):
        if isinstance(item, dict):
            item = _normalize_published(item)
        try:
            records.append(Record.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise BenchFormatError(f"{path}: record {i}: field '{field}': {err['msg']}") from None
    return records


def _parse(text: str, path: Path):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            return [json.loads(ln) for ln in lines]
        except json.JSONDecodeError:
            raise BenchFormatError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None


def _normalize_published(item: dict) -> dict:
    """The published records store one shape/name as a scalar in places; make them lists."""
    item = dict(item)
    for key in ("input_name", "output_name"):
        if isinstance(item.get(key), str):
            item[key] = [item[key]]
    for key in ("input_shape", "output_shape"):
        value = item.get(key)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                value = [int(v) for v in re.findall(r"\d+", value)]
        if isinstance(value, list) and value and all(isinstance(v, int) for v in value):
            value = [value]
        if value is not None:
            item[key] = value
    return item


def save_records(records: list[Record], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = [r.model_dump(exclude_none=True) for r in records]
    path.write_text(json.dumps(data, indent=1) + "\n")
