"""Lower one TE workload with TVM into the three codes of a benchmark record.

- CUDA: TVM's default GPU schedules (dlight rules), compiled by TVM's CUDA codegen (no
  GPU needed). The launch configuration of every kernel and the launch order are read
  from the host function TVM generates around the kernels.
- C: TVM's C target over the unscheduled (default CPU) loop nest or, with a trial budget,
  over the best CPU schedule MetaSchedule finds on this machine (parallel loops become
  OpenMP loops, vectorised loops plain loops for gcc to vectorise), made self-contained by
  `bench.csource.make_self_contained`.
- ir_code: the TVMScript of the computation before scheduling.

TVM is imported lazily so that the rest of `bench` works without it.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from .csource import CSourceError, make_self_contained

CUDA_TARGET = {"kind": "cuda", "arch": "sm_80", "max_shared_memory_per_block": 49152, "max_threads_per_block": 1024}


class LoweringError(Exception):
    """TVM could not schedule or generate code for a workload."""


@dataclass
class Workload:
    """A TE computation with named inputs and outputs, ready to lower."""

    name: str  # unique, a C identifier: the C function and the kernels' prefix
    op_name: str
    category: str
    op_args: dict
    inputs: list  # te.Tensor placeholders, in parameter order
    outputs: list  # te.Tensor results, in parameter order after the inputs
    input_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.outputs = _unique_outputs(self.inputs, self.outputs)


def _copy(tensor, name: str):
    from tvm import te

    return te.compute(tensor.shape, lambda *i: tensor(*i), name=name)


def _unique_outputs(inputs: list, outputs: list) -> list:
    """Outputs of one multi-output op share a name; copy them out under distinct names."""
    seen = {t.name for t in inputs}
    out = []
    for t in outputs:
        if t.name in seen:
            k = 1
            while f"{t.name}_{k}" in seen:
                k += 1
            t = _copy(t, f"{t.name}_{k}")
        seen.add(t.name)
        out.append(t)
    return out


@dataclass
class KernelLaunch:
    kernel: str
    grid: list[int]
    block: list[int]
    shared_bytes: int
    args: list[str]


@dataclass
class Lowered:
    cuda_code: str
    c_code: str
    ir_code: str
    launches: list[KernelLaunch]
    scratch: list[dict]  # global intermediates the kernels share: name, dtype, shape
    tuned_c_codes: list[str] = field(default_factory=list)  # C of MetaSchedule's best schedules, best first


def prim_func(work: Workload):
    from tvm import te

    func = te.create_prim_func([*work.inputs, *work.outputs])
    return func.with_attr("global_symbol", work.name)


def param_names(work: Workload) -> list[str]:
    """Buffer names of the TVM function's parameters (TVM makes repeated tensor names unique)."""
    func = prim_func(work)
    return [p.name for p in func.params]


def ir_module(work: Workload):
    """The workload as an IRModule whose buffers all have distinct names.

    TOPI reuses names (two softmaxes both allocate T_softmax_maxelem); a TVMScript round
    trip renames the repeats, so that kernel parameters and scratch buffers are unambiguous.
    """
    import tvm

    return tvm.script.from_source(tvm.IRModule({work.name: prim_func(work)}).script())


@dataclass
class CpuTuning:
    """What MetaSchedule did for one workload's C reference."""

    trials: int  # candidates measured
    seconds: float
    best_us: float | None = None  # best candidate's time (TVM's LLVM build), None: none ran
    applied: bool = False  # a tuned schedule became the C reference (the generator decides)
    note: str = ""  # why not, where not applied
    c_us: float | None = None  # the fastest tuned C reference's time (gcc -O3 -march=native -fopenmp)
    default_c_us: float | None = None  # the default C reference's time, likewise
    rank: int | None = None  # that tuned C's schedule among MetaSchedule's best (0: its best)


def lower(work: Workload, tune_trials: int = 0, seed: int = 0) -> tuple[Lowered, CpuTuning | None]:
    """The record's codes (the C reference of the default schedule); with `tune_trials`, also
    the C of MetaSchedule's best few schedules. Choosing among them is the caller's.
    """
    tuning = None
    tuned_codes: list[str] = []
    try:
        # Each path gets its own module: TVM's schedules may rewrite the one they are given.
        ir_code = ir_module(work).script()
        cuda_code, launches, scratch = _cuda(work)
        c_code = _c(ir_module(work), work)
    except LoweringError:
        raise
    except CSourceError as exc:
        raise LoweringError(f"{work.name}: {exc}") from None
    except Exception as exc:  # TVM raises its own error types from C++
        raise LoweringError(f"{work.name}: {_last_line(exc)}") from None
    if tune_trials > 0:
        tuned_codes, tuning = _tuned_c(work, tune_trials, seed)
    return Lowered(cuda_code, c_code, ir_code, launches, scratch, tuned_codes), tuning


def _tuned_c(work: Workload, trials: int, seed: int) -> tuple[list[str], CpuTuning]:
    """C of the best tuned schedules, best first; empty where none (the CpuTuning says why)."""
    start = time.perf_counter()
    try:
        schedules, tuning = tune_cpu(work, trials, seed)
    except TuningUnavailable:
        raise
    except Exception as exc:  # TVM's own error types, from a design space it cannot handle
        return [], CpuTuning(0, round(time.perf_counter() - start, 2), note=f"tuning failed: {_last_line(exc)}")
    codes, errors = [], []
    for mod in schedules:
        try:
            codes.append(scheduled_c(mod, work))
        except Exception as exc:  # CSourceError, or TVM's C codegen's own error types
            errors.append(_last_line(exc))
    if not codes and errors:
        tuning.note = f"tuned C not generated: {errors[0]}"
    return codes, tuning


def _last_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__


# ---------------------------------------------------------------- CUDA


def gpu_schedule(mod_factory):
    """Apply TVM's default GPU schedules (dlight): the first rule that fits each function.

    Where a specialised rule fails on a workload, dlight's Fallback rule alone is used.
    """
    import tvm
    from tvm.s_tir import dlight as dl

    with tvm.target.Target(CUDA_TARGET):
        try:
            return dl.ApplyDefaultSchedule(
                dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.GeneralReduction(), dl.gpu.Fallback()
            )(mod_factory())
        except Exception:  # TVM's schedule errors come from C++ with various types
            return dl.ApplyDefaultSchedule(dl.gpu.Fallback())(mod_factory())


def _cuda(work: Workload) -> tuple[str, list[KernelLaunch], list[dict]]:
    import tvm
    from tvm.target import Target

    scheduled = _pragma_unroll(gpu_schedule(lambda: ir_module(work)))
    scratch = _global_intermediates(scheduled[work.name])
    target = Target(CUDA_TARGET).with_host(Target({"kind": "c"}))
    bound = tvm.tirx.transform.BindTarget(target)(scheduled)
    pipeline, _, finalize_device = tvm.tirx.get_default_tir_pipeline(Target(CUDA_TARGET))
    with tvm.transform.PassContext(config={"tirx.UnrollLoop": {"explicit_unroll": False}}):
        lowered = pipeline(bound)
    build_module = sys.modules["tvm.tirx.build"]  # the module, shadowed by the function tvm.tirx.build
    host, devices = build_module.split_host_device_mods(lowered)
    if len(devices) != 1:
        raise LoweringError(f"{work.name}: expected one CUDA device module, got {len(devices)}")
    (device_target, device_mod), = devices.items()
    params = {gv.name_hint: [p.name for p in fn.params] for gv, fn in device_mod.functions.items()}
    host_script = host.script()
    launches = _launches(host_script, params, work.name)
    device_mod = finalize_device()(device_mod)
    source = build_module.codegen_build(device_mod, device_target).inspect_source()
    return source, launches, _as_allocated(scratch, host_script)


def _pragma_unroll(mod):
    """Keep the schedule's unrolled loops as `#pragma unroll` loops instead of unrolling them
    in the source: the same kernel, twenty times shorter (dlight's Matmul rule asks for
    explicit unrolling, which turns a tiled matmul into 100 KB of straight-line code)."""
    import tvm

    text = mod.script().replace('"pragma_unroll_explicit": 1', '"pragma_unroll_explicit": 0')
    return tvm.script.from_source(text)


_CALL = re.compile(r'T\.call_ffi_kernel\("(?P<kernel>\w+)", (?P<args>.*?), launch_params=\[(?P<params>[^\]]*)\]')


def _launches(host_script: str, params: dict[str, list[str]], name: str) -> list[KernelLaunch]:
    """Kernels in launch order, with grid/block from the extents the host passes."""
    launches = []
    for m in _CALL.finditer(host_script):
        kernel = m["kernel"]
        tags = [t.strip().strip('"') for t in m["params"].split(",") if t.strip()]
        values = [v.strip() for v in m["args"].split(",")][-len(tags):] if tags else []
        grid, block, shared = [1, 1, 1], [1, 1, 1], 0
        for tag, value in zip(tags, values):
            const = re.fullmatch(r"(?:T\.int(?:32|64)\()?(\d+)\)?", value)
            if not const:
                raise LoweringError(f"{name}: launch extent {tag}={value} is not a constant")
            value = const.group(1)
            if tag.startswith("blockIdx."):
                grid["xyz".index(tag[-1])] = int(value)
            elif tag.startswith("threadIdx."):
                block["xyz".index(tag[-1])] = int(value)
            elif "dyn_shared" in tag:
                shared = int(value)
        args = []
        for p in params.get(kernel, []):
            if not p.endswith("_ptr"):
                raise LoweringError(f"{name}: kernel {kernel} takes a scalar parameter {p}")
            args.append(p[: -len("_ptr")])
        launches.append(KernelLaunch(kernel, _trim(grid), _trim(block), shared, args))
    if not launches:
        raise LoweringError(f"{name}: TVM produced no CUDA kernel")
    return launches


def _trim(dims: list[int]) -> list[int]:
    while len(dims) > 1 and dims[-1] == 1:
        dims = dims[:-1]
    return dims


def _global_intermediates(func) -> list[dict]:
    """Buffers allocated in global memory between kernels (they become scratch buffers)."""
    out = []
    for buf in _root_allocs(func):
        if buf.scope() == "global":
            out.append({"name": buf.name, "dtype": str(buf.dtype), "shape": [int(s) for s in buf.shape]})
    return out


_HOST_ALLOC = re.compile(r"^\s*(?P<name>\w+) = T\.alloc_buffer\(\((?P<extents>[\d, ]+)\)(?:, \"(?P<dtype>\w+)\")?", re.M)


def _as_allocated(scratch: list[dict], host_script: str) -> list[dict]:
    """The scratch buffers as the lowered host function allocates them. TVM's pipeline
    (StorageRewrite) may merge intermediates into one allocation and resize it, so the kernels
    index past the scheduled buffer's shape: the allocation's (flat) size is what they need."""
    allocated = {}
    for m in _HOST_ALLOC.finditer(host_script):
        size = 1
        for extent in m["extents"].replace(" ", "").strip(",").split(","):
            size *= int(extent)
        allocated[m["name"]] = (size, m["dtype"])
    out = []
    for buf in scratch:
        size, dtype = allocated.get(buf["name"], (None, None))
        elements = 1
        for extent in buf["shape"]:
            elements *= extent
        if size is not None and size > elements and (dtype is None or dtype == buf["dtype"]):
            buf = {**buf, "shape": [size]}
        out.append(buf)
    return out


def _root_allocs(func) -> list:
    body = func.body
    block = getattr(body, "block", None)
    return list(block.alloc_buffers) if block is not None else []


# ---------------------------------------------------------------- C


def _c(mod, work: Workload, parallel: list[str] = ()) -> str:
    """C of the module; `parallel` names its parallel loops (the C target prints them serial).

    Vectorised loops are lowered as plain loops: the C target has no vector types, and gcc
    vectorises them at -O3.
    """
    import tvm
    from tvm.target import Target

    _register_c_intrinsics()
    with tvm.transform.PassContext(config={"tirx.disable_vectorize": True}):
        lib = tvm.compile(mod, target=Target({"kind": "c"}))
    params = list(zip(param_names(work), [str(t.dtype) for t in [*work.inputs, *work.outputs]]))
    return make_self_contained(lib.mod.inspect_source(), work.name, params, parallel)


_C_INTRINSICS = {"tirx.fabs": {"float32": "fabsf", "float64": "fabs"}}
_registered = False


def _register_c_intrinsics() -> None:
    """TVM 0.27's C target leaves some math intrinsics unresolved; map them to libm."""
    global _registered
    if _registered:
        return
    from tvm import tirx

    for op, names in _C_INTRINSICS.items():
        def lower_call(call, names=names):
            dtype = str(call.ty.dtype)
            return tirx.call_pure_extern(dtype, names.get(dtype, names["float32"]), *call.args)

        tirx.op.register_intrin_lowering(op, "c", f=lower_call, level=99)
    _registered = True


# ---------------------------------------------------------------- TVM's own CPU build


def run_llvm(work: Workload, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Run TVM's LLVM build on the inputs; return the outputs (the verification oracle)."""
    import tvm

    lib = tvm.compile(ir_module(work), target="llvm")
    args = [tvm.runtime.tensor(a) for a in arrays]
    outs = [tvm.runtime.empty([int(s) for s in t.shape], str(t.dtype)) for t in work.outputs]
    lib[work.name](*args, *outs)
    return [o.numpy() for o in outs]


# ---------------------------------------------------------------- MetaSchedule CPU tuning


class TuningUnavailable(Exception):
    """MetaSchedule cannot run with the installed TVM."""


_PROBE = "import tvm; tvm.ir.save_json(tvm.tirx.IntImm('int32', 1))"
_probe_error: str | None = None
_probed = False


def check_tuning() -> None:
    """Raise TuningUnavailable where MetaSchedule would crash the process.

    MetaSchedule deep-copies every module through TVM's JSON serialiser. apache-tvm
    0.27.0.post1 is built against apache-tvm-ffi 0.1.14 but accepts any later one; with
    0.1.15 (whose type-attribute ABI changed) serialising any TIR node segfaults in
    tvm::ffi::ToJSONGraph. The probe runs that serialisation in a child process.
    """
    global _probe_error, _probed
    if not _probed:
        proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True)
        if proc.returncode != 0:
            import tvm
            import tvm_ffi

            why = "segfaults" if proc.returncode < 0 else f"fails ({_last_line(RuntimeError(proc.stderr))})"
            _probe_error = (
                f"MetaSchedule tuning is unavailable: TVM's JSON serialisation of TIR {why} with apache-tvm "
                f"{tvm.__version__} and apache-tvm-ffi {tvm_ffi.__version__} (apache-tvm 0.27.0.post1 is built "
                "against apache-tvm-ffi 0.1.14): pip install \"apache-tvm-ffi==0.1.14.post1\""
            )
        _probed = True
    if _probe_error:
        raise TuningUnavailable(_probe_error)


def cpu_target() -> dict:
    """LLVM target for this machine: its CPU by name and the cores this process may use.

    (`-mcpu=native` is rejected by the LLVM inside TVM's wheel, whose triple is conda's.)
    """
    from tvm.target import codegen

    return {"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu(), "num-cores": len(os.sched_getaffinity(0))}


TOP_SCHEDULES = 3  # MetaSchedule's best schedules whose C is generated and timed


def tune_cpu(work: Workload, trials: int, seed: int):
    """Tune the workload's CPU schedule with MetaSchedule on this machine.

    Returns (the scheduled IRModules of the TOP_SCHEDULES fastest candidates, fastest first,
    empty where no candidate built and ran; CpuTuning).
    Candidates are sampled from MetaSchedule's x86 design space (replay-trace search: with
    budgets of tens of trials a learned cost model has nothing to learn from) and built and
    timed in this process.
    """
    import tvm
    from tvm.s_tir import meta_schedule as ms

    check_tuning()
    _lazy_tensor_intrinsics()
    builder, runner = _in_process_measurers()
    logging.getLogger("tvm.s_tir.meta_schedule").setLevel(logging.WARNING)
    mod = tvm.IRModule({"main": ir_module(work)[work.name].with_attr("global_symbol", "main")})
    target = tvm.target.Target(cpu_target())
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as work_dir:
        database = ms.tune_tir(
            mod, target, work_dir, max_trials_global=trials, num_trials_per_iter=min(trials, 64),
            builder=builder, runner=runner, database="memory", cost_model="random",
            strategy="replay-trace", seed=seed + 1, num_tuning_cores=1,  # MetaSchedule seeds start at 1
        )
    records = database.get_all_tuning_records()
    # MetaSchedule records a candidate that failed to build or run at 1e10 s.
    times = [t for t in (sum(float(c) for c in r.run_secs) / len(r.run_secs) for r in records if r.run_secs) if t < 1e9]
    tuning = CpuTuning(trials=len(records), seconds=round(time.perf_counter() - start, 2),
                       best_us=round(min(times) * 1e6, 2) if times else None)
    if not times:
        tuning.note = "no candidate built and ran"
        return [], tuning
    schedules = []
    for record in database.get_top_k(database.commit_workload(mod), TOP_SCHEDULES):
        sch = tvm.s_tir.Schedule(record.workload.mod)
        record.trace.apply_to_schedule(sch, remove_postproc=False)
        schedules.append(_renamed(sch.mod, work.name))
    return schedules, tuning


def _renamed(mod, name: str):
    """The tuned module under the workload's name, unrolled loops kept as loops (see _pragma_unroll)."""
    import tvm

    func = mod["main"].with_attr("global_symbol", name)
    return _pragma_unroll(tvm.IRModule({name: func}))


def scheduled_c(mod, work: Workload) -> str:
    """The self-contained C reference of a scheduled module of the workload (named work.name)."""
    import tvm

    text, parallel = _mark_parallel_loops(mod.script())
    return _c(tvm.script.from_source(text), work, parallel)


def _mark_parallel_loops(script: str) -> tuple[str, list[str]]:
    """Give every parallel loop variable a name of its own: `par<k>_<name>`.

    TVM's C target prints parallel loops as serial ones and makes clashing names unique
    with suffixes (sibling loops often share one), so the C text cannot tell them apart
    otherwise. A loop variable is in scope in the lines indented below its `for`.
    """
    lines = script.splitlines()
    names: list[str] = []
    for i, line in enumerate(lines):
        m = re.match(r"( *)for (\w+) in T\.parallel\(", line)
        if not m:
            continue
        new = f"par{len(names)}_{m[2]}"
        names.append(new)
        old = re.compile(rf"\b{m[2]}\b")
        lines[i] = line.replace(f"for {m[2]} in", f"for {new} in", 1)
        for j in range(i + 1, len(lines)):
            if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip(" ")) <= len(m[1]):
                break
            lines[j] = old.sub(new, lines[j])
    return "\n".join(lines) + "\n", names


def _lazy_tensor_intrinsics() -> None:
    """Load only the x86 tensor intrinsics MetaSchedule's CPU rules refer to.

    MetaSchedule imports `tvm.s_tir.tensor_intrin`, whose package module registers the CUDA,
    ROCm, Hexagon, Arm and RISC-V intrinsics too (parsing them takes over a minute here).
    An empty package module in its place keeps every submodule importable on demand.
    """
    import importlib
    import importlib.util
    import types

    name = "tvm.s_tir.tensor_intrin"
    if name not in sys.modules:
        spec = importlib.util.find_spec(name)
        package = types.ModuleType(name)
        package.__path__ = list(spec.submodule_search_locations)
        package.__spec__ = spec
        sys.modules[name] = package
    importlib.import_module(f"{name}.x86")


_measurers = None


def _in_process_measurers():
    """A MetaSchedule builder and runner that build and time candidates in this process.

    MetaSchedule's LocalBuilder and LocalRunner send every candidate to worker processes
    that import TVM afresh (and need cloudpickle); in this process it is several times
    faster on a small machine, and the candidates are TVM's own schedules.
    """
    global _measurers
    if _measurers is not None:
        return _measurers
    import numpy as np
    import tvm
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    from tvm.s_tir.meta_schedule.runner import PyRunner, RunnerFuture, RunnerResult

    built: dict[str, object] = {}  # artifact path -> runtime module

    @derived_object
    class InProcessBuilder(PyBuilder):
        def build(self, build_inputs):
            results = []
            for item in build_inputs:
                try:  # MetaSchedule's default build, without its deprecated entry point
                    module = tvm.tirx.build(RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(item.mod), item.target)
                except Exception as exc:  # a candidate TVM cannot build: MetaSchedule skips it
                    results.append(BuilderResult(None, _last_line(exc)))
                    continue
                # MetaSchedule deletes the artifact's directory after the run.
                path = os.path.join(tempfile.mkdtemp(prefix="bench-tune-cand-"), "module")
                built[path] = module
                results.append(BuilderResult(path, None))
            return results

    @derived_object
    class InProcessRunner(PyRunner):
        def run(self, runner_inputs):
            futures = []
            rng = np.random.default_rng(0)
            for item in runner_inputs:
                module = built.pop(item.artifact_path)
                try:
                    args = [tvm.runtime.tensor(_random(rng, a.dtype, a.shape)) for a in item.args_info]
                    timer = module.time_evaluator(module.entry_name, tvm.cpu(), number=1, repeat=3, min_repeat_ms=10)
                    result = RunnerResult([float(t) for t in timer(*args).results], None)
                except Exception as exc:  # a candidate that fails at run time
                    result = RunnerResult(None, _last_line(exc))
                futures.append(RunnerFuture(lambda: True, lambda result=result: result))
            return futures

    _measurers = (InProcessBuilder(), InProcessRunner())
    return _measurers


def _random(rng, dtype, shape):
    shape = [int(s) for s in shape]
    dtype = str(dtype)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 8, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype("bool")
    return rng.uniform(-1, 1, size=shape).astype(dtype)
