"""Every reference kind: c and python (in test_verify_check), golden, cuda (recorded / live), lowered."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tools.build import compile_cuda
from tools.spec import load_task, parse_task
from tools.verify import VerifyError, check, generate_inputs, gpu_available
from tools.verify.cuda_driver import cuda_driver_source
from tools.verify.references import golden_path, read_golden, write_golden

FIX = Path(__file__).parent / "verify_fixtures"
VADD_OK = """
#include <cstdint>
extern "C" void vadd(float* a, float* b, float* c, int32_t n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
"""
GPU, NO_GPU_REASON = gpu_available()


def vadd_task_with(tmp_path: Path, reference: dict) -> Path:
    """A copy of the vadd fixture whose reference is `reference`."""
    shutil.copy(FIX / "vadd" / "kernel.cu", tmp_path / "kernel.cu")
    raw = json.loads((FIX / "vadd" / "task.json").read_text())
    raw["reference"] = reference
    path = tmp_path / "task.json"
    path.write_text(json.dumps(raw))
    return path


def record_as_if_on_gpu(task_dir: Path, seeds, filename: str = "vadd.golden.npz") -> Path:
    """Write the golden file a GPU run would have recorded (the outputs computed with numpy)."""
    raw = json.loads((FIX / "vadd" / "task.json").read_text())
    task = parse_task(raw, base_dir=FIX / "vadd")
    by_seed = {}
    for seed in seeds:
        inputs = generate_inputs(task, seed)
        by_seed[seed] = (inputs, {"c": (inputs["a"] + inputs["b"]).astype(np.float32)})
    write_golden(task_dir / filename, task, by_seed)
    return task_dir / filename


def test_golden_reference(box, tmp_path):
    record_as_if_on_gpu(tmp_path, [42, 43], "vadd_outputs.npz")
    task = load_task(vadd_task_with(tmp_path, {"kind": "golden", "path": "vadd_outputs.npz"}))
    assert golden_path(task) == tmp_path / "vadd_outputs.npz"
    r = check(task, VADD_OK, box)
    assert r.status == "correct" and r.reference_kind == "golden"
    assert r.seeds == [42, 43]  # only the recorded seeds are used
    wrong = check(task, VADD_OK.replace("a[i] + b[i]", "a[i] - b[i]"), box, seeds=[43])
    assert wrong.status == "incorrect" and wrong.mismatches[0].seed == 43
    with pytest.raises(VerifyError, match=r"no golden outputs for seeds \[7\] \(recorded seeds: 42, 43"):
        check(task, VADD_OK, box, seeds=[7])


def test_golden_detects_changed_inputs(box, tmp_path):
    record_as_if_on_gpu(tmp_path, [42])
    path = vadd_task_with(tmp_path, {"kind": "golden"})
    raw = json.loads(path.read_text())
    raw["inputs"]["high"] = 5.0  # inputs differ from those the outputs were recorded for
    path.write_text(json.dumps(raw))
    with pytest.raises(VerifyError, match="recorded for different inputs"):
        check(load_task(path), VADD_OK, box, seeds=[42])


def test_cuda_reference_without_gpu_uses_recorded_outputs(box, tmp_path):
    if GPU:
        pytest.skip("a GPU is present: the live test covers this machine")
    task = load_task(vadd_task_with(tmp_path, {"kind": "cuda"}))
    with pytest.raises(VerifyError, match=r"needs a GPU .*no GPU.*no recorded outputs"):
        check(task, VADD_OK, box)
    record_as_if_on_gpu(tmp_path, [42, 43, 44])
    r = check(task, VADD_OK, box)
    assert r.status == "correct" and r.reference_kind == "cuda"
    assert any("recorded on a GPU" in n for n in r.notes)


@pytest.mark.skipif(not GPU, reason=f"live cuda reference needs a GPU: {NO_GPU_REASON}")
def test_cuda_reference_live_records_golden(box, tmp_path):
    task = load_task(vadd_task_with(tmp_path, {"kind": "cuda"}))
    r = check(task, VADD_OK, box)
    assert r.status == "correct" and r.reference_kind == "cuda"
    recorded = read_golden(tmp_path / "vadd.golden.npz")
    assert {"c@42", "c@43", "c@44"} <= set(recorded)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
@pytest.mark.parametrize("task_file", [FIX / "scale_count" / "task.json",
                                       FIX.parent / "optimize_fixtures" / "exact_alias_shift" / "task.json"])
def test_cuda_driver_compiles_with_nvcc(box, task_file):
    """The generated driver for the GPU run is valid CUDA (compiled, not run, where no GPU is),
    launch arguments that offset a buffer (`a + 1`) included."""
    task = load_task(task_file)
    box.put({"cu/kernel.cu": task.source(), "cu/driver.cu": cuda_driver_source(task, "kernel.cu")})
    build = compile_cuda(box, ["cu/driver.cu"], "cu/driver.o", flags=["-O0", "-std=c++17", "-c"])
    assert build.ok, build.summary()


def test_lowered_reference(box, tmp_path):
    task = load_task(vadd_task_with(tmp_path, {"kind": "lowered"}))
    r = check(task, VADD_OK, box)
    assert r.status == "correct" and r.reference_kind == "lowered"
    assert any("weakest" in n for n in r.notes)
    wrong = check(task, VADD_OK.replace("a[i] + b[i]", "a[i] * b[i]"), box, seeds=[42], threads=[1])
    assert wrong.status == "incorrect"


ILL_CONDITIONED = r"""
__global__ void relax(int n, const float* b, const float* g, const float* volt, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float cur = b[i] + g[i] * 0.37f;  // one fused multiply-add where the machine has one
  float dV = 0.01f * (cur - volt[i]);
  out[i] = 2.f + 0.1f * (1.f - (volt[i] + dV - 1.f) / dV);  // divides by a difference of near-equal values
}
"""


def test_the_lowered_reference_rounds_as_the_ports_build_does(box, tmp_path):
    """The faithful lowering itself, checked against the lowered reference, is correct: both are
    built for this machine, so `b + g * 0.37f` is one fused multiply-add in both (built at -O0 the
    reference rounded it twice, and the quotients of near-equal differences came out 10% apart)."""
    from tools.cuda import lower_task

    (tmp_path / "relax.cu").write_text(ILL_CONDITIONED)
    n = 1 << 20
    raw = {"name": "relax", "cuda": "relax.cu",
           "buffers": [{"name": x, "dtype": "float32", "shape": [n], "role": "input"} for x in ("b", "g", "volt")]
           + [{"name": "out", "dtype": "float32", "shape": [n], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": n}],
           "launches": [{"kernel": "relax", "grid": [n // 256], "block": [256], "args": ["n", "b", "g", "volt", "out"]}],
           "reference": {"kind": "lowered"}}
    (tmp_path / "relax.json").write_text(json.dumps(raw))
    task = load_task(tmp_path / "relax.json")
    report = check(task, lower_task(task), box, seeds=[1, 2], threads=[2])
    assert report.status == "correct", report.summary()
