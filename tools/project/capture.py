"""Per-kernel tuning of a port with real data.

1. `instrument` routes every lowered launch through `cudacpu_launch::cudacpu_kernel_launch`
   (cuda_cpu_launch.h).
2. Running the port with CUDACPU_CAPTURE_DIR set records the first launch of each kernel
   specialization (configuration, scalars, and every pointer argument's allocation before the
   launch, and whether the launch changed it), and the launches and seconds of every
   specialization (`read_launch_times`).
3. `capture_to_task` turns a capture into a kernel task whose inputs are the captured data
   and whose reference is the faithful lowering.
4. `tuned_dispatch_source` puts the best correct version back: it runs only for launches with
   the captured configuration, pointer arguments in distinct allocations (as captured) and,
   unless the version is exact for any argument values (the optimizer's transformations that
   are exact by construction), the captured scalar values; every other launch keeps the
   faithful lowering, so a tuned kernel can never be used where it was not verified.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tools.build import KERNEL_FMA_BEGIN, KERNEL_FMA_END
from tools.spec import c_type, numpy_dtype

from .discover import Project

HEADER = Path(__file__).with_name("cuda_cpu_launch.h")
_CALL = re.compile(r"((?:\w+::)*cudacpu_kernels::(\w+))\s*(?=[<(])")


def _template_args(text: str, start: int) -> tuple[str, int]:
    """The balanced `<...>` at text[start] (if any) and the index after it."""
    if start >= len(text) or text[start] != "<":
        return "", start
    depth = 0
    for i in range(start, len(text)):
        # not the `->` of an argument spelled as `decltype(p->n)` (frontend._dependent_template_arguments)
        depth += {"<": 1, ">": -1 if text[i - 1] != "-" else 0}.get(text[i], 0)
        if depth == 0:
            return text[start + 1:i], i + 1
    return "", start


def _in_macro(text: str, offset: int) -> bool:
    """Whether `offset` lies in a preprocessor directive (its lines joined by trailing backslashes)."""
    start = text.rfind("\n", 0, offset) + 1
    while start > 1 and text[start - 2] == "\\":  # the line before ends in a backslash: the same directive
        start = text.rfind("\n", 0, start - 1) + 1
    return text[start:offset].lstrip().startswith("#")


def instrument(cpp: str) -> tuple[str, list[str]]:
    """Route the lowered kernel launches of a translated file through cudacpu_launch::cudacpu_kernel_launch.

    Returns the new text and the kernels whose launches were routed. Definitions inside
    `namespace cudacpu_kernels` are not qualified calls, so only host call sites match. The
    helpers' names start with cudacpu_: a launch in a macro's body is rewritten in place, and a
    name there that is also a parameter of the macro (`kernel_name`, `launch`) would be replaced
    by the macro's argument.
    """
    out, pos, kernels = [], 0, []
    for m in _CALL.finditer(cpp):
        if m.start() < pos:
            continue
        targs, after = _template_args(cpp, m.end())
        rest = cpp[after:]
        if not re.match(r"\s*\(\s*(?:dim3|cudacpu_dim3)\(", rest):  # a launch, not a mention
            continue
        paren = after + rest.index("(")
        qualified = m[1] + (f"<{targs}>" if targs else "")
        spelled = f"cudacpu_launch::cudacpu_template_arguments<&{qualified}>()" if targs else '""'
        # In a macro's body the name may be the macro's parameter: the expansion names the kernel.
        name = f"cudacpu_launch::cudacpu_kernel_name<&{qualified}>()" if _in_macro(cpp, m.start()) else f'"{m[2]}"'
        out.append(cpp[pos:m.start()])
        out.append(f"cudacpu_launch::cudacpu_kernel_launch({name}, {spelled}, &{qualified}, ")
        pos = paren + 1
        kernels.append(m[2])
    if not kernels:
        return cpp, []
    out.append(cpp[pos:])
    return '#include "cuda_cpu_launch.h"\n' + "".join(out), kernels


@dataclass
class CapturedArg:
    kind: str  # pointer, scalar, other
    dtype: str = ""
    value: float | int | None = None
    known: bool = True
    bytes: int = 0
    allocation: str = ""
    before: Path | None = None  # the contents at the launch
    changed: bool = False  # whether the launch changed them
    too_large: bool = False  # not written: past the capture's byte budget
    stateless: bool = False  # an empty struct (a functor): a placeholder byte, made anew by the task


@dataclass
class Capture:
    kernel: str
    template_args: str
    grid: list[int]
    block: list[int]
    shared_bytes: int
    args: list[CapturedArg] = field(default_factory=list)
    index: int = 0  # which of the kernel's specializations, in the order they were first launched

    @property
    def label(self) -> str:
        """A name for this specialization's task and tuned version: the kernel's, with the index
        of a further specialization (k<float> and k<__half> are tuned apart)."""
        return self.kernel if self.index == 0 else f"{self.kernel}__s{self.index}"

    def problem(self) -> str | None:
        """Why this launch cannot become a kernel task, or None."""
        for i, a in enumerate(self.args):
            if a.kind == "other":
                return f"argument {i} is a struct passed by value"
            if a.kind == "pointer" and a.too_large:
                return (f"argument {i} points to {a.bytes / 2**20:.0f} MiB, more than the capture may write "
                        "(CUDACPU_CAPTURE_BYTES)")
            if a.kind == "pointer" and not a.known:
                return f"argument {i} points outside any cudaMalloc allocation"
            if a.kind == "pointer" and not a.dtype:
                return f"argument {i} points to what a capture cannot record (pointers, or structs not trivially copyable)"
        allocations = [a.allocation for a in self.args if a.kind == "pointer"]
        if not allocations:
            return "it takes no buffer: a tuned version would have no results to be checked on"
        if len(set(allocations)) != len(allocations):
            return "two pointer arguments share one allocation"
        return None


def read_captures(directory: Path) -> list[Capture]:
    captures = []
    for meta in sorted(directory.glob("*.json")):
        data = json.loads(meta.read_text())
        prefix = meta.with_suffix("")
        args = []
        for i, a in enumerate(data["args"]):
            arg = CapturedArg(a["kind"], a.get("dtype", ""), a.get("value"), a.get("known", True), a.get("bytes", 0),
                              a.get("allocation", ""), too_large=a.get("too_large", False),
                              stateless=a.get("stateless", False))
            if arg.kind == "pointer" and arg.known:
                arg.before = prefix.with_name(f"{prefix.name}.arg{i}.bin")
                arg.changed = i in data["changed"]
            args.append(arg)
        captures.append(Capture(data["kernel"], data["template_args"], data["grid"], data["block"],
                                data["shared_bytes"], args, data.get("index", 0)))
    return captures


LAUNCH_TIMES = "launch_times.tsv"


def read_launch_times(directory: Path) -> dict[tuple[str, str], tuple[int, float]]:
    """(kernel, template arguments) -> (launches, seconds in them), summed over the processes of
    the captured run; empty where no process finished normally."""
    path = directory / LAUNCH_TIMES
    return parse_launch_times(path.read_text()) if path.is_file() else {}


def parse_launch_times(text: str) -> dict[tuple[str, str], tuple[int, float]]:
    totals: dict[tuple[str, str], tuple[int, float]] = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) != 4:
            continue
        launches, seconds = totals.get((fields[0], fields[1]), (0, 0.0))
        totals[(fields[0], fields[1])] = (launches + int(fields[2]), seconds + float(fields[3]))
    return totals


def launched_kernels(launch_times: str) -> set[str]:
    """The kernels a run launched at all, from its launch_times.tsv."""
    return {kernel.rpartition("::")[2] for kernel, _ in parse_launch_times(launch_times)}


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + ([cur.strip()] if cur.strip() else [])


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def inline_local_includes(path: Path, root: Path, seen: set[Path] | None = None,
                          include_dirs: tuple[Path, ...] = ()) -> str:
    """The file's text with the project's own `#include "..."` headers inlined (each once), so a
    kernel task's CUDA source stands alone; system headers stay as includes."""
    seen = set() if seen is None else seen
    seen.add(path.resolve())
    return _inlined(path.read_text(errors="replace"), (path.parent, *include_dirs, root), root, seen, include_dirs)


def _inlined(text: str, bases: tuple[Path, ...], root: Path, seen: set[Path], include_dirs: tuple[Path, ...]) -> str:
    def expand(m: re.Match) -> str:
        for base in bases:
            header = (base / m[1]).resolve()
            if header.is_file():
                if header in seen:
                    return f"// {m[0].strip()} (already inlined)"
                return f"// ---- {m[1]} ----\n" + inline_local_includes(header, root, seen, include_dirs)
        return m[0]

    text = re.sub(r"^\s*#\s*pragma\s+once\s*$", "", text, flags=re.M)
    return _LOCAL_INCLUDE.sub(expand, text)


def standalone_source(project: Project, path: str) -> str:
    """A project file as its build compiles it, standing alone: the build's macros (-D, -U) as
    #defines, what its includer has before including it (Project.prelude), and the project's
    headers inlined (found as the build finds them, -I included)."""
    options = project.preprocessor_options(path)
    macros, dirs = [], []
    for flag, value in zip(options, [*options[1:], ""]):
        if flag.startswith("-D") and len(flag) > 2:
            name, _, definition = flag[2:].partition("=")
            macros.append(f"#define {name} {definition or 1}")
        elif flag.startswith("-U") and len(flag) > 2:
            macros.append(f"#undef {flag[2:]}")
        elif flag in ("-I", "-isystem", "-iquote", "-idirafter"):
            dirs.append(Path(value))
    seen: set[Path] = {(project.root / path).resolve()}
    prelude = project.prelude(path)
    parts = ["\n".join(macros)] if macros else []
    if prelude is not None:
        parts.append(_inlined(prelude[0], (*map(Path, prelude[1]), *dirs, project.root), project.root, seen, tuple(dirs)))
    seen.discard((project.root / path).resolve())
    parts.append(inline_local_includes(project.root / path, project.root, seen, tuple(dirs)))
    return "\n".join(parts)


def capture_to_task(capture: Capture, cuda_source: str, param_names: list[str], task_dir: Path) -> Path:
    """Write a kernel task (task.json, data .npy files, the CUDA source) for one capture."""
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "kernel.cu").write_text(cuda_source)
    names = param_names if len(param_names) == len(capture.args) else [f"arg{i}" for i in range(len(capture.args))]
    names = [n if n.isidentifier() else f"arg{i}" for i, n in enumerate(names)]
    buffers, scalars, has_float = [], [], False
    for name, arg in zip(names, capture.args):
        if arg.kind == "pointer":
            dtype = numpy_dtype(arg.dtype)
            before = np.fromfile(arg.before, dtype=dtype)
            np.save(task_dir / f"{name}.npy", before)
            has_float |= arg.dtype.startswith("float")
            buffers.append({"name": name, "dtype": arg.dtype, "shape": [int(before.size)],
                            "role": "inout" if arg.changed else "input", "data": f"{name}.npy"})
        else:
            scalars.append({"name": name, "dtype": arg.dtype, "value": arg.value})
    task = {
        "name": capture.label,
        "cuda": "kernel.cu",
        "entry": f"{capture.label}_captured",
        "buffers": buffers,
        "scalars": scalars,
        "launches": [{"kernel": capture.kernel, "grid": capture.grid, "block": capture.block,
                      "shared_bytes": capture.shared_bytes, "template_args": _split_top(capture.template_args),
                      "args": names}],
        "reference": {"kind": "lowered"},
        "tolerance": {"rtol": 1e-4, "atol": 1e-5} if has_float else {"rtol": 0.0, "atol": 0.0},
        "description": "captured from a run of the CPU port (inputs are the real data at the first launch)",
    }
    path = task_dir / "task.json"
    path.write_text(json.dumps(task, indent=2) + "\n")
    return path


def _wrap_in_namespace(cpp: str, namespace: str) -> str:
    """Put a tuned translation unit's definitions in their own namespace so that its copies
    of the lowered kernels and support code do not clash with the port's. Its #include
    lines move to the top (headers are guarded, so including them earlier is harmless)."""
    lines = cpp.splitlines()
    includes = [l for l in lines if l.lstrip().startswith("#include")]
    body = [l for l in lines if not l.lstrip().startswith("#include")]
    return "\n".join(includes + [f"namespace {namespace} {{", KERNEL_FMA_BEGIN] + body
                     + [KERNEL_FMA_END, f"}}  // namespace {namespace}", ""])


# The dispatch's own names follow the kernel's text and its macros: spelled as no program's macro is.
GRID, BLOCK, SHARED, ARGS = "cudacpu_grid_", "cudacpu_block_", "cudacpu_shared_", "cudacpu_args_"


def tuned_dispatch_source(capture: Capture, task: dict, tuned_cpp: str, pin_scalars: bool = True) -> str:
    """C++ that registers the tuned version of one kernel for its captured configuration;
    `pin_scalars`: for the captured scalar values only (a version verified on those values alone)."""
    space = f"cudacpu_tuned_{capture.label}"
    wrapped = _wrap_in_namespace(tuned_cpp, space)
    entry = task["entry"]
    by_name = {b["name"]: b for b in task["buffers"]} | {s["name"]: s for s in task["scalars"]}
    g, b = capture.grid, capture.block
    conditions = [f"{GRID}.x == {g[0]}u && {GRID}.y == {g[1]}u && {GRID}.z == {g[2]}u",
                  f"{BLOCK}.x == {b[0]}u && {BLOCK}.y == {b[1]}u && {BLOCK}.z == {b[2]}u",
                  f"{SHARED} == {capture.shared_bytes}u"]
    call_args, pointers = [], []
    for i, name in enumerate(task["launches"][0]["args"]):
        spec = by_name[name]
        ctype = c_type(spec["dtype"])
        if "role" in spec:
            call_args.append(f"*static_cast<{ctype}**>({ARGS}[{i}])")
            pointers.append(call_args[-1])
        elif capture.args[i].stateless:  # nothing to read: the entry makes the functor anew
            call_args.append(f"{ctype}{{0}}")
        elif not pin_scalars:
            call_args.append(f"*static_cast<{ctype}*>({ARGS}[{i}])")
        else:
            value = spec["value"]
            literal = repr(float(value)) if spec["dtype"].startswith("float") else str(int(value))
            if spec["dtype"].startswith("float"):
                conditions.append(f"*static_cast<{ctype}*>({ARGS}[{i}]) == static_cast<{ctype}>({literal})")
            else:
                conditions.append(f"*static_cast<{ctype}*>({ARGS}[{i}]) == static_cast<{ctype}>({literal}LL)")
            call_args.append(f"*static_cast<{ctype}*>({ARGS}[{i}])")
    if pointers:
        conditions.append(f"cudacpu_launch::distinct_allocations({{{', '.join(pointers)}}})")
    order = [by_name[n] for n in task["launches"][0]["args"]]
    entry_order = [b["name"] for b in task["buffers"]] + [s["name"] for s in task["scalars"]]
    by_position = dict(zip([o["name"] for o in order], call_args))
    call = ", ".join(by_position[n] for n in entry_order)
    guard = " &&\n        ".join(conditions)
    tuned_name = f"{capture.kernel}<{capture.template_args}>" if capture.template_args else capture.kernel
    return (
        f"// Tuned version of `{tuned_name}`, verified on the captured launch only.\n"
        # the launch header before the kernel's text, whose macros (`#define T float`) would rewrite it
        f'#include "cuda_cpu_launch.h"\n'
        f"{wrapped}\n"
        f"static bool {space}_dispatch(dim3 {GRID}, dim3 {BLOCK}, std::size_t {SHARED}, void** {ARGS}) {{\n"
        f"    if (!({guard}))\n        return false;\n"
        f"    {space}::{entry}({call});\n"
        f"    return true;\n}}\n"
        f'static cudacpu_launch::Register {space}_registration("{capture.kernel}", {json.dumps(capture.template_args)}, '
        f'{space}_dispatch);\n'
    )
