"""tools/optimize/stride_loops.py uniform_loops: a thread's loop whose trips are the same in every
thread (`for (int k = 0; k < BLOCK; ++k) a[tid] = interact(me[tid], sh[k], a[tid]);`) runs trip by
trip with the thread loop inside it, so that g++ vectorizes across the threads; and the build
flags that let a loop with a square root vectorize at all (-fno-math-errno). Real g++, real
sandbox; no timing (speed: scripts/bench_speed.py --corpus --only-sync; nbody_tiles 2.3x the
faithful lowering with specialize_parallel, measured in one process)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tools.build import DEFAULT_CXXFLAGS
from tools.cuda import lower_task
from tools.optimize.base import Context, NotApplicable, apply_or_none
from tools.optimize.passes.specialize import specialize_parallel
from tools.optimize.passes.stride_loops import UNIFORM_LOOPS, stride_loops, uniform_loops
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [2468, 2469]


def _task(name):
    return load_task(CORPUS / name / "task.json")


@pytest.mark.parametrize("name, loops", [
    ("nbody_tiles", 1),  # the interaction loop over a shared tile, per-thread float3 accumulator
    ("layernorm_rows", 2),  # sums over a row's shared values, the same in every thread
    ("conv2d_3x3", 2),  # the filter's two loops, the inner one made trip by trip inside the outer's
])
def test_uniform_loops_put_the_thread_loop_inside_and_stay_correct(box, name, loops):
    task = _task(name)
    new = uniform_loops(Context(task), lower_task(task))
    assert new is not None and new.count("trip by trip across the threads") == loops
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_the_interaction_loop_vectorizes_across_the_threads(vectorized_lines):
    task = _task("nbody_tiles")
    variant = uniform_loops(Context(task), specialize_parallel(Context(task), lower_task(task)))
    loop = re.search(r"for \(int k = 0; k < BLOCK; k \+= 1\) \{\s*for \(unsigned int tz", variant)
    assert loop, "the trip loop is outside the thread loop"
    assert "cudaopt_on" not in variant  # no thread leaves before the loop: no test in it
    vectorized, report = vectorized_lines(variant)  # interact() inlined, as in the shared library
    first = variant[:loop.start()].count("\n") + 1
    assert any(first < n < first + 8 for n in vectorized), report[-2000:]


def test_a_square_root_loop_vectorizes_with_the_default_flags(tmp_path):
    # With errno, g++ calls sqrtf for negative arguments: control flow that keeps the loop scalar.
    source = tmp_path / "s.cpp"
    source.write_text("#include <cmath>\nvoid f(float* __restrict a, const float* __restrict b, int n) {\n"
                      "    for (int i = 0; i < n; ++i) a[i] = 1.0f / sqrtf(b[i]);\n}\n")
    def vectorized(flags):
        out = subprocess.run(["g++", *flags, "-c", str(source), "-o", str(tmp_path / "s.o"), "-fopt-info-vec-optimized"],
                             capture_output=True, text=True, check=True)
        return "loop vectorized" in out.stderr
    assert "-fno-math-errno" in DEFAULT_CXXFLAGS
    assert vectorized(DEFAULT_CXXFLAGS)
    assert not vectorized([f for f in DEFAULT_CXXFLAGS if f != "-fno-math-errno"])


ONE_LOOP = r"""
__global__ void one_loop(const float* x, float* y, int n) {
    __shared__ float s[64];
    __shared__ float4 q[4];
    int t = threadIdx.x;
    float a = 0.0f;
    s[t] = 0.0f;
    q[t % 4].x = 0.0f;
    __syncthreads();
    LOOP
    y[blockIdx.x * blockDim.x + t] = a + s[t] + q[t % 4].x;
}
"""


@pytest.mark.parametrize("loop, accepted", [
    ("for (int c = 0; c < n; ++c) a += x[c];", True),  # the same trips, own locals: interchanged
    ("for (int c = 0; c < 64; ++c) s[c] += x[c];", False),  # writes shared memory at one place for all threads
    ("for (int c = 0; c < 64; ++c) ++s[c];", False),  # increments it
    ("for (int c = 0; c < 4; ++c) q[c].x = x[c];", False),  # writes a member of it
    ("for (int c = 0; c < n; ++c) s[t] += x[c];", True),  # at the thread's own place: interchanged
    ("for (int c = 0; c < n; ++c) { if (x[c] < 0.0f) break; a += x[c]; }", False),  # leaves early
    ("for (int c = 0; c < n; ++c) { a += x[c]; c += 1; }", False),  # changes its counter
    ("for (int c = 0; c < t; ++c) a += x[c];", False),  # trips that differ between threads
    ("if (t < 4) for (int c = 0; c < n; ++c) a += x[c];", False),  # some threads only
])
def test_only_the_same_trips_of_independent_threads_are_interchanged(kernel_task, loop, accepted):
    task = kernel_task(ONE_LOOP.replace("LOOP", loop), "one_loop",
                       [{"name": "x", "dtype": "float32", "shape": [500], "role": "input"},
                        {"name": "y", "dtype": "float32", "shape": [128], "role": "output"}],
                       [{"name": "n", "dtype": "int32", "value": 500}], [2], [64])
    assert (apply_or_none(UNIFORM_LOOPS, Context(task), lower_task(task)) is not None) == accepted


def test_stride_loops_leave_the_uniform_ones_to_uniform_loops():
    task = _task("nbody_tiles")
    with pytest.raises(NotApplicable, match="striding over the block's or the grid's threads"):
        stride_loops(Context(task), lower_task(task))
