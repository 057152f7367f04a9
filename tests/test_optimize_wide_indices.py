"""tools/optimize/wide_indices.py: subscripts built in unsigned 32-bit arithmetic (the CUDA idiom
`unsigned int i = blockIdx.x * blockDim.x * 2 + threadIdx.x`) computed in 64 bits, so that g++
can vectorize the thread loop. The rewrite is exact only while the subscript's bound stays below
2^31. So the rewritten kernel checks the bound per call, and above it runs its unchanged copy:
a launch where the 32-bit subscript wraps keeps the wrapped result. Real g++, real sandbox; no
timing (speed: scripts/bench_speed.py --corpus --only-sync)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context, NotApplicable
from tools.optimize.passes.wide_indices import wide_indices
from tools.spec import load_task
from tools.verify import check

SEEDS = [1357, 1358]
TREE = r"""
__global__ void block_sums(const float* x, float* partial, int n) {
    __shared__ float s[128];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    float v = 0.0f;
    if (i < n) v = x[i];
    if (i + blockDim.x < n) v += x[i + blockDim.x];
    s[tid] = v;
    __syncthreads();
    for (unsigned int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (tid < h) s[tid] += s[tid + h];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}
"""
TREE_REF = """
import numpy as np

def block_sums(inputs, scalars):
    x = np.zeros(40 * 256, np.float64)
    x[:10000] = inputs["x"]
    return {"partial": x.reshape(40, 256).sum(axis=1).astype(np.float32)}
"""
# i * 4096u wraps in 32 bits once i reaches 2^20: the 32-bit subscript is then i mod 2^20
WRAPS = r"""
__global__ void spread(const float* x, float* y, int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i * 4096u / 4096u] = 2.0f * x[i * 4096u / 4096u];
}
"""


def _tree_task(tmp_path: Path, cuda: str = TREE):
    (tmp_path / "tree.cu").write_text(cuda)
    (tmp_path / "tree_ref.py").write_text(TREE_REF)
    raw = {"name": "block_sums", "cuda": "tree.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [10000], "role": "input"},
                       {"name": "partial", "dtype": "float32", "shape": [40], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": 10000}],
           "launches": [{"kernel": "block_sums", "grid": [40], "block": [128], "args": ["x", "partial", "n"]}],
           "reference": {"kind": "python", "function": "tree_ref:block_sums"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-4}}
    (tmp_path / "tree.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "tree.json")


def _spread_task(tmp_path: Path, name: str, grid: int, n: int):
    (tmp_path / "spread.cu").write_text(WRAPS)
    raw = {"name": name, "cuda": "spread.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [n], "role": "input"},
                       {"name": "y", "dtype": "float32", "shape": [n], "role": "inout"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": n}],
           "launches": [{"kernel": "spread", "grid": [grid], "block": [256], "args": ["x", "y", "n"]}],
           "reference": {"kind": "lowered"},
           "tolerance": {"rtol": 0, "atol": 0}}
    (tmp_path / f"{name}.json").write_text(json.dumps(raw))
    return load_task(tmp_path / f"{name}.json")


def test_unsigned_subscripts_become_64_bit_and_stay_correct(tmp_path, box):
    task = _tree_task(tmp_path)
    new = wide_indices(Context(task), lower_task(task))
    assert new is not None
    wide = "x[((std::size_t)blockIdx.x * (std::size_t)blockDim.x * 2 + (std::size_t)threadIdx.x) + (std::size_t)blockDim.x]"
    assert wide in new
    assert "void block_sums_cudaopt_narrow(" in new and "return block_sums_cudaopt_narrow(gridDim, blockDim, 0, x, partial, n);" in new
    # h only shrinks from blockDim.x / 2 (the loop around the thread loop halves it): bounded by its first value
    assert "s[((std::size_t)threadIdx.x) + (std::size_t)h]" in new
    assert "if (i + blockDim.x < n)" in new  # conditions keep their 32-bit arithmetic
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_a_launch_past_the_bound_runs_the_unchanged_copy(tmp_path, box):
    small = _spread_task(tmp_path, "small", grid=4, n=1000)
    big = _spread_task(tmp_path, "big", grid=4098, n=2**20 + 512)  # i reaches 2^20: the subscript wraps
    with pytest.raises(NotApplicable, match="that the task's launches keep below 2\\^31"):
        wide_indices(Context(big), lower_task(big))  # the task's own launch is past the bound
    # lowered for the big launch, rewritten where the small one proves the bound
    new = wide_indices(Context(small), lower_task(big))
    assert new is not None and "y[((std::size_t)blockIdx.x * (std::size_t)blockDim.x + (std::size_t)threadIdx.x) * 4096u / 4096u]" in new
    report = check(big, new, box, seeds=SEEDS[:1], threads=[2])
    assert report.correct, report.summary()
    # without its check the 64-bit subscript reaches elements the 32-bit one never writes
    start = new.index("    if (!(", new.index("void spread("))
    unchecked = new[:start] + new[new.index("\n", new.index("return spread_cudaopt_narrow", start)) + 1:]
    assert "return spread_cudaopt_narrow" not in unchecked.split("void spread(")[-1]
    report = check(big, unchecked, box, seeds=SEEDS[:1], threads=[2])
    assert report.status == "incorrect" and "output 'y'" in report.summary(), report.summary()


def test_left_alone_where_the_bound_is_unknown(tmp_path):
    changed = TREE.replace("    float v = 0.0f;\n", "    i += n % 2;\n    float v = 0.0f;\n")
    subtracted = TREE.replace("x[i + blockDim.x]", "x[i + blockDim.x - 1]").replace("v = x[i];", "v = x[i - 1];")
    for cuda in (changed, subtracted):
        task = _tree_task(tmp_path, cuda)
        new = wide_indices(Context(task), lower_task(task))
        assert new is None or "(std::size_t)blockIdx.x * (std::size_t)blockDim.x * 2" not in new
    # a tree loop's counter that grows has no bound: `tid + h` stays 32-bit (one its body assigns is a
    # per-thread copy in the lowering, `h[tid]`, no counter at all; the kernel's `tid` is `tid_2`)
    task = _tree_task(tmp_path, TREE.replace("h >>= 1", "h <<= 1"))
    new = wide_indices(Context(task), lower_task(task))
    assert new is not None and "s[tid_2 + h]" in new and "(std::size_t)h" not in new

