"""tools/optimize/block_scans.py: a launch whose kernel is linear in the data it reads (index-only
control flow and addresses, data only added, moved or scaled by indices) and that fits a
segmented prefix sum is replaced by one running sum per segment. The corpus' Hillis-Steele
(inclusive, one element per thread, double-buffered shared memory) and Blelloch (exclusive, two
per thread, up- and down-sweep), a warp-shuffle scan over floats and TVM's cumsum along a row
are recognized: each scan that fits is an alternative, and the first that matches the reference
is kept. Kernels whose data steer control flow or addresses, or meet anything nonlinear, are
refused before anything is built; a linear kernel that is no scan keeps its code. Real libclang,
g++ and sandbox; no timing (speed: scripts/bench_speed.py --corpus --only-sync)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.cuda import frontend as fe
from tools.cuda import lower_task
from tools.optimize.base import Context
from tools.optimize.passes.block_scans import BLOCK_SCANS, block_scans, is_linear
from tools.optimize.search import Budget, _first_correct, search
from tools.spec import load_task
from tools.verify import check

SEEDS = [8642, 8643]
KERNELS = Path(__file__).resolve().parent / "kernels"
HILLIS_STEELE = (KERNELS / "scan_hillis_steele" / "kernel.cu").read_text()  # blocks of 256, one element each
BLELLOCH = (KERNELS / "scan_blelloch" / "kernel.cu").read_text()  # two elements per thread
WARP_FLOATS = r"""
__global__ void scan(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float v = i < n ? in[i] : 0.0f;
    for (int d = 1; d < 32; d <<= 1) {
        float up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    if (i < n) out[i] = v;
}
"""
# TVM's cumsum along the last axis: each thread sums its row up to its column (O(W^2) per row)
ROWS = r"""
__global__ void scan(const float* in, float* out) {
    int e = blockIdx.x * 256 + threadIdx.x;
    if (e < 37 * 45) {
        out[e] = 0.0f;
        for (int k = 0; k < 45; ++k) {
            float v = k <= e % 45 ? in[(e / 45) * 45 + k] : 0.0f;
            out[e] = out[e] + v;
        }
    }
}
"""
REF = """
import numpy as np

def _segments(x, length, inclusive):
    out = np.zeros_like(x)
    for s in range(0, len(x), length):
        part = x[s:s + length].astype(np.int64 if x.dtype.kind == "i" else np.float64)
        sums = np.cumsum(part)
        out[s:s + length] = sums if inclusive else np.concatenate([[0], sums[:-1]])
    return out

def inclusive_256(inputs, scalars):
    return {"out": _segments(inputs["inp"], 256, True)}

def exclusive_128(inputs, scalars):
    return {"out": _segments(inputs["inp"], 128, False)}

def inclusive_32(inputs, scalars):
    return {"out": _segments(inputs["inp"], 32, True)}

def rows(inputs, scalars):
    return {"out": np.cumsum(inputs["inp"].astype(np.float64), axis=-1).astype(np.float32)}
"""


def _task(tmp_path: Path, cuda: str, ref: str, *, dtype="int32", block=256, grid=4, shared=0, n=1000, shape=None):
    (tmp_path / "scan.cu").write_text(cuda)
    (tmp_path / "scan_ref.py").write_text(REF)
    inputs = {"distribution": "randint", "low": -1000, "high": 1000} if dtype == "int32" else {}
    raw = {"name": "scan", "cuda": "scan.cu",
           "buffers": [{"name": "inp", "dtype": dtype, "shape": shape or [n], "role": "input",
                        **({"inputs": inputs} if inputs else {})},
                       {"name": "out", "dtype": dtype, "shape": shape or [n], "role": "output"}],
           "scalars": [] if shape else [{"name": "n", "dtype": "int32", "value": n}],
           "launches": [{"kernel": re.search(r"__global__ void (\w+)", cuda)[1], "grid": [grid], "block": [block], "shared_bytes": shared,
                         "args": ["inp", "out"] + ([] if shape else ["n"])}],
           "reference": {"kind": "lowered"} if ref == "lowered" else {"kind": "python", "function": f"scan_ref:{ref}"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-4}}
    (tmp_path / "scan.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "scan.json")


def _kernel(task):
    return fe.parse_translation(task.source(), str(task.source_path())).kernels[task.launches[0].kernel]


@pytest.mark.parametrize("cuda, ref, options, describes", [
    (HILLIS_STEELE, "inclusive_256", {}, "out = inclusive scan of inp in segments of 256 (first 1000 elements)"),
    (BLELLOCH, "exclusive_128", {"block": 64, "grid": 16, "shared": 512},
     "out = exclusive scan of inp in segments of 128 (first 1000 elements)"),
    (WARP_FLOATS, "inclusive_32", {"dtype": "float32", "block": 32, "grid": 32}, "inclusive scan of inp in segments of 32"),
    (ROWS, "rows", {"dtype": "float32", "block": 256, "grid": 7, "shape": [37, 45]}, "inclusive scan of inp in segments of 45"),
])
def test_block_scans_become_running_sums(tmp_path, box, cuda, ref, options, describes):
    task = _task(tmp_path, cuda, ref, **options)
    assert is_linear(_kernel(task))
    alternatives = block_scans(Context(task), lower_task(task))
    assert alternatives is not None
    chosen, why = _first_correct(task, alternatives, box, SEEDS)
    assert chosen is not None, why
    assert describes in chosen and "cudaopt_scan_0(inp, out);" in chosen
    assert "void scan(dim3" not in chosen  # the lowered kernel is gone
    report = check(task, chosen, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_integer_sums_wrap_as_on_the_gpu(tmp_path, box):
    task = _task(tmp_path, HILLIS_STEELE, "inclusive_256")
    chosen, _ = _first_correct(task, block_scans(Context(task), lower_task(task)), box, SEEDS)
    assert chosen is not None and "typedef uint32_t A;" in chosen  # no signed overflow in C++


def test_integer_inputs_of_few_values_prove_nothing(tmp_path):
    task = _task(tmp_path, HILLIS_STEELE, "inclusive_256")
    few = task.model_copy(update={"buffers": [b.model_copy(update={"inputs": None}) for b in task.buffers]})
    assert block_scans(Context(task), lower_task(task)) is not None
    assert block_scans(Context(few), lower_task(few)) is None  # the default inputs: -1, 0 and 1


def test_a_linear_kernel_that_is_no_scan_keeps_its_code(tmp_path, box):
    neighbours = HILLIS_STEELE.replace("if (tid >= offset)", "if (tid >= offset && offset == 1)")
    task = _task(tmp_path, neighbours, "lowered")  # the kernel itself is the reference
    result = search(task, lower_task(task), box, budget=Budget(max_variants=1, seeds=1), transforms=[BLOCK_SCANS])
    assert result.steps[0].outcome == "incorrect" and "alternatives matched" in result.steps[0].detail
    assert not result.applied and "cudaopt_scan" not in result.code


@pytest.mark.parametrize("old, new", [
    ("if (tid >= offset)", "if (v > 0)"),  # data as a condition
    ("v += buf[pin][tid - offset];", "v += buf[pin][v & 255];"),  # data as an address
    ("v += buf[pin][tid - offset];", "v *= buf[pin][tid - offset];"),  # data times data
    ("v += buf[pin][tid - offset];", "v += max(buf[pin][tid - offset], 0);"),
    ("v += buf[pin][tid - offset];", "v += buf[pin][tid - offset] / 2;"),
    ("out[i] = buf[pout][tid];", "atomicAdd(&out[i], buf[pout][tid]);"),
    ("v += buf[pin][tid - offset];", "v = buf[pin][tid - offset];"),  # moves, no sums
])
def test_kernels_whose_data_do_more_than_add_are_refused(tmp_path, old, new):
    assert old in HILLIS_STEELE
    task = _task(tmp_path, HILLIS_STEELE.replace(old, new), "inclusive_256")
    assert not is_linear(_kernel(task))
    assert block_scans(Context(task), lower_task(task)) is None
