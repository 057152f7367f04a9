"""tools/optimize/uniform_loops.py: a loop every thread runs the same way (after a barrier, over a
shared tile) goes outside the thread loops, so the threads run it in lockstep with a SIMD loop
inside. The statements after it run in a second thread loop. The results stay those of the
lowering, with 1 and 2 threads. Loops whose trip count a thread can change, and declarations
that read memory, are left alone. Real g++, real sandbox; no timing (speed:
scripts/bench_speed.py --corpus --only-sync)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.transforms import Context
from tools.optimize.uniform_loops import uniform_loops
from tools.spec import load_task
from tools.verify import check

SEEDS = [4321, 4322]
TILE_DOTS = r"""
__global__ void tile_dots(const float* x, const float* w, float* out, int n) {
    __shared__ float sw[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    sw[threadIdx.x] = w[threadIdx.x];
    __syncthreads();
    for (int k = 0; k < 64; ++k)
        acc += sw[k] * x[(i + k) % n];
    if (i < n) out[i] = acc;
}
"""


def _task(tmp_path: Path, cuda: str):
    (tmp_path / "dots.cu").write_text(cuda)
    raw = {"name": "tile_dots", "cuda": "dots.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [1000], "role": "input"},
                       {"name": "w", "dtype": "float32", "shape": [64], "role": "input"},
                       {"name": "out", "dtype": "float32", "shape": [1000], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": 1000}],
           "launches": [{"kernel": "tile_dots", "grid": [16], "block": [64], "args": ["x", "w", "out", "n"]}],
           "reference": {"kind": "lowered"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-5}}  # -O3 contracts a * b + c into fma, -O0 does not
    (tmp_path / "dots.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "dots.json")


def test_the_shared_tile_loop_runs_outside_the_threads(tmp_path, box):
    task = _task(tmp_path, TILE_DOTS)
    new = uniform_loops(Context(task), lower_task(task))
    assert new is not None
    # the k loop now holds a whole thread nest, whose SIMD loop has no loop inside
    outer = re.search(r"for \(int k = 0; k < 64; \+\+k\) \{\s*for \(unsigned int tz", new)
    assert outer is not None
    simd = new[outer.end():new.index("}", outer.end())]
    assert "#pragma omp simd" in simd and "acc[tid] += sw[k] * x[(i + k) % n];" in simd
    # what followed the loop runs after it, for every thread, with the declarations again
    after = new[new.index("acc[tid] += sw[k]"):]
    assert re.search(r"int i = blockIdx.x \* blockDim.x \+ threadIdx.x;\s*if \(i < n\) out\[i\] = acc\[tid\];", after)
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


@pytest.mark.parametrize("old, new", [
    ("for (int k = 0; k < 64; ++k)", "for (int k = threadIdx.x % 4; k < 64; ++k)"),  # a thread's own trip count
    ("acc += sw[k] * x[(i + k) % n];", "{ if (sw[k] > 2.0f) break; acc += sw[k] * x[(i + k) % n]; }"),  # early exit
    ("for (int k = 0; k < 64; ++k)", "int m = (int)x[i % n] % 8;\n    for (int k = 0; k < 64; ++k)"),  # a memory read before it
])
def test_left_alone_where_threads_differ_or_values_would_be_read_again(tmp_path, old, new):
    assert old in TILE_DOTS
    task = _task(tmp_path, TILE_DOTS.replace(old, new))
    assert uniform_loops(Context(task), lower_task(task)) is None
