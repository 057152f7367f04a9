"""tools/optimize/merge_blocks.py: blocks of 16 threads summing a column each (reads contiguous
across blockIdx.x, TVM's reductions over a leading axis) run 16 blocks (AVX-512; 8 with AVX2) at a time as SIMD lanes,
each merged block with its own per-thread and shared state. The result stays correct with 1 and
2 threads, also for a grid that is no multiple of the lanes, and kernels where merging could
change results or would not pay are refused. Real g++, real sandbox; no timing (speed:
scripts/bench_speed.py --hte --per-category 0 --applies merge_blocks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context, NotApplicable
from tools.optimize.passes.merge_blocks import _lanes, merge_blocks
from tools.optimize.passes.sync_transforms import sync_together
from tools.spec import load_task
from tools.verify import check

SEEDS = [2468, 2469]
# TVM's shape (sum over axis 0): a strided per-thread sum, then a straight-line shuffle tree
SHUFFLED = r"""
__global__ void column_sums(const float* __restrict__ x, float* __restrict__ out) {
  float part[1];
  float red[1];
  part[0] = 0.0f;
  for (int k = 0; k < 3; ++k) {
    if (((k * 16) + ((int)threadIdx.y)) < 40) {
      part[0] = (part[0] + x[(((k * 16) + ((int)threadIdx.y)) * 100) + ((int)blockIdx.x)]);
    }
  }
  float t0[1];
  uint mask[1];
  red[0] = part[0];
  mask[0] = __activemask();
  t0[0] = __shfl_down_sync(mask[0], red[0], 8, 32);
  red[0] = (red[0] + t0[0]);
  t0[0] = __shfl_down_sync(mask[0], red[0], 4, 32);
  red[0] = (red[0] + t0[0]);
  t0[0] = __shfl_down_sync(mask[0], red[0], 2, 32);
  red[0] = (red[0] + t0[0]);
  t0[0] = __shfl_down_sync(mask[0], red[0], 1, 32);
  red[0] = (red[0] + t0[0]);
  red[0] = __shfl_sync(mask[0], red[0], 0, 32);
  if (((int)threadIdx.y) == 0) {
    out[((int)blockIdx.x)] = red[0];
  }
}
"""
# the same sums through a shared-memory tree, one barrier per level
SHARED = r"""
__global__ void column_sums(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float part[16];
  float v = 0.0f;
  for (int r = threadIdx.y; r < 40; r += 16) v += x[r * 100 + blockIdx.x];
  part[threadIdx.y] = v;
  __syncthreads();
  if (threadIdx.y < 8) part[threadIdx.y] += part[threadIdx.y + 8];
  __syncthreads();
  if (threadIdx.y < 4) part[threadIdx.y] += part[threadIdx.y + 4];
  __syncthreads();
  if (threadIdx.y < 2) part[threadIdx.y] += part[threadIdx.y + 2];
  __syncthreads();
  if (threadIdx.y == 0) out[blockIdx.x] = part[0] + part[1] + v * 0.0f;
}
"""
REF = """
import numpy as np

def column_sums(inputs, scalars):
    return {"out": inputs["x"].reshape(40, 100).astype(np.float64).sum(axis=0).astype(np.float32)}
"""


def _task(tmp_path: Path, cuda: str):
    (tmp_path / "columns.cu").write_text(cuda)
    (tmp_path / "columns_ref.py").write_text(REF)
    raw = {"name": "column_sums", "cuda": "columns.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [40, 100], "role": "input"},
                       {"name": "out", "dtype": "float32", "shape": [100], "role": "output"}],
           "launches": [{"kernel": "column_sums", "grid": [100], "block": [1, 16], "args": ["x", "out"]}],
           "reference": {"kind": "python", "function": "columns_ref:column_sums"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-5}}
    (tmp_path / "columns.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "columns.json")


def test_shuffled_column_sums_run_sixteen_blocks_at_a_time(tmp_path, box):
    task = _task(tmp_path, SHUFFLED)
    lowered = lower_task(task)
    with pytest.raises(NotApplicable, match="statements that blocks cannot run as lanes"):
        merge_blocks(Context(task), lowered)  # the warp exchange is runtime state until sync_together
    synced = sync_together(Context(task), lowered)
    new = merge_blocks(Context(task), synced)
    assert new is not None and f"cudaopt_bx0 += {_lanes()}" in new  # 16 with AVX-512, 8 with AVX2
    assert new.count("for (unsigned int cudaopt_v = 0; cudaopt_v < cudaopt_nv; ++cudaopt_v)") >= 2
    assert "[cudaopt_v]" in new and "for (unsigned int bx = 0" not in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])  # 100 blocks: the last chunk has 4
    assert report.correct, report.summary()


def test_shared_arrays_get_one_copy_per_merged_block(tmp_path, box):
    task = _task(tmp_path, SHARED)
    new = merge_blocks(Context(task), lower_task(task))
    assert new is not None and f"part[16][{_lanes()}];  // __shared__" in new and "part[threadIdx.y][cudaopt_v]" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


@pytest.mark.parametrize("old, new, why", [
    ("if (threadIdx.y == 0) out[blockIdx.x] = part[0] + part[1] + v * 0.0f;",
     "if (threadIdx.y == 0) atomicAdd(&out[blockIdx.x], part[0] + part[1]);",  # atomics: blocks may meet
     "statements that blocks cannot run as lanes"),
    ("x[r * 100 + blockIdx.x]", "x[blockIdx.x * 40 + r]",  # contiguous within a block: merging would not pay
     "no read is contiguous across blockIdx.x"),
])
def test_refused_where_merging_could_change_results_or_would_not_pay_and_says_why(tmp_path, old, new, why):
    assert old in SHARED
    task = _task(tmp_path, SHARED.replace(old, new))
    with pytest.raises(NotApplicable, match=why):
        merge_blocks(Context(task), lower_task(task))
