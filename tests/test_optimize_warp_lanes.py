"""tools/optimize/warp_lanes.py: thread loops that compute lane and warp numbers
(`threadIdx.x % 32`, `(blockIdx.x * blockDim.x + threadIdx.x) / 32`) split into a loop over
warps around one over the 32 lanes, the numbers read from the loop counters. Real g++, real
sandbox; no timing (speed: scripts/bench_speed.py --corpus --only-sync rows)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context
from tools.optimize.passes.specialize import specialize
from tools.optimize.passes.warp_lanes import _rewrite_idioms, warp_lanes
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [1357, 1358]


@pytest.mark.parametrize("text, expected", [
    ("int lane = threadIdx.x & 31;", "int lane = cudaopt_lane;"),
    ("int lane = threadIdx.x % 32;", "int lane = cudaopt_lane;"),
    ("int warp = threadIdx.x >> 5;", "int warp = cudaopt_warp;"),
    ("int warp = threadIdx.x / 32;", "int warp = cudaopt_warp;"),
    ("if (((int)threadIdx.x) % 32 == 0) {", "if ((int)cudaopt_lane == 0) {"),
    ("s[((int)threadIdx.x) >> 5] = v;", "s[(int)cudaopt_warp] = v;"),
    ("int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;", "int w = (blockIdx.x * (blockDim.x / 32) + cudaopt_warp);"),
    ("f(threadIdx.x % 32, threadIdx.x / 32);", "f(cudaopt_lane, cudaopt_warp);"),
])
def test_lane_and_warp_numbers_read_from_the_counters(text, expected):
    assert _rewrite_idioms(text) == expected


@pytest.mark.parametrize("text", [
    "int a = n * threadIdx.x / 32;",  # (n * threadIdx.x) / 32
    "int a = -threadIdx.x % 32;",  # the negation first
    "bool z = threadIdx.x & 31 == 0;",  # threadIdx.x & (31 == 0)
    "bool z = (a == threadIdx.x & 31);",  # (a == threadIdx.x) & 31
    "int b = threadIdx.x >> 5 + 1;",  # threadIdx.x >> 6
    "int c = base + threadIdx.x & 31;",  # (base + threadIdx.x) & 31
    "int d = threadIdx.x / 64;",  # not a warp
    "float f = threadIdx.x / 32.0f;",
    "int g = threadIdx.x % 320;",
    "int e = (blockIdx.x * blockDim.x + threadIdx.x + 1) / 32;",
])
def test_other_expressions_stay_as_they_are(text):
    assert _rewrite_idioms(text) == text


def test_matvec_rows_per_warp_split_and_correct(box):
    task = load_task(CORPUS / "matvec_warp_per_row" / "task.json")
    variant = warp_lanes(Context(task), specialize(Context(task), lower_task(task)))
    assert variant is not None
    assert "int warp_2 = (blockIdx.x * (blockDim.x / 32) + cudaopt_warp);" in variant  # the kernel's `warp`
    assert "int lane = cudaopt_lane;" in variant
    assert "static_assert(blockDim.x % 32 == 0" in variant
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


@pytest.mark.parametrize("name", ["reduce_warp_shuffle", "layernorm_rows", "scan_multi_block", "ballot_stream_compaction",
                                  "shfl_width_patterns", "masked_warp_ops", "rows_loop_block_reduce"])
def test_corpus_kernels_with_lane_numbers_stay_correct(box, name):
    task = load_task(CORPUS / name / "task.json")
    variant = warp_lanes(Context(task), specialize(Context(task), lower_task(task)))
    assert variant is not None and "cudaopt_lane" in variant
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


LANES = """
__global__ void lanes(const float* in, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    out[i] = in[i] * (float)lane;
}
"""


def _lanes_task(kernel_task, block):
    n = 4 * block
    buffers = [{"name": "in", "dtype": "float32", "shape": [n], "role": "input"},
               {"name": "out", "dtype": "float32", "shape": [n], "role": "output"}]
    return kernel_task(LANES, "lanes", buffers, [], [4], [block])


def test_blocks_of_part_warps_are_left_alone(kernel_task):
    task = _lanes_task(kernel_task, 48)  # lanes 0..15 of a second warp: tx % 32 is not a lane counter from 0
    assert warp_lanes(Context(task), specialize(Context(task), lower_task(task))) is None


def test_needs_the_launch_extents_as_constants(kernel_task):
    task = _lanes_task(kernel_task, 64)
    assert warp_lanes(Context(task), lower_task(task)) is None  # blockDim.x read at run time
    variant = warp_lanes(Context(task), specialize(Context(task), lower_task(task)))
    assert variant is not None and "int lane = cudaopt_lane;" in variant


def test_lane_numbers_of_a_kernel_without_barriers_stay_correct(kernel_task, box):
    task = _lanes_task(kernel_task, 96)
    variant = warp_lanes(Context(task), specialize(Context(task), lower_task(task)))
    assert variant is not None
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()
