"""The CUDA test-kernel corpus (tests/kernels/) is well formed.

Every task loads; every kernel.cu passes `nvcc -ptx`; every python reference imports and returns
each output/inout buffer with the task's shape and dtype; every C reference compiles with
`gcc -Wall -Werror` and, called on generated inputs, writes every element of its outputs. The corpus
as a whole keeps covering the CUDA features the compiler must handle.
"""

from __future__ import annotations

import ctypes
import importlib.util
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from sandboxes import LocalSandbox
from tools.build import compile_cpp, compile_cuda
from tools.spec import Task, load_task, numpy_dtype
from tools.verify.inputs import generate_inputs, scalar_values

KERNELS = Path(__file__).parent / "kernels"
KERNEL_DIRS = sorted(p for p in KERNELS.iterdir() if (p / "task.json").is_file())
NAMES = [p.name for p in KERNEL_DIRS]
OUTPUT_ROLES = ("output", "inout")
SEEDS = (42, 7)


def _task(name: str) -> Task:
    return load_task(KERNELS / name / "task.json")


def _tasks_with(kind: str) -> list[str]:
    return [n for n in NAMES if _task(n).reference.kind == kind]


def _outputs(task: Task):
    return [b for b in task.buffers if b.role in OUTPUT_ROLES]


def test_corpus_has_at_least_sixty_kernels():
    assert len(KERNEL_DIRS) >= 60, f"only {len(KERNEL_DIRS)} kernels in {KERNELS}"
    strays = [p.name for p in KERNELS.iterdir() if p.is_dir() and not (p / "task.json").is_file() and p.name != "__pycache__"]
    assert not strays, f"kernel directories without task.json: {strays}"


@pytest.mark.parametrize("name", NAMES)
def test_task_loads_and_is_consistent(name):
    task = _task(name)
    assert task.name == name, "task name must equal its directory name"
    assert task.cuda == "kernel.cu"
    assert task.launches, "every corpus task lists its launches"
    assert task.reference.kind in ("python", "c")
    assert task.category and task.description
    source = task.source()
    assert "__global__" in source
    for launch in task.launches:
        assert re.search(rf"\b{re.escape(launch.kernel)}\b", source), f"kernel {launch.kernel} not in kernel.cu"
        grid, block = launch.dims()
        assert all(d >= 1 for d in grid + block)
        assert block[0] * block[1] * block[2] <= 1024
    for buf in task.buffers:
        if buf.role == "input" and buf.init:
            pytest.fail(f"input buffer {buf.name} has an init setting (only outputs are poisoned or zeroed)")
    if task.reference.kind == "python":
        module, _, function = (task.reference.function or "").partition(":")
        assert module == "ref" and function, "python references are 'ref:<function>' in ref.py"
        assert (KERNELS / name / "ref.py").is_file()
    else:
        assert task.reference.path == "ref.c" and task.reference.args
        known = {b.name for b in task.buffers} | {s.name for s in task.scalars}
        assert set(task.reference.args) <= known


def _nvcc_check(box: LocalSandbox, name: str) -> str | None:
    box.put_path(KERNELS / name / "kernel.cu", f"{name}/kernel.cu")
    build = compile_cuda(box, [f"{name}/kernel.cu"], f"{name}/kernel.ptx", ptx_only=True, flags=["-std=c++17"])
    return None if build.ok else f"{name}:\n{build.summary(5)}"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_every_kernel_passes_nvcc_ptx():
    box = LocalSandbox()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            failures = [f for f in pool.map(lambda n: _nvcc_check(box, n), NAMES) if f]
    finally:
        box.close()
    assert not failures, "nvcc -ptx failed:\n" + "\n".join(failures)


def _load_reference(name: str):
    task = _task(name)
    module, _, function = task.reference.function.partition(":")
    spec = importlib.util.spec_from_file_location(f"corpus_ref_{name}", KERNELS / name / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return task, getattr(mod, function)


@pytest.mark.parametrize("name", _tasks_with("python"))
def test_python_reference_returns_every_output(name):
    task, fn = _load_reference(name)
    for seed in SEEDS:
        inputs = generate_inputs(task, seed)
        kept = {k: v.copy() for k, v in inputs.items()}
        result = fn(inputs, scalar_values(task))
        assert isinstance(result, dict)
        for buf in _outputs(task):
            assert buf.name in result, f"reference did not return {buf.name}"
            arr = np.asarray(result[buf.name])
            assert arr.dtype == numpy_dtype(buf.dtype), f"{buf.name}: dtype {arr.dtype}, task says {buf.dtype}"
            assert arr.size == buf.size and arr.reshape(buf.shape).shape == tuple(buf.shape)
            if arr.dtype.kind == "f" and task.inputs.distribution != "special" and not _special_inputs(task):
                assert np.isfinite(arr).all(), f"{buf.name}: non-finite values from ordinary inputs"
        for k in kept:
            if task.buffer(k).role == "input":
                assert np.array_equal(kept[k], inputs[k], equal_nan=True), f"reference modified input {k}"
        again = fn({k: v.copy() for k, v in kept.items()}, scalar_values(task))
        for buf in _outputs(task):
            assert np.array_equal(np.asarray(result[buf.name]), np.asarray(again[buf.name]), equal_nan=True), \
                f"{buf.name}: the reference is not deterministic"


def _special_inputs(task: Task) -> bool:
    return any(b.inputs and b.inputs.distribution == "special" for b in task.buffers)


def _compile_c_reference(box: LocalSandbox, name: str) -> str | None:
    box.put_path(KERNELS / name / "ref.c", f"{name}/ref.c")
    build = compile_cpp(box, [f"{name}/ref.c"], f"{name}/libref.so", cxx="gcc", shared=True,
                        flags=["-O2", "-std=gnu11", "-Wall", "-Wextra", "-Werror"], extra=["-lm"])
    return None if build.ok else f"{name}:\n{build.summary(5)}"


_CTYPES = {"float32": ctypes.c_float, "float64": ctypes.c_double, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
           "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "int8": ctypes.c_int8, "bool": ctypes.c_bool}


def _call_c_reference(lib_path: Path, task: Task, seed: int) -> dict[str, np.ndarray]:
    """Call the reference on generated inputs, outputs pre-filled with a NaN/0x7f sentinel."""
    lib = ctypes.CDLL(str(lib_path))
    fn = getattr(lib, task.reference.function)
    fn.restype = None
    inputs = generate_inputs(task, seed)
    scalars = scalar_values(task)
    arrays, args = {}, []
    for buf in task.buffers:
        if buf.name in inputs:
            arrays[buf.name] = np.ascontiguousarray(inputs[buf.name])
        elif numpy_dtype(buf.dtype).kind == "f":
            arrays[buf.name] = np.full(buf.shape, np.nan, dtype=numpy_dtype(buf.dtype))
        else:
            arrays[buf.name] = np.full(buf.size * numpy_dtype(buf.dtype).itemsize, 0x7F, dtype=np.uint8).view(
                numpy_dtype(buf.dtype)).reshape(buf.shape)
    for arg in task.reference.args:
        if arg in arrays:
            args.append(arrays[arg].ctypes.data_as(ctypes.c_void_p))
        else:
            dtype = next(s.dtype for s in task.scalars if s.name == arg)
            args.append(_CTYPES[dtype](scalars[arg]))
    fn(*args)
    return arrays


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")
def test_c_references_compile_cleanly_and_write_every_output():
    names = _tasks_with("c")
    assert names, "the corpus has C references"
    box = LocalSandbox()
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            failures = [f for f in pool.map(lambda n: _compile_c_reference(box, n), names) if f]
        assert not failures, "gcc -Wall -Wextra -Werror failed:\n" + "\n".join(failures)
        for name in names:
            task = _task(name)
            arrays = _call_c_reference(box.workdir / name / "libref.so", task, SEEDS[0])
            for buf in _outputs(task):
                arr = arrays[buf.name]
                if arr.dtype.kind == "f":
                    assert not np.isnan(arr).any(), f"{name}: {buf.name} has elements the reference never wrote"
                else:
                    sentinel = np.full(1, 0x7F, dtype=np.uint8).repeat(arr.itemsize).view(arr.dtype)[0]
                    assert not (arr == sentinel).any(), f"{name}: {buf.name} has elements the reference never wrote"
    finally:
        box.close()


# Features the compiler must handle, each present in at least one kernel (the corpus README lists them).
REQUIRED_TOKENS = [
    "__syncthreads", "extern __shared__", "__constant__", "__device__", "template <", "__launch_bounds__",
    "#pragma unroll", "__ldg", "__restrict__", "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__ballot_sync", "__any_sync", "__all_sync", "__activemask", "__popc", "atomicAdd", "atomicSub", "atomicMax",
    "atomicMin", "atomicExch", "atomicCAS", "atomicAnd", "atomicOr", "atomicXor", "atomicInc", "float4", "float2",
    "int4", "make_float4", "__half", "__nv_bfloat16", "__expf", "__fdividef", "rsqrtf", "fmaf", "__saturatef",
    "__float2int_rn", "volatile", "blockIdx.z", "threadIdx.z", "gridDim.x * blockDim.x",
]


def test_corpus_covers_the_required_features():
    sources = {n: (KERNELS / n / "kernel.cu").read_text() for n in NAMES}
    everything = "\n".join(sources.values())
    missing = [t for t in REQUIRED_TOKENS if t not in everything and t.replace(" ", "") not in everything]
    assert not missing, f"no corpus kernel uses: {missing}"
    tasks = [_task(n) for n in NAMES]
    assert any(len(t.launches) >= 3 for t in tasks), "a task with three or more launches"
    assert any(any(l.template_args for l in t.launches) for t in tasks), "a templated launch"
    assert any(any(l.shared_bytes for l in t.launches) for t in tasks), "a launch with dynamic shared memory"
    dtypes = {b.dtype for t in tasks for b in t.buffers}
    assert {"float16", "bfloat16", "float64", "uint32", "uint8", "int32"} <= dtypes
    assert any(b.init == "zeros" for t in tasks for b in t.buffers), "a zero-initialised (cudaMemset) output"
    assert any(b.role == "scratch" for t in tasks for b in t.buffers)
    assert any(b.inputs and b.inputs.distribution == "special" for t in tasks for b in t.buffers)


def test_readme_lists_every_kernel():
    readme = (KERNELS / "README.md").read_text()
    missing = [n for n in NAMES if f"`{n}`" not in readme]
    assert not missing, f"tests/kernels/README.md does not list: {missing}"
