"""MetaSchedule-tuned C references: verified, self-contained, OpenMP where TVM parallelised.

The generation test tunes one small matmul with a 4-trial budget on this machine (TVM's
MetaSchedule, in process). Skipped (with the reason printed) where TVM is not installed.
"""

import io
import json
import subprocess

import pytest
from rich.console import Console

from bench.csource import make_self_contained

from tvm_support import TVM_MISSING, announce, needs_tvm

announce("test_bench_tune")

TRIALS = 4


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    from agent.commands.bench import generate

    out = tmp_path_factory.mktemp("tuned")
    console = Console(file=io.StringIO(), width=200)
    status = generate(out, ops=["matmul"], graphs=0, seed=3, pairs=False, console=console, per_op=1,
                      tune_trials=TRIALS)
    assert status == 0, console.file.getvalue()
    return out


@needs_tvm
def test_tuned_reference_is_verified_and_self_contained(tuned, tmp_path):
    from bench.format import load_records

    [rec] = load_records(tuned / "compute.json")
    assert rec.check is not None and rec.check.max_abs_err < 1e-3
    assert "TVM" not in rec.c_code and "DLTensor" not in rec.c_code
    # Whether the fastest of 4 random candidates is parallel (and beats the default C) depends
    # on the machine's timings; test_parallel_schedule_becomes_openmp_c pins that path down.
    src = tmp_path / "ref.c"
    src.write_text(rec.c_code)
    # Self-contained: gcc alone, as the evaluation builds references.
    proc = subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-Wall", "-Werror=implicit-function-declaration",
                           "-c", str(src), "-o", str(tmp_path / "ref.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@needs_tvm
def test_manifest_records_trials_and_machine(tuned):
    manifest = json.loads((tuned / "manifest.json").read_text())
    tuning = manifest["cpu_tuning"]
    assert tuning["trials"] == TRIALS
    assert tuning["target"]["kind"] == "llvm" and tuning["target"]["mcpu"] and tuning["machine"]
    [(name, outcome)] = tuning["workloads"].items()
    assert name.startswith("matmul_") and 1 <= outcome["trials"] <= TRIALS and outcome["best_us"] > 0
    # The C of MetaSchedule's best schedules was generated, verified and timed; the fastest is
    # kept only where it beats the default C.
    assert outcome["c_us"] > 0 and outcome["default_c_us"] > 0 and 0 <= outcome["rank"] < 3
    assert outcome["applied"] == (outcome["c_us"] < outcome["default_c_us"]) == (tuning["applied"] == 1)
    assert f"{TRIALS} MetaSchedule trials" in manifest["cpu_schedule"]


@needs_tvm
def test_tuned_reference_rechecks_without_tvm(tuned):
    """The stored statistics hold for the OpenMP build (bench.check compiles with -fopenmp)."""
    from bench.check import check_records
    from bench.format import load_records

    assert check_records(load_records(tuned / "compute.json")) == {}


@needs_tvm
def test_parallel_schedule_becomes_openmp_c(tmp_path):
    """A parallel, vectorised schedule: OpenMP on the parallel loop, and the C matches numpy."""
    import numpy as np
    import tvm
    from tvm import te

    from bench import tvmgen
    from bench.check import compare, compile_batch, run_reference

    a = te.placeholder((64, 32), name="A")
    b = te.placeholder((32, 48), name="B")
    k = te.reduce_axis((0, 32), name="k")
    c = te.compute((64, 48), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    work = tvmgen.Workload(name="mm_0", op_name="matmul", category="compute", op_args={}, inputs=[a, b], outputs=[c])
    sch = tvm.s_tir.Schedule(tvmgen.ir_module(work))
    block = sch.get_sblock("C", func_name="mm_0")
    i, j, r = sch.get_loops(block)
    i_outer, i_inner = sch.split(i, [4, None])
    j_outer, j_inner = sch.split(j, [None, 16])
    sch.reorder(i_outer, i_inner, j_outer, r, j_inner)
    sch.parallel(i_outer)
    init = sch.decompose_reduction(block, r)
    sch.vectorize(sch.get_loops(init)[-1])

    code = tvmgen.scheduled_c(sch.mod, work)
    assert code.count("#pragma omp parallel for") == 1
    assert "#pragma omp parallel for\n  for (int32_t par0_i_0 = 0; par0_i_0 < 4;" in code
    rng = np.random.default_rng(0)
    inputs = [rng.uniform(-1, 1, (64, 32)).astype("float32"), rng.uniform(-1, 1, (32, 48)).astype("float32")]
    lib = compile_batch({"mm_0": code}, tmp_path)
    [got] = run_reference(lib, "mm_0", inputs, [[64, 48]], ["float32"])
    compare([got], [inputs[0] @ inputs[1]])


@needs_tvm
def test_sibling_parallel_loops_sharing_a_name_each_get_openmp(tmp_path):
    """Two stages whose outer loops are both parallel and both named i0 (TVM's C target would
    print the second as i0_1): each is an OpenMP loop, the inner ones stay serial."""
    import numpy as np
    import tvm
    from tvm import te

    from bench import tvmgen
    from bench.check import compare, compile_batch, run_reference

    x = te.placeholder((32, 16), name="x")
    doubled = te.compute((32, 16), lambda i0, i1: x[i0, i1] * 2.0, name="doubled")
    total = te.compute((32, 16), lambda i0, i1: doubled[i0, i1] + 1.0, name="total")
    work = tvmgen.Workload(name="two_0", op_name="two", category="elementwise", op_args={}, inputs=[x], outputs=[total])
    sch = tvm.s_tir.Schedule(tvmgen.ir_module(work))
    for name in ("doubled", "total"):
        sch.parallel(sch.get_loops(sch.get_sblock(name, func_name="two_0"))[0])
    code = tvmgen.scheduled_c(sch.mod, work)
    assert code.count("#pragma omp parallel for\n  for (int32_t par") == 2
    assert code.count("#pragma omp") == 2
    data = np.random.default_rng(1).uniform(-1, 1, (32, 16)).astype("float32")
    lib = compile_batch({"two_0": code}, tmp_path)
    [got] = run_reference(lib, "two_0", [data], [[32, 16]], ["float32"])
    compare([got], [data * 2 + 1])


@needs_tvm
def test_broken_serialisation_is_one_clear_error(tmp_path, monkeypatch):
    """Where TVM's JSON serialisation crashes (apache-tvm-ffi 0.1.15 under apache-tvm 0.27.0.post1),
    tuning stops before any work with one message naming the cause and the fix."""
    from agent.commands.bench import generate
    from agent.errors import UserError
    from bench import tvmgen

    monkeypatch.setattr(tvmgen, "_PROBE", "import ctypes; ctypes.string_at(0)")  # a real segfault in the child
    monkeypatch.setattr(tvmgen, "_probed", False)
    monkeypatch.setattr(tvmgen, "_probe_error", None)
    with pytest.raises(UserError, match=r"segfaults.*apache-tvm-ffi==0\.1\.14"):
        generate(tmp_path, ops=["relu"], graphs=0, seed=0, pairs=False, console=Console(file=io.StringIO()),
                 tune_trials=2)
    assert not (tmp_path / "manifest.json").exists()


def test_negative_budget_is_rejected(tmp_path):
    from agent.commands.bench import generate
    from agent.errors import UserError

    if TVM_MISSING:
        pytest.skip(TVM_MISSING)
    with pytest.raises(UserError, match="--tune-trials must be >= 0"):
        generate(tmp_path, ops=["relu"], graphs=0, seed=0, pairs=False, console=Console(file=io.StringIO()),
                 tune_trials=-1)


# The shape of TVM's C-target output for a tuned schedule (trimmed): the parallel loop is printed serial.
TUNED_C = r'''// tvm target: {"kind":"c","tag":"","keys":["cpu"]}
#include "tvm/runtime/c_backend_api.h"
TVM_DLL int32_t __tvm_ffi_scale(void* self_handle, void* args, int32_t num_args, void* result) {
  void* x_handle = (((TVMFFIAny*)args)[0].v_ptr);
  void* y_handle = (((TVMFFIAny*)args)[1].v_ptr);
  int32_t dev_id = (((DLTensor*)x_handle)[0].device.device_id);
  float* x = ((float*)((float*)(((DLTensor*)x_handle)[0].data)));
  float* y = ((float*)((float*)(((DLTensor*)y_handle)[0].data)));
  for (int32_t i_0_fused = 0; i_0_fused < 4; ++i_0_fused) {
    float* tmp = ((float*)((float*)TVMBackendAllocWorkspace(1, dev_id, (uint64_t)64ULL, 2, 32)));
    if (tmp == NULL) {
      return -1;
    }
    for (int32_t i_1 = 0; i_1 < 16; ++i_1) {
      tmp[i_1] = x[((i_0_fused * 16) + i_1)] * 2.0f;
      y[((i_0_fused * 16) + i_1)] = tmp[i_1];
    }
    if (TVMBackendFreeWorkspace(1, dev_id, tmp) != 0) {
      return -1;
    }
  }
  return 0;
}
'''


def test_parallel_loops_become_openmp_loops(tmp_path):
    code = make_self_contained(TUNED_C, "scale_0", [("x", "float32"), ("y", "float32")], parallel=["i_0_fused"])
    assert "  #pragma omp parallel for\n  for (int32_t i_0_fused = 0;" in code
    assert code.count("#pragma omp") == 1  # the inner loop stays serial
    assert "return" not in code  # no return may leave an OpenMP loop: a failed malloc aborts
    assert "malloc(64ULL)" in code and "free(tmp);" in code and "abort();" in code
    src = tmp_path / "ref.c"
    src.write_text(code)
    proc = subprocess.run(["gcc", "-fopenmp", "-Wall", "-Werror", "-c", str(src), "-o", str(tmp_path / "ref.o")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_untuned_source_gets_no_openmp():
    code = make_self_contained(TUNED_C, "scale_0", [("x", "float32"), ("y", "float32")])
    assert "#pragma omp" not in code and "return;" in code
