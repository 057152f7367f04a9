"""Constructs of TVM's CUDA (the HPCTransEval records in bench/data) through the faithful
lowering, each in a tiny kernel checked against numpy with tools.verify.check (1 and 2 threads).

scripts/check_bench_lowering.py runs every shipped record; these tests keep the constructs
those records depend on from regressing without that 45-minute run.
"""

from __future__ import annotations

import json
from pathlib import Path

from tools.cuda import lower_task
from tools.spec import load_task
from tools.verify import check

# The preamble TVM puts before its kernels (the parts g++ and libclang see).
TVM_HEAD = r"""
#include <cstdint>
#include <type_traits>
#include <cuda.h>
#define uint unsigned int
"""

# A two-stage block reduction as TVM's GEMV/Reduction schedules write it: per-thread
# `alignas(64)` one-element arrays kept across a barrier, `__activemask()` as the shuffle mask,
# `__shfl_down_sync(.., 32)`, a staging array in shared memory, a second stage whose values
# are loaded under `if (tid < warps)` and shuffled outside it, a broadcast whose source lane
# (threadIdx.y * 32) is beyond the width (CUDA takes it modulo the width: lane 31 gets lane 0's
# sum), results passed through `volatile` casts of shared memory, and `#pragma unroll` loops
# with int64_t counters.
ROW_SUM = TVM_HEAD + r"""
extern "C" __global__ void __launch_bounds__(256) row_sum_kernel(float* __restrict__ x_ptr, float* __restrict__ out_ptr, float* __restrict__ lane0_ptr);
extern "C" __global__ void __launch_bounds__(256) row_sum_kernel(float* __restrict__ x_ptr, float* __restrict__ out_ptr, float* __restrict__ lane0_ptr) {
  alignas(64) float in_thread_ptr[1];
  __shared__ alignas(64) float red_result_ptr[1];
  in_thread_ptr[0] = 0x0p+0f/*0.000000e+00*/;
  #pragma unroll
  for (int k_0 = 0; k_0 < 3; ++k_0) {
    if ((((k_0 * 256) + (((int)threadIdx.y) * 32)) + ((int)threadIdx.x)) < 700) {
      in_thread_ptr[0] = (in_thread_ptr[0] + x_ptr[((((((int)blockIdx.x) * 700) + (k_0 * 256)) + (((int)threadIdx.y) * 32)) + ((int)threadIdx.x))]);
    }
  }
  __shared__ alignas(64) float red_buf_staging_ptr[8];
  alignas(64) float t0_ptr[1];
  alignas(64) uint mask_ptr[1];
  alignas(64) float red_buf0_ptr[1];
  alignas(64) float t0_ptr_1[1];
  alignas(64) uint mask_ptr_1[1];
  alignas(64) float red_buf0_ptr_1[1];
  red_buf0_ptr[0] = in_thread_ptr[0];
  mask_ptr[0] = __activemask();
  t0_ptr[0] = __shfl_down_sync(mask_ptr[0], red_buf0_ptr[0], 16, 32);
  red_buf0_ptr[0] = (red_buf0_ptr[0] + t0_ptr[0]);
  t0_ptr[0] = __shfl_down_sync(mask_ptr[0], red_buf0_ptr[0], 8, 32);
  red_buf0_ptr[0] = (red_buf0_ptr[0] + t0_ptr[0]);
  t0_ptr[0] = __shfl_down_sync(mask_ptr[0], red_buf0_ptr[0], 4, 32);
  red_buf0_ptr[0] = (red_buf0_ptr[0] + t0_ptr[0]);
  t0_ptr[0] = __shfl_down_sync(mask_ptr[0], red_buf0_ptr[0], 2, 32);
  red_buf0_ptr[0] = (red_buf0_ptr[0] + t0_ptr[0]);
  t0_ptr[0] = __shfl_down_sync(mask_ptr[0], red_buf0_ptr[0], 1, 32);
  red_buf0_ptr[0] = (red_buf0_ptr[0] + t0_ptr[0]);
  red_buf0_ptr[0] = __shfl_sync(mask_ptr[0], red_buf0_ptr[0], (((int)threadIdx.y) * 32), 32);
  if (((int)threadIdx.x) == 31) {
    lane0_ptr[((((int)blockIdx.x) * 8) + ((int)threadIdx.y))] = red_buf0_ptr[0];
  }
  if (((int)threadIdx.x) == 0) {
    red_buf_staging_ptr[((int)threadIdx.y)] = red_buf0_ptr[0];
  }
  __syncthreads();
  red_buf0_ptr_1[0] = 0x0p+0f/*0.000000e+00*/;
  if (((((int)threadIdx.y) * 32) + ((int)threadIdx.x)) < 8) {
    red_buf0_ptr_1[0] = red_buf_staging_ptr[((int)threadIdx.x)];
  }
  mask_ptr_1[0] = __activemask();
  t0_ptr_1[0] = __shfl_down_sync(mask_ptr_1[0], red_buf0_ptr_1[0], 4, 32);
  red_buf0_ptr_1[0] = (red_buf0_ptr_1[0] + t0_ptr_1[0]);
  t0_ptr_1[0] = __shfl_down_sync(mask_ptr_1[0], red_buf0_ptr_1[0], 2, 32);
  red_buf0_ptr_1[0] = (red_buf0_ptr_1[0] + t0_ptr_1[0]);
  t0_ptr_1[0] = __shfl_down_sync(mask_ptr_1[0], red_buf0_ptr_1[0], 1, 32);
  red_buf0_ptr_1[0] = (red_buf0_ptr_1[0] + t0_ptr_1[0]);
  if (((((int)threadIdx.y) * 32) + ((int)threadIdx.x)) == 0) {
    ((volatile float*)red_result_ptr)[0] = red_buf0_ptr_1[0];
  }
  __syncthreads();
  #pragma unroll
  for (int64_t ax1_0 = (int64_t)0; ax1_0 < (int64_t)1; ++ax1_0) {
    if (((((int)threadIdx.y) * 32) + ((int)threadIdx.x)) < 1) {
      out_ptr[((int)blockIdx.x)] = ((volatile float*)red_result_ptr)[0];
    }
  }
}
"""

ROW_SUM_REF = """
import numpy as np

def row_sum(inputs, scalars):
    x = inputs["x"].astype(np.float64).reshape(6, 700)
    warps = x[:, :256].reshape(6, 8, 32).sum(axis=2)
    for k in (256, 512):
        part = np.zeros((6, 256))
        part[:, :min(256, 700 - k)] = x[:, k:k + 256]
        warps += part.reshape(6, 8, 32).sum(axis=2)
    return {"out": x.sum(axis=1).astype(np.float32), "lane0": warps.astype(np.float32)}
"""

# Several kernels in sequence sharing a scratch buffer, as TVM emits a fused graph: a row
# maximum into global scratch (hex-float -FLT_MAX start, CUDA's max(float, float)), then a
# kernel that reads it; each guarded by `if (threadIdx.x < n)` in a 1024-thread block.
TWO_KERNELS = TVM_HEAD + r"""
extern "C" __global__ void __launch_bounds__(1024) softmax_num_kernel(float* __restrict__ maxelem_ptr, float* __restrict__ x_ptr);
extern "C" __global__ void __launch_bounds__(1024) softmax_num_kernel_1(float* __restrict__ T_exp_ptr, float* __restrict__ maxelem_ptr, float* __restrict__ x_ptr);
extern "C" __global__ void __launch_bounds__(1024) softmax_num_kernel(float* __restrict__ maxelem_ptr, float* __restrict__ x_ptr) {
  if (((int)threadIdx.x) < 12) {
    maxelem_ptr[((int)threadIdx.x)] = -0x1.fffffep+127f/*-3.402823e+38*/;
  }
  for (int k = 0; k < 37; ++k) {
    if (((int)threadIdx.x) < 12) {
      maxelem_ptr[((int)threadIdx.x)] = max(maxelem_ptr[((int)threadIdx.x)], x_ptr[((((int)threadIdx.x) * 37) + k)]);
    }
  }
}

extern "C" __global__ void __launch_bounds__(1024) softmax_num_kernel_1(float* __restrict__ T_exp_ptr, float* __restrict__ maxelem_ptr, float* __restrict__ x_ptr) {
  if (((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) < 444) {
    T_exp_ptr[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = __expf((x_ptr[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] - maxelem_ptr[(((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) / 37)]));
  }
}
"""

TWO_KERNELS_REF = """
import numpy as np

def softmax_num(inputs, scalars):
    x = inputs["x"].reshape(12, 37)
    return {"T_exp": np.exp(x - x.max(axis=1, keepdims=True)).astype(np.float32)}
"""


def _task(tmp_path: Path, name: str, cuda: str, ref: str, buffers: list[dict], launches: list[dict]):
    (tmp_path / f"{name}.cu").write_text(cuda)
    (tmp_path / f"{name}_ref.py").write_text(ref)
    raw = {"name": name, "cuda": f"{name}.cu", "buffers": buffers, "launches": launches,
           "reference": {"kind": "python", "function": f"{name}_ref:{name}"},
           "inputs": {"seed": 42, "distribution": "uniform", "low": -1.0, "high": 1.0},
           "tolerance": {"rtol": 1e-4, "atol": 1e-5}}
    (tmp_path / f"{name}.json").write_text(json.dumps(raw))
    return load_task(tmp_path / f"{name}.json")


def _assert_correct(task, box) -> None:
    report = check(task, lower_task(task), box, seeds=[42, 43], threads=[1, 2])
    assert report.status == "correct", report.summary()


def test_tvm_two_stage_warp_reduction_in_a_2d_block(tmp_path, box):
    task = _task(tmp_path, "row_sum", ROW_SUM, ROW_SUM_REF,
                 [{"name": "x", "dtype": "float32", "shape": [6, 700], "role": "input"},
                  {"name": "out", "dtype": "float32", "shape": [6], "role": "output"},
                  {"name": "lane0", "dtype": "float32", "shape": [6, 8], "role": "output"}],
                 [{"kernel": "row_sum_kernel", "grid": [6], "block": [32, 8], "args": ["x", "out", "lane0"]}])
    _assert_correct(task, box)


def test_tvm_kernels_in_sequence_through_a_scratch_buffer(tmp_path, box):
    task = _task(tmp_path, "softmax_num", TWO_KERNELS, TWO_KERNELS_REF,
                 [{"name": "x", "dtype": "float32", "shape": [12, 37], "role": "input"},
                  {"name": "T_exp", "dtype": "float32", "shape": [12, 37], "role": "output"},
                  {"name": "maxelem", "dtype": "float32", "shape": [12], "role": "scratch"}],
                 [{"kernel": "softmax_num_kernel", "grid": [1], "block": [1024], "args": ["maxelem", "x"]},
                  {"kernel": "softmax_num_kernel_1", "grid": [1], "block": [1024], "args": ["T_exp", "maxelem", "x"]}])
    _assert_correct(task, box)
