"""References: what a candidate's outputs are compared with, one class per `reference.kind`.

Every reference that executes code runs in its OWN sandbox (a sibling of the candidate's, never
the same working directory), so the candidate can see neither the reference's files nor its
outputs. The kinds, strongest first:

  c        the task's C/C++ reference, compiled with the candidates' default flags (-O3 -march=native
           -fopenmp) and called through the same generated driver
  python   `module:function` over numpy arrays, importable from the task directory:
           f(inputs: dict[name, ndarray], scalars: dict[name, number]) -> dict[name, ndarray]
           (inputs include inout buffers' initial values; the result holds outputs and inouts)
  cuda     the original CUDA code run on a GPU (when `nvidia-smi` works); its outputs are recorded
           as a golden file beside the task, used by later runs without a GPU
  golden   an .npz of outputs per seed, keys "<buffer>@<seed>" (or "<buffer>" for the task's seed)
  lowered  the deterministic lowering (tools.cuda.lower_task) at -O2 on ONE thread: the weakest kind
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from sandboxes import Limits, LocalSandbox, Sandbox
from tools.build import DEFAULT_CXXFLAGS, compile_args, compile_cpp, compile_cuda
from tools.spec import Task, numpy_dtype

from .harness import harness_source, run_harness
from .inputs import scalar_values
from .runtime_headers import install_precompiled_runtime, put_runtime_headers, runtime_include_dir

OUTPUT_ROLES = ("output", "inout")
# A C/C++ reference gets the candidates' default optimization, so that a speedup is the code's, not the flags'.
C_REFERENCE_FLAGS = ("-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-std=gnu11")
CXX_REFERENCE_FLAGS = tuple(DEFAULT_CXXFLAGS)
_RUNNER = Path(__file__).with_name("python_runner.py")


class VerifyError(Exception):
    """The task or its reference cannot be used (not the candidate's fault); the message says why."""


def sibling_sandbox(sandbox: Sandbox, *, gpu: bool = False) -> Sandbox:
    """A fresh sandbox of the same kind and limits, with its own working directory (and, for a
    local one, the GPU's device nodes when `gpu`; a Docker one gets the host's GPUs anyway)."""
    if isinstance(sandbox, LocalSandbox):
        return LocalSandbox(sandbox.limits, use_bwrap=sandbox.bwrap, hide=getattr(sandbox, "hide", ()), gpu=gpu)
    limits = getattr(sandbox, "limits", None)
    image = getattr(sandbox, "image", None)
    try:
        return type(sandbox)(limits, image=image) if image else type(sandbox)(limits)  # type: ignore[call-arg]
    except Exception as exc:  # noqa: BLE001 - any failure to open one is reported the same way
        raise VerifyError(f"cannot open a separate sandbox for the reference ({type(exc).__name__}: {exc})") from None


def output_buffers(task: Task):
    return [b for b in task.buffers if b.role in OUTPUT_ROLES]


def inputs_digest(inputs: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(inputs):
        h.update(name.encode())
        h.update(np.ascontiguousarray(inputs[name]).tobytes())
    return h.hexdigest()[:16]


def _shape_outputs(task: Task, raw: dict[str, np.ndarray], who: str) -> dict[str, np.ndarray]:
    out = {}
    for b in output_buffers(task):
        if b.name not in raw:
            raise VerifyError(f"{who} did not produce output buffer '{b.name}'")
        arr = np.asarray(raw[b.name])
        if arr.size != b.size:
            raise VerifyError(f"{who}: output '{b.name}' has {arr.size} elements, the task says {b.size} (shape {b.shape})")
        out[b.name] = arr.astype(numpy_dtype(b.dtype), copy=False).reshape(b.shape)
    return out


class Reference:
    """Base: outputs per seed, and optionally timing."""

    kind = "?"
    timeable = False
    note = ""  # anything the report should say about how this reference ran

    def __init__(self, task: Task):
        self.task = task

    def seeds(self, wanted: Sequence[int]) -> list[int]:
        return list(wanted)

    def outputs(self, seed: int, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def time(self, seed: int, inputs: dict[str, np.ndarray], *, threads: int, budget_s: float) -> list[float]:
        raise VerifyError(f"a {self.kind} reference cannot be timed")

    def close(self) -> None:
        pass

    def __enter__(self) -> "Reference":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _LibraryReference(Reference):
    """A C/C++ library called through the harness in its own sandbox (kinds c and lowered)."""

    timeable = True
    fixed_threads: int | None = None
    warmups, min_times = 2, 3  # per timed process

    def __init__(self, task: Task, sandbox: Sandbox, source: str, filename: str, symbol: str,
                 call_args: Sequence[str] | None, flags: Sequence[str], compiler: str):
        super().__init__(task)
        self.box = sibling_sandbox(sandbox)
        self.symbol = symbol
        try:
            includes = put_runtime_headers(self.box, "include")
            self.box.put({filename: source, "harness.cpp": harness_source(task, call_args)})
            if includes and Path(filename).suffix in (".cpp", ".cc", ".cxx"):
                install_precompiled_runtime(self.box, includes[0], cxx=compiler, args=compile_args(compiler, flags, shared=True))
            build = compile_cpp(self.box, [filename], "libref.so", cxx=compiler, flags=flags, shared=True, include_dirs=includes)
            if not build.ok:
                raise VerifyError(f"the {self.kind} reference does not compile:\n{build.summary(8)}")
            hb = compile_cpp(self.box, ["harness.cpp"], "harness", flags=["-O2", "-std=c++17"], extra=["-ldl", "-Wl,-z,now"])
            if not hb.ok:
                raise VerifyError(f"the harness for the {self.kind} reference does not compile:\n{hb.summary(8)}")
        except BaseException:
            self.box.close()
            raise

    def _run(self, seed: int, inputs: dict[str, np.ndarray], threads: int, mode: str, budget_s: float,
             max_runs: int = 20000):
        indir, outdir = f"s{seed}/in", f"s{seed}/out"
        self.box.put({f"{indir}/{k}.bin": np.ascontiguousarray(v).tobytes() for k, v in inputs.items()})
        run = run_harness(self.box, "harness", "libref.so", self.symbol, indir, outdir,
                          threads=self.fixed_threads or threads, mode=mode, budget_s=budget_s, max_runs=max_runs,
                          warmups=self.warmups, min_times=self.min_times)
        if run.crashed:
            why = "timed out" if run.result.timed_out else f"exit status {run.result.returncode}"
            raise VerifyError(f"the {self.kind} reference failed ({why}): {run.result.tail(800)}")
        if run.input_modified:
            name = run.input_modified[0][0]
            raise VerifyError(f"the {self.kind} reference writes into input buffer '{name}': mark it inout in the task")
        return run, outdir

    def outputs(self, seed, inputs):
        # one call: a candidate is called twice to catch results cached across calls; the reference is trusted
        _, outdir = self._run(seed, inputs, self.fixed_threads or 1, "check", 0.0, max_runs=1)
        raw = {b.name: np.frombuffer(self.box.get(f"{outdir}/{b.name}.bin"), dtype=numpy_dtype(b.dtype))
               for b in output_buffers(self.task)}
        return _shape_outputs(self.task, raw, f"the {self.kind} reference")

    def time(self, seed, inputs, *, threads, budget_s):
        run, _ = self._run(seed, inputs, threads, "time", budget_s)
        return run.times

    def close(self):
        self.box.close()


class CReference(_LibraryReference):
    kind = "c"

    def __init__(self, task: Task, sandbox: Sandbox):
        ref = task.reference
        if not ref.path or not ref.function:
            raise VerifyError(f"task {task.name}: a 'c' reference needs reference.path and reference.function")
        path = task.path_of(ref.path)
        is_c = path.suffix == ".c"
        super().__init__(task, sandbox, path.read_text(), "ref" + path.suffix, ref.function, ref.args,
                         C_REFERENCE_FLAGS if is_c else CXX_REFERENCE_FLAGS, "gcc" if is_c else "g++")


class LoweredReference(_LibraryReference):
    kind = "lowered"
    fixed_threads = 1
    # Timed for information only (nothing is decided on a serial build's speed): one call per timed
    # process, not five.
    warmups, min_times = 0, 1
    note = "lowered reference: the deterministic lowering at -O2 on one thread (weakest evidence)"
    # Built for this machine as the port's own build is (-march=native: a*b+c contracted into one
    # fused multiply-add, as nvcc does too): a candidate built so is not told apart from its own
    # faithful lowering by a rounding the shipped port has as well (HeCBench lif: dividing by a
    # difference of near-equal values turned one last-place rounding into a 17% difference).
    flags = ("-O2", "-march=native", "-fopenmp", "-std=c++17")

    def __init__(self, task: Task, sandbox: Sandbox):
        try:
            from tools.cuda import lower_task
        except ImportError as exc:
            raise VerifyError(f"reference kind 'lowered' needs tools.cuda.lower_task, which is not available ({exc})") from None
        try:
            source = lower_task(task)
        except Exception as exc:  # noqa: BLE001 - LoweringError, or a front-end failure: either way no reference
            raise VerifyError(f"the lowered reference cannot be built: {exc}") from None
        super().__init__(task, sandbox, source, "lowered.cpp", task.entry_name, None, list(self.flags), "g++")


def python_target(task: Task) -> tuple[str, str]:
    """(module, function) of a python reference: 'module:function', or path + function."""
    ref = task.reference
    if ref.function and ":" in ref.function:
        module, _, function = ref.function.partition(":")
        return module, function
    if ref.path and ref.function:
        return Path(ref.path).with_suffix("").as_posix().replace("/", "."), ref.function
    raise VerifyError(f"task {task.name}: a 'python' reference needs reference.function as 'module:function'")


class PythonReference(Reference):
    """Runs the function in a separate sandbox with a Python that has numpy."""

    kind = "python"
    timeable = True

    def __init__(self, task: Task, sandbox: Sandbox):
        super().__init__(task)
        self.module, self.function = python_target(task)
        self.box, self.python = self._python_sandbox(sandbox)
        try:
            base = task.base_dir or Path(".")
            files = {f"mod/{p.relative_to(base).as_posix()}": p.read_bytes() for p in _python_files(base, self.module)}
            files["runner.py"] = _RUNNER.read_text()
            self.box.put(files)
        except BaseException:
            self.box.close()
            raise

    def _python_sandbox(self, sandbox: Sandbox) -> tuple[Sandbox, str]:
        if isinstance(sandbox, LocalSandbox):
            # The sandbox hides $HOME, where Python itself may live (pyenv): bind it back read-only.
            pythons = sorted({sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix})
            box = LocalSandbox(sandbox.limits, use_bwrap=sandbox.bwrap, hide=sandbox.hide, expose=pythons)
            return box, sys.executable
        box = sibling_sandbox(sandbox)
        if box.run(["python3", "-c", "import numpy"], timeout_s=60).ok:
            return box, "python3"
        box.close()
        self.note = f"python reference ran in a local sandbox: the {sandbox.kind} sandbox has no Python with numpy"
        return LocalSandbox(getattr(sandbox, "limits", None)), sys.executable

    def _job(self, seed: int, inputs: dict[str, np.ndarray], budget_s: float) -> str:
        buf = _npz_bytes(inputs)
        job = {
            "module_dir": "mod", "module": self.module, "function": self.function,
            "inputs": f"s{seed}/inputs.npz", "outputs": f"s{seed}/outputs.npz", "times": f"s{seed}/times.txt",
            "scalars": scalar_values(self.task), "budget_s": budget_s,
            "outputs_expected": [b.name for b in output_buffers(self.task)],
        }
        self.box.put({f"s{seed}/inputs.npz": buf, f"s{seed}/job.json": json.dumps(job)})
        result = self.box.run([self.python, "runner.py", f"s{seed}/job.json"])
        if not result.ok:
            why = "timed out" if result.timed_out else f"exit status {result.returncode}"
            raise VerifyError(f"python reference {self.module}:{self.function} failed ({why}):\n{result.tail(1200)}")
        return result.stdout

    def outputs(self, seed, inputs):
        self._job(seed, inputs, 0.0)
        with np.load(io.BytesIO(self.box.get(f"s{seed}/outputs.npz"))) as data:
            raw = {k: data[k] for k in data.files}
        return _shape_outputs(self.task, raw, f"python reference {self.module}:{self.function}")

    def time(self, seed, inputs, *, threads, budget_s):
        self._job(seed, inputs, budget_s)
        return [float(t) for t in self.box.get(f"s{seed}/times.txt").decode().split()]

    def close(self):
        self.box.close()


def _python_files(base: Path, module: str) -> list[Path]:
    """The task directory's top-level .py files, plus the package the module lives in."""
    if not base.is_dir():
        return []
    files = [p for p in base.glob("*.py") if p.is_file()]
    top = module.split(".")[0]
    if (base / top).is_dir():
        files += [p for p in (base / top).rglob("*.py") if p.is_file()]
    if not (base / f"{top}.py").is_file() and not (base / top).is_dir():
        raise VerifyError(f"python reference module '{module}' not found in {base}")
    return files


def _npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


# golden files ----------------------------------------------------------------

DIGEST_KEY = "__inputs@{seed}"


def golden_path(task: Task) -> Path:
    """Where golden outputs live: reference.path when it names an .npz, else <name>.golden.npz beside the task."""
    ref = task.reference
    if ref.path and ref.path.endswith(".npz"):
        return task.path_of(ref.path)
    return (task.base_dir or Path(".")) / f"{task.name}.golden.npz"


def read_golden(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise VerifyError(f"{path}: golden file not found") from None
    except (OSError, ValueError) as exc:
        raise VerifyError(f"{path}: not a readable .npz golden file ({exc})") from None


def write_golden(path: Path, task: Task, by_seed: dict[int, tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]) -> None:
    """Record outputs per seed (merged with what the file already holds): {seed: (inputs, outputs)}."""
    arrays = read_golden(path) if path.is_file() else {}
    for seed, (inputs, outputs) in by_seed.items():
        for name, arr in outputs.items():
            arrays[f"{name}@{seed}"] = arr
        arrays[DIGEST_KEY.format(seed=seed)] = np.array(inputs_digest(inputs))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(path)


class GoldenReference(Reference):
    kind = "golden"

    def __init__(self, task: Task, path: Path | None = None, kind: str = "golden"):
        super().__init__(task)
        self.kind = kind
        self.path = path or golden_path(task)
        self.data = read_golden(self.path)

    def _key(self, name: str, seed: int) -> str | None:
        if f"{name}@{seed}" in self.data:
            return f"{name}@{seed}"
        if seed == self.task.inputs.seed and name in self.data:
            return name
        return None

    def recorded_seeds(self) -> list[int]:
        return sorted({int(k.split("@")[1]) for k in self.data if "@" in k and not k.startswith("__")})

    def seeds(self, wanted):
        names = [b.name for b in output_buffers(self.task)]
        have = [s for s in wanted if all(self._key(n, s) for n in names)]
        if not have:
            recorded = ", ".join(map(str, self.recorded_seeds()))
            raise VerifyError(
                f"{self.path}: no golden outputs for seeds {list(wanted)} "
                f"(recorded seeds: {recorded or 'none'}; buffers needed: {', '.join(names)})"
            )
        return have

    def outputs(self, seed, inputs):
        digest = self.data.get(DIGEST_KEY.format(seed=seed))
        if digest is not None and str(digest) != inputs_digest(inputs):
            raise VerifyError(
                f"{self.path}: golden outputs for seed {seed} were recorded for different inputs "
                "(the task's input settings changed since): record them again"
            )
        raw = {b.name: self.data[self._key(b.name, seed)] for b in output_buffers(self.task)}  # type: ignore[index]
        return _shape_outputs(self.task, raw, f"golden file {self.path}")


# cuda ---------------------------------------------------------------------------


def gpu_available() -> tuple[bool, str]:
    """Whether a CUDA GPU answers here, with the reason when none does."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False, "no GPU: nvidia-smi is not installed"
    try:
        probe = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"no GPU: nvidia-smi failed ({exc})"
    if probe.returncode != 0 or "GPU" not in probe.stdout:
        return False, f"no GPU: nvidia-smi says {(probe.stdout + probe.stderr).strip()[:160] or 'nothing'}"
    return True, probe.stdout.strip().splitlines()[0]


class CudaReference(Reference):
    """The original on a GPU; records golden outputs for later runs without one. Not timed:
    GPU time is no yardstick for CPU code (the speedup is then against the baseline)."""

    kind = "cuda"

    def __init__(self, task: Task, sandbox: Sandbox, *, record: bool = True, golden: Path | None = None):
        super().__init__(task)
        from .cuda_driver import cuda_driver_source

        self.record = record
        self.golden = golden or golden_path(task)
        self.recorded: dict[int, tuple[dict, dict]] = {}
        self.box = sibling_sandbox(sandbox, gpu=True)
        try:
            try:
                driver = cuda_driver_source(task, "kernel.cu")
            except ValueError as exc:
                raise VerifyError(str(exc)) from None
            self.box.put({"kernel.cu": task.source(), "driver.cu": driver})
            limits = Limits(timeout_s=600, memory_mb=65536)
            build = compile_cuda(self.box, ["driver.cu"], "driver", flags=["-O2", "-std=c++17"], limits=limits)
            if not build.ok:
                raise VerifyError(f"the CUDA original does not compile with nvcc:\n{build.summary(8)}")
        except BaseException:
            self.box.close()
            raise

    def outputs(self, seed, inputs):
        indir, outdir = f"s{seed}/in", f"s{seed}/out"
        self.box.put({f"{indir}/{k}.bin": np.ascontiguousarray(v).tobytes() for k, v in inputs.items()})
        self.box.run(["mkdir", "-p", outdir])
        result = self.box.run(["./driver", indir, outdir], limits=Limits(timeout_s=300, memory_mb=65536))
        if not result.ok:
            raise VerifyError(f"the CUDA original failed on the GPU (exit status {result.returncode}): {result.tail(800)}")
        raw = {b.name: np.frombuffer(self.box.get(f"{outdir}/{b.name}.bin"), dtype=numpy_dtype(b.dtype))
               for b in output_buffers(self.task)}
        out = _shape_outputs(self.task, raw, "the CUDA original")
        self.recorded[seed] = (inputs, out)
        return out

    def close(self):
        if self.record and self.recorded:
            write_golden(self.golden, self.task, self.recorded)
        self.box.close()


def open_reference(task: Task, sandbox: Sandbox) -> Reference:
    """The reference the task names, ready to produce outputs. Raises VerifyError when it cannot."""
    kind = task.reference.kind
    if kind == "c":
        return CReference(task, sandbox)
    if kind == "python":
        return PythonReference(task, sandbox)
    if kind == "golden":
        return GoldenReference(task)
    if kind == "lowered":
        return LoweredReference(task, sandbox)
    ok, why = gpu_available()
    if ok:
        return CudaReference(task, sandbox)
    path = golden_path(task)
    if path.is_file():
        ref = GoldenReference(task, path, kind="cuda")
        ref.note = f"cuda reference from outputs recorded on a GPU earlier ({path.name}); {why}"
        return ref
    raise VerifyError(
        f"task {task.name}: reference kind 'cuda' needs a GPU to run the original, and {why}; "
        f"no recorded outputs either ({path} does not exist): run once on a machine with a GPU to record them"
    )


__all__ = [
    "VerifyError", "Reference", "CReference", "PythonReference", "GoldenReference", "CudaReference",
    "LoweredReference", "open_reference", "golden_path", "read_golden", "write_golden", "gpu_available",
    "runtime_include_dir", "sibling_sandbox", "C_REFERENCE_FLAGS", "CXX_REFERENCE_FLAGS",
]
