"""The kernel task format of DESIGN.md as pydantic models.

`load_task(path)` resolves paths relative to the task file and raises TaskError with a
message naming the file and the field at fault.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

DTYPES: dict[str, str] = {
    "float32": "float", "float64": "double", "float16": "__half", "bfloat16": "__nv_bfloat16",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t", "bool": "bool",
}
Dtype = Literal[
    "float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bool",
]


def numpy_dtype(dtype: str) -> np.dtype:
    """numpy storage type (bfloat16 is stored as its raw uint16 bits)."""
    return np.dtype("uint16") if dtype == "bfloat16" else np.dtype(dtype)


def c_type(dtype: str) -> str:
    return DTYPES[dtype]


def is_float(dtype: str) -> bool:
    return dtype in ("float32", "float64", "float16", "bfloat16")


class TaskError(Exception):
    """A task file that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputGen(_Strict):
    seed: int = 42
    distribution: Literal["uniform", "normal", "randint", "ones", "zeros", "special", "arange"] = "uniform"
    low: float = -1.0
    high: float = 1.0
    denormals: bool = False


class BufferGen(_Strict):
    """Per-buffer overrides of the task's input settings."""

    distribution: Literal["uniform", "normal", "randint", "ones", "zeros", "special", "arange"] | None = None
    low: float | None = None
    high: float | None = None
    denormals: bool | None = None


class Buffer(_Strict):
    name: str
    dtype: Dtype
    shape: list[int] = Field(min_length=1)
    role: Literal["input", "output", "inout", "scratch"]
    init: Literal["poison", "zeros"] | None = None
    inputs: BufferGen | None = None

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * numpy_dtype(self.dtype).itemsize


class Scalar(_Strict):
    name: str
    dtype: Dtype
    value: float | int | bool


class Launch(_Strict):
    kernel: str
    grid: list[int] = Field(min_length=1, max_length=3)
    block: list[int] = Field(min_length=1, max_length=3)
    shared_bytes: int = 0
    template_args: list[str] = []
    args: list[str | int | float]

    def dims(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        pad = lambda v: tuple((list(v) + [1, 1, 1])[:3])  # noqa: E731
        return pad(self.grid), pad(self.block)  # type: ignore[return-value]


class Reference(_Strict):
    kind: Literal["c", "python", "golden", "cuda", "lowered"]
    path: str | None = None
    function: str | None = None
    args: list[str] | None = None


class Tolerance(_Strict):
    rtol: float = 1e-5
    atol: float = 1e-6


class Task(_Strict):
    name: str
    cuda: str | None = None
    cuda_code: str | None = None
    entry: str | None = None
    buffers: list[Buffer]
    scalars: list[Scalar] = []
    launches: list[Launch] | None = None
    reference: Reference
    inputs: InputGen = InputGen()
    tolerance: Tolerance = Tolerance()
    category: str | None = None
    description: str | None = None
    # Set by load_task: the directory relative paths resolve against.
    base_dir: Path | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _check(self) -> "Task":
        if not self.cuda and not self.cuda_code:
            raise ValueError("one of 'cuda' (a file) or 'cuda_code' (inline source) is required")
        names = [b.name for b in self.buffers] + [s.name for s in self.scalars]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"duplicate buffer/scalar names: {sorted(dup)}")
        known = set(names)
        for i, launch in enumerate(self.launches or []):
            for arg in launch.args:
                if isinstance(arg, str) and arg not in known and not _is_expr(arg, known):
                    raise ValueError(f"launches[{i}].args: unknown name {arg!r}")
        return self

    @property
    def entry_name(self) -> str:
        return self.entry or self.name

    def source(self) -> str:
        if self.cuda_code is not None:
            return self.cuda_code
        return self.path_of(self.cuda).read_text()  # type: ignore[arg-type]

    def source_path(self) -> Path | None:
        return self.path_of(self.cuda) if self.cuda else None

    def path_of(self, rel: str) -> Path:
        base = self.base_dir or Path(".")
        return (base / rel).resolve()

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)

    def entry_signature(self) -> str:
        """The C signature every CPU candidate must define (DESIGN.md)."""
        params = [f"{c_type(b.dtype)}* {b.name}" for b in self.buffers]
        params += [f"{c_type(s.dtype)} {s.name}" for s in self.scalars]
        return f'extern "C" void {self.entry_name}({", ".join(params)})'


def _is_expr(arg: str, known: set[str]) -> bool:
    """Launch args may be simple expressions over scalars (e.g. 'n/2')."""
    import re

    words = set(re.findall(r"[A-Za-z_]\w*", arg))
    return bool(words) and words <= known and not arg.isidentifier()


def _field_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load_task(path: Path | str) -> Task:
    path = Path(path)
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        raise TaskError(f"{path}: no such task file") from None
    except OSError as exc:
        raise TaskError(f"{path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    return parse_task(raw, base_dir=path.parent, origin=str(path))


def parse_task(raw: dict, *, base_dir: Path | None = None, origin: str = "<task>") -> Task:
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise TaskError(f"{origin}: field '{_field_path(err['loc']) or '(root)'}': {err['msg']}") from None
    task.base_dir = base_dir.resolve() if base_dir else None
    for field, rel in (("cuda", task.cuda), ("reference.path", task.reference.path if task.reference.kind in ("c", "golden") else None)):
        if rel and not task.path_of(rel).is_file():
            raise TaskError(f"{origin}: field '{field}': file not found: {rel}")
    return task
