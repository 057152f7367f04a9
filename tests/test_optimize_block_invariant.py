"""tools/optimize/block_invariant.py: every block of `center_rows` recomputes the column sums of
the whole input (TVM's `sum_broadcast` and `center` fuse so); the transformation runs that stretch
once per OpenMP thread and copies its shared and per-thread results into the later blocks. The
result stays correct with 1 and 2 threads, and near misses where blocks could differ are refused.
Real g++, real sandbox; no timing (speed: scripts/bench_speed.py --hte --per-category 0
--applies block_invariant)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context
from tools.optimize.passes.block_invariant import block_invariant
from tools.optimize.passes.sync_transforms import sync_together
from tools.spec import load_task
from tools.verify import check

SEEDS = [1234, 1235]
CENTER = r"""
__device__ float twice(float v) { return v * 2.0f; }

__global__ void center_rows(float* __restrict__ out, const float* __restrict__ x) {
  __shared__ float colsum[64];
  float mine = 0.0f;
  for (int r = 0; r < 12; ++r) {
    mine += x[r * 64 + threadIdx.x];
  }
  colsum[threadIdx.x] = mine;
  __syncthreads();
  float total = 0.0f;
  for (int c = 0; c < 64; ++c) total += colsum[c];
  out[blockIdx.x * 64 + threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x] - mine / 12.0f + total * 1e-3f;
}
"""
# the column sums of a warp, as TVM writes them: a shuffle tree, then a barrier
SHUFFLED = r"""
__global__ void center_rows(float* __restrict__ out, const float* __restrict__ x) {
  __shared__ float colsum[32];
  for (int c = 0; c < 32; ++c) {
    float v = threadIdx.x < 12 ? tanhf(x[threadIdx.x * 32 + c]) : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset, 32);
    if (threadIdx.x == 0) colsum[c] = v;
  }
  __syncthreads();
  out[blockIdx.x * 32 + threadIdx.x] = tanhf(x[blockIdx.x * 32 + threadIdx.x]) - colsum[threadIdx.x] / 12.0f;
}
"""
# two stretches: the second reads what the first left, after a phase of the block's own that reads it too
STANDARDIZE = r"""
__global__ void center_rows(float* __restrict__ out, const float* __restrict__ x) {
  __shared__ float colsum[64];
  __shared__ float colsq[64];
  float mine = 0.0f;
  for (int r = 0; r < 12; ++r) mine += x[r * 64 + threadIdx.x];
  colsum[threadIdx.x] = mine;
  __syncthreads();
  float centered = x[blockIdx.x * 64 + threadIdx.x] - colsum[threadIdx.x] / 12.0f;
  __syncthreads();
  float sq = 0.0f;
  for (int r = 0; r < 12; ++r) {
    float d = x[r * 64 + threadIdx.x] - colsum[threadIdx.x] / 12.0f;
    sq += d * d;
  }
  colsq[threadIdx.x] = sq;
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = centered / sqrtf(colsq[threadIdx.x] / 12.0f + 1e-5f);
}
"""
REF = """
import numpy as np

def center_rows(inputs, scalars):
    x = inputs["x"].reshape(12, 64).astype(np.float64)
    colsum = x.sum(axis=0)
    return {"out": (x - colsum / 12.0 + colsum.sum() * 1e-3).astype(np.float32)}

def centered(inputs, scalars):
    x = inputs["x"].reshape(12, 64).astype(np.float64)
    return {"out": (x - x.sum(axis=0) / 12.0).astype(np.float32)}

def standardize(inputs, scalars):
    x = inputs["x"].reshape(12, 64).astype(np.float64)
    return {"out": ((x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + 1e-5)).astype(np.float32)}

def shuffled(inputs, scalars):
    t = np.tanh(inputs["x"].reshape(12, 32).astype(np.float64))
    return {"out": (t - t.sum(axis=0) / 12.0).astype(np.float32)}
"""


def _task(tmp_path: Path, cuda: str = CENTER, args=("out", "x"), ref: str = "center_rows", cols: int = 64):
    (tmp_path / "center.cu").write_text(cuda)
    (tmp_path / "center_ref.py").write_text(REF)
    raw = {"name": "center_rows", "cuda": "center.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [12, cols], "role": "input"},
                       {"name": "out", "dtype": "float32", "shape": [12, cols], "role": "output"}],
           "launches": [{"kernel": "center_rows", "grid": [12], "block": [cols], "args": list(args)}],
           "reference": {"kind": "python", "function": f"center_ref:{ref}"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-5}}
    (tmp_path / "center.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "center.json")


def test_column_sums_are_computed_once_per_worker_and_copied(tmp_path, box):
    task = _task(tmp_path)
    new = block_invariant(Context(task), lower_task(task))
    assert new is not None
    assert new.count("if (!cudaopt_inv_done_0)") == 1
    # the shared array and the per-thread value that outlive the stretch are kept, nothing else
    assert "float cudaopt_inv0_colsum[64];" in new
    assert "cudacpu::PerThread<float> cudaopt_inv0_mine(nthreads);" in new
    stretch = new.split("if (!cudaopt_inv_done_0)")[1].split("} else {")[0]
    assert "for (int r = 0; r < 12; ++r)" in stretch and "out[" not in stretch
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_without_per_thread_state_the_parallel_loop_gets_a_region_for_the_kept_copies(tmp_path, box):
    total = "  float total = 0.0f;\n  for (int c = 0; c < 64; ++c) total += colsum[c];\n"
    assert total in CENTER  # without it `mine` lives in one phase only: no per-thread state at all
    task = _task(tmp_path, CENTER.replace(total, "").replace("mine / 12.0f + total * 1e-3f", "colsum[threadIdx.x] / 12.0f"),
                 ref="centered")
    lowered = lower_task(task)
    assert "#pragma omp parallel for collapse(3)" in lowered
    new = block_invariant(Context(task), lowered)
    assert new is not None and "#pragma omp parallel for" not in new
    region = new.split("#pragma omp parallel\n")[1]
    assert region.index("bool cudaopt_inv_done_0 = false;") < region.index("#pragma omp for collapse(3)")
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_a_shuffle_tree_of_column_sums_is_shared_once_the_shuffles_are_plain_loops(tmp_path, box):
    task = _task(tmp_path, SHUFFLED, ref="shuffled", cols=32)
    lowered = lower_task(task)
    assert block_invariant(Context(task), lowered) is None  # the warp exchange's rounds are block state
    synced = sync_together(Context(task), lowered)
    assert synced is not None
    new = block_invariant(Context(task), synced)
    assert new is not None and "float cudaopt_inv0_colsum[32];" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_a_second_stretch_may_read_what_the_first_left(tmp_path, box):
    task = _task(tmp_path, STANDARDIZE, ref="standardize")
    new = block_invariant(Context(task), lower_task(task))
    assert new is not None
    assert "if (!cudaopt_inv_done_0)" in new and "if (!cudaopt_inv_done_1)" in new
    second = new.split("if (!cudaopt_inv_done_1)")[1].split("} else {")[0]
    assert "colsum[" in second and "colsq[" in second and "blockIdx" not in second
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()
    # the block's own phase writes the first stretch's array: the second stretch stays in every block
    line = "  float centered = x[blockIdx.x * 64 + threadIdx.x] - colsum[threadIdx.x] / 12.0f;\n"
    assert line in STANDARDIZE
    rewrites = line + "  colsum[threadIdx.x] = colsum[threadIdx.x] + 0.0f * centered;\n"
    task = _task(tmp_path, STANDARDIZE.replace(line, rewrites), ref="standardize")
    new = block_invariant(Context(task), lower_task(task))
    assert "if (!cudaopt_inv_done_0)" in new and "cudaopt_inv_done_1" not in new


@pytest.mark.parametrize("old, new", [
    ("mine += x[r * 64 + threadIdx.x];", "mine += x[r * 64 + threadIdx.x] * blockIdx.x;"),  # the block's own index
    ("mine += x[r * 64 + threadIdx.x];", "mine += out[r * 64 + threadIdx.x];"),  # what the launch writes
    ("mine += x[r * 64 + threadIdx.x];", "mine += twice(x[r * 64 + threadIdx.x]);"),  # a call it cannot see into
    # a shared array the block filled before from its own rows
    ("float mine = 0.0f;", "colsum[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];\n  __syncthreads();\n"
                           "  float mine = colsum[threadIdx.x];"),
])
def test_stretches_that_could_differ_between_blocks_are_refused(tmp_path, old, new):
    assert old in CENTER
    task = _task(tmp_path, CENTER.replace(old, new))
    assert block_invariant(Context(task), lower_task(task)) is None


def test_refused_when_a_launch_passes_one_buffer_twice(tmp_path):
    task = _task(tmp_path, args=("out", "out"))
    assert block_invariant(Context(task), lower_task(task)) is None
