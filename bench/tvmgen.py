"""Lower one TE workload with TVM into the three codes of a benchmark record.

- CUDA: TVM's default GPU schedules (dlight rules), compiled by TVM's CUDA codegen (no
  GPU needed). The launch configuration of every kernel and the launch order are read
  from the host function TVM generates around the kernels.
- C: TVM's C target over the unscheduled (default CPU) loop nest, made self-contained
  by `bench.csource.make_self_contained`.
- ir_code: the TVMScript of the computation before scheduling.

TVM is imported lazily so that the rest of `bench` works without it.
"""

from __future__ import annotations

import re
import sys
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


def lower(work: Workload) -> Lowered:
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
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise LoweringError(f"{work.name}: {first}") from None
    return Lowered(cuda_code, c_code, ir_code, launches, scratch)


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
    launches = _launches(host.script(), params, work.name)
    device_mod = finalize_device()(device_mod)
    source = build_module.codegen_build(device_mod, device_target).inspect_source()
    return source, launches, scratch


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


def _root_allocs(func) -> list:
    body = func.body
    block = getattr(body, "block", None)
    return list(block.alloc_buffers) if block is not None else []


# ---------------------------------------------------------------- C


def _c(mod, work: Workload) -> str:
    import tvm
    from tvm.target import Target

    _register_c_intrinsics()
    lib = tvm.compile(mod, target=Target({"kind": "c"}))
    params = list(zip(param_names(work), [str(t.dtype) for t in [*work.inputs, *work.outputs]]))
    return make_self_contained(lib.mod.inspect_source(), work.name, params)


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
