"""The kernel task format of docs/formats.md as pydantic models.

`load_task(path)` resolves paths relative to the task file and raises TaskError with a
message naming the file and the field at fault.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

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
    # A .npy (relative to the task file) with this buffer's initial values, used for every
    # seed instead of generated ones: real data captured from a program's run.
    data: str | None = None
    # Elements past the shape that the original kernels store to (a published TVM kernel made
    # for a padded extent) or the reference reads: allocated after the buffer, neither compared
    # nor a violation; an input's repeat its first elements.
    padding: int = Field(default=0, ge=0)

    @field_validator("shape")
    @classmethod
    def _positive_extents(cls, shape: list[int]) -> list[int]:
        if any(n < 1 for n in shape):
            raise ValueError(f"shape {shape}: every extent must be at least 1")
        return shape

    @model_validator(mode="after")
    def _data_only_for_inputs(self) -> "Buffer":
        if self.data and self.role not in ("input", "inout"):
            raise ValueError(f"'data' gives initial values, so it needs role input or inout (not {self.role})")
        return self

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # exact: numpy's product wraps around past 2**63

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
    # optimizer transformations to try before the others: those that paid on a sibling (another
    # specialization of the same kernel template, in a repository's tuning)
    optimize_first: list[str] = []
    # Set by load_task: the directory relative paths resolve against, and the file for messages.
    base_dir: Path | None = Field(None, exclude=True)
    origin: str | None = Field(None, exclude=True)

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
        """The C signature every CPU candidate must define (docs/formats.md)."""
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
    if not isinstance(raw, dict):
        raise TaskError(f"{origin}: a task is a JSON object, got {type(raw).__name__}")
    try:
        task = Task.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise TaskError(f"{origin}: field '{_field_path(err['loc']) or '(root)'}': {_message(err)}") from None
    task.base_dir = base_dir.resolve() if base_dir else None
    task.origin = origin
    for field, rel in (("cuda", task.cuda), ("reference.path", task.reference.path if task.reference.kind in ("c", "golden") else None)):
        if rel and not task.path_of(rel).is_file():
            raise TaskError(f"{origin}: field '{field}': file not found: {rel}")
    _check_reference(task, origin)
    return task


def _message(err: dict) -> str:
    """pydantic's message, made specific for the mistakes people make in task files."""
    loc = err["loc"]
    if err["type"] == "literal_error" and loc and loc[-1] == "dtype":
        return f"unknown dtype {err['input']!r} (known: {', '.join(DTYPES)})"
    if err["type"] == "extra_forbidden":
        return f"unknown field {loc[-1]!r}"
    if err["type"] == "missing":
        return "required field is missing"
    if err["type"] == "value_error":  # our own validators' messages, without pydantic's prefix
        return err["msg"].removeprefix("Value error, ")
    if "input" in err and err["type"].startswith(("literal", "int", "float", "string", "bool", "list")):
        return f"{err['msg']} (got {err['input']!r})"
    return err["msg"]


def _check_reference(task: Task, origin: str) -> None:
    """The reference names a function that exists: a symbol in the C file, a def in the python module."""
    ref = task.reference
    known = {b.name for b in task.buffers} | {s.name for s in task.scalars}
    for i, arg in enumerate(ref.args or []):
        if arg not in known:
            raise TaskError(f"{origin}: field 'reference.args[{i}]': unknown buffer or scalar {arg!r}")
    if ref.kind == "c":
        if not ref.path or not ref.function:
            missing = "reference.path" if not ref.path else "reference.function"
            raise TaskError(f"{origin}: field '{missing}': a 'c' reference needs the file and the function name")
        text = task.path_of(ref.path).read_text(errors="replace")
        if not re.search(rf"\b{re.escape(ref.function)}\s*\(", text):
            raise TaskError(f"{origin}: field 'reference.function': function {ref.function!r} not found in {ref.path}")
    elif ref.kind == "python":
        _check_python_reference(task, origin)


def _check_python_reference(task: Task, origin: str) -> None:
    import ast

    ref = task.reference
    if ref.function and ":" in ref.function:
        module, _, function = ref.function.partition(":")
    elif ref.path and ref.function:
        module, function = Path(ref.path).with_suffix("").as_posix().replace("/", "."), ref.function
    else:
        raise TaskError(f"{origin}: field 'reference.function': a 'python' reference needs 'module:function' "
                        f"(got {ref.function!r})")
    if task.base_dir is None:
        return  # no directory to import from: checked when the reference runs
    rel = module.replace(".", "/")
    candidates = [task.path_of(rel + ".py"), task.path_of(rel + "/__init__.py")]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise TaskError(f"{origin}: field 'reference.function': module {module!r} not found in {task.base_dir} "
                        f"(looked for {rel}.py)")
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise TaskError(f"{path}:{exc.lineno}: syntax error in the python reference: {exc.msg}") from None
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    names |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    if function not in names:
        raise TaskError(f"{origin}: field 'reference.function': function {function!r} not found in {path.name}")


_POINTER_TYPES = {
    "float32": {"float"}, "float64": {"double"}, "float16": {"__half", "half"}, "bfloat16": {"__nv_bfloat16", "nv_bfloat16"},
    "int8": {"int8_t", "char", "signed char"}, "int16": {"int16_t", "short"}, "int32": {"int32_t", "int"},
    "int64": {"int64_t", "long long", "long"}, "uint8": {"uint8_t", "unsigned char", "char"},
    "uint16": {"uint16_t", "unsigned short"}, "uint32": {"uint32_t", "unsigned int", "unsigned"},
    "uint64": {"uint64_t", "unsigned long long", "unsigned long", "size_t"}, "bool": {"bool"},
}
_BASIC = set().union(*_POINTER_TYPES.values())


def _pointee(ctype: str) -> str | None:
    """'const float *' -> 'float'; None when the type is not a pointer."""
    text = " ".join(ctype.replace("__restrict__", "").replace("__restrict", "").replace("restrict", "").split())
    if not text.endswith("*") and not text.endswith("]"):
        return None
    base = re.sub(r"\[.*\]$", "", text).rstrip("* ").strip()
    return " ".join(w for w in base.split() if w not in ("const", "volatile"))


_GLOBAL_SIG = re.compile(
    r"__global__\s+(?:[\w:<>]+\s+)*?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(([^)]*)\)")


def _regex_kernel_params(source: str) -> dict[str, list[tuple[str, str]]]:
    """Plain `__global__ void name(T a, U* b)` signatures; templates and macros are left to libclang."""
    out: dict[str, list[tuple[str, str]]] = {}
    for m in _GLOBAL_SIG.finditer(source):
        params = []
        for raw in filter(None, (p.strip() for p in m[2].split(","))):
            pm = re.match(r"(.*?)(\w+)\s*(\[[^\]]*\])?$", raw)
            if not pm or not pm[1].strip():
                break
            params.append(((pm[1] + ("*" if pm[3] else "")).strip(), pm[2]))
        else:
            out[m[1]] = params
    return out


def _kernel_params(task: Task) -> dict[str, list[tuple[str, str]]]:
    """kernel name -> [(type, name)], from libclang's parse, with the spelling of a quick regex
    where that reads the signature. Raises TaskError for a file with syntax errors; a file that
    libclang cannot parse at all (a header it lacks) keeps what the regex found."""
    from tools.cuda import CudaParseError, parse_cuda
    from tools.cuda.frontend import CudaSyntaxError

    source = task.source()
    found: dict[str, list[tuple[str, str]]] = {}
    try:
        module = parse_cuda(source, str(task.source_path() or f"{task.name}.cu"))
        found = {k.name: [(p.type, p.name) for p in k.params] for k in module.kernels}
    except CudaSyntaxError as exc:
        raise TaskError(f"{task.origin or task.name}: field 'cuda': {exc}") from None
    except CudaParseError:
        pass
    return {**found, **_regex_kernel_params(source)}


def validate_task_deep(task: Task, *, memory_mb: int | None = None) -> None:
    """Checks against the CUDA source: it parses; every launch names a kernel of the file, passes as
    many arguments as it has parameters, buffers to pointer parameters of a matching element type
    and scalars to value parameters; with no launches, a buffer named like kernel parameters points
    to the type of one of them; and the buffers fit in `memory_mb` (the sandbox's limit). Raises
    TaskError naming the file and the field."""
    origin = task.origin or task.name
    if memory_mb is not None:
        _check_memory(task, origin, memory_mb)
    try:
        kernels = _kernel_params(task)
    except OSError as exc:
        raise TaskError(f"{origin}: field 'cuda': cannot read {task.cuda} ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise TaskError(f"{origin}: field 'cuda': {task.cuda} is not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    buffers = {b.name: b for b in task.buffers}
    if not task.launches:
        _check_by_name(task, origin, kernels)
        return
    for i, launch in enumerate(task.launches):
        where = f"{origin}: field 'launches[{i}]"
        if launch.kernel not in kernels:
            raise TaskError(f"{where}.kernel': no __global__ function {launch.kernel!r} in {task.cuda or 'cuda_code'} "
                            f"(kernels: {', '.join(sorted(kernels)) or 'none'})")
        params = kernels[launch.kernel]
        if len(params) != len(launch.args):
            raise TaskError(f"{where}.args': {len(launch.args)} arguments for {launch.kernel}, which has "
                            f"{len(params)} parameters ({', '.join(f'{t} {n}' for t, n in params)})")
        for j, (arg, (ptype, pname)) in enumerate(zip(launch.args, params)):
            pointee = _pointee(ptype)
            buf = buffers.get(arg) if isinstance(arg, str) else None
            if buf is not None:
                if pointee is None:
                    raise TaskError(f"{where}.args[{j}]': buffer {arg!r} passed to parameter '{ptype} {pname}', "
                                    "which is not a pointer")
                if _mismatched(buf, pointee):
                    raise TaskError(f"{where}.args[{j}]': buffer {arg!r} is {buf.dtype}, but parameter "
                                    f"'{ptype} {pname}' of kernel {launch.kernel!r} points to {pointee}")
            elif pointee is not None and not launch.template_args and not _offsets_a_buffer(arg, buffers):
                raise TaskError(f"{where}.args[{j}]': {arg!r} is not a buffer, but parameter '{ptype} {pname}' is a pointer")


def _offsets_a_buffer(arg: str | int | float, buffers: dict[str, Buffer]) -> bool:
    """An expression over a buffer (`a + 1`): a pointer into it."""
    return isinstance(arg, str) and any(word in buffers for word in re.findall(r"[A-Za-z_]\w*", arg))


def _mismatched(buf: Buffer, pointee: str) -> bool:
    """A pointer to a basic type other than the buffer's element type (void* and structs pass)."""
    return pointee in _BASIC and pointee not in _POINTER_TYPES[buf.dtype]


def _check_by_name(task: Task, origin: str, kernels: dict[str, list[tuple[str, str]]]) -> None:
    """With no launches given, they are inferred by parameter name: a buffer that every kernel
    parameter of its name would read as another element type cannot be right."""
    for i, buf in enumerate(task.buffers):
        takers = [(kernel, ptype) for kernel, params in kernels.items() for ptype, pname in params
                  if pname == buf.name and _pointee(ptype) is not None]
        if takers and all(_mismatched(buf, _pointee(ptype) or "") for _, ptype in takers):
            kernel, ptype = takers[0]
            raise TaskError(f"{origin}: field 'buffers[{i}].dtype': buffer {buf.name!r} is {buf.dtype}, but kernel "
                            f"{kernel!r} takes '{ptype} {buf.name}'")


def _check_memory(task: Task, origin: str, memory_mb: int) -> None:
    total = sum(b.nbytes for b in task.buffers)
    if total > memory_mb << 20:
        big = max(task.buffers, key=lambda b: b.nbytes)
        raise TaskError(f"{origin}: field 'buffers': the buffers take {_bytes(total)} (buffer {big.name!r}: "
                        f"shape {big.shape}, {big.size:,} elements), more than the sandbox's memory limit of "
                        f"{memory_mb} MB (limits.memory_mb)")


def _bytes(n: float) -> str:
    units = ["B", "KB", "MB", "GB", "TB", "PB"]
    i = 0
    while n >= 1024 and i < len(units) - 1:
        n, i = n / 1024, i + 1
    return f"{n:.3g} {units[i]}"
