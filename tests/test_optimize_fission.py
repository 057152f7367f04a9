"""tools/optimize/exit_flags.py and thread_fission.py: the lowering's exit flags dropped where no
region can ask (tested before any is set, set after the last reader) and a region's work for a
few threads split from the work for all. Corpus kernels stay correct with 1 and 2 threads; flags a
later region or a loop reads stay, and regions whose parts would have to carry a local or leave
early are not split. Real g++, real sandbox; no timing (speed: scripts/bench_speed.py --corpus
--only-sync; early_return_tail 1.45x and shared_atomics_float 3.1x -> 5.1x with the split,
measured in one process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context
from tools.optimize.passes.exit_flags import dead_exit_flags
from tools.optimize.passes.specialize import specialize_parallel
from tools.optimize.passes.thread_fission import guarded_fission
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [1357, 1358]


def _task(name):
    return load_task(CORPUS / name / "task.json")


@pytest.mark.parametrize("name", ["early_return_tail", "stencil_2d_jacobi"])
def test_exit_flags_nobody_reads_are_gone_and_the_kernel_stays_correct(box, name):
    task = _task(name)
    lowered = lower_task(task)
    assert "exited[tid] = true;" in lowered and "if (exited[tid]) continue;" in lowered
    new = dead_exit_flags(Context(task), lowered)
    assert new is not None and "exited" not in new[new.index("// CUDA kernel"):]
    _assert_correct(box, task, new)


@pytest.mark.parametrize("name", ["matvec_warp_per_row", "block_dependent_trip_count"])
def test_exit_flags_a_later_loop_reads_are_kept(box, name):
    # threads that returned before a loop whose regions repeat: later trips still ask
    task = _task(name)
    new = dead_exit_flags(Context(task), lower_task(task))
    assert new is not None and "if (exited[tid]) continue;" in new and "exited[tid] = true;" in new
    _assert_correct(box, task, new)


LOOPED = r"""
__global__ void looped(const float* x, float* y, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    for (int r = 0; r < 3; ++r) {
        s[t] = x[r * 64 + t];
        __syncthreads();
        if (s[t] < 0.0f) return;
        y[r * 64 + t] = s[63 - t];
        __syncthreads();
    }
}
"""


def _fixture(kernel_task, source, name):
    return kernel_task(source, name, [{"name": "x", "dtype": "float32", "shape": [192], "role": "input"},
                                      {"name": "y", "dtype": "float32", "shape": [192], "role": "output", "init": "zeros"}],
                       [{"name": "n", "dtype": "int32", "value": 192}], [1], [64])


def _assert_correct(box, task, code):
    report = check(task, code, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_exit_flags_inside_a_loop_of_the_block_are_kept(kernel_task):
    task = _fixture(kernel_task, LOOPED, "looped")
    lowered = lower_task(task)
    assert "exited[tid] = true;" in lowered
    assert dead_exit_flags(Context(task), lowered) is None


@pytest.mark.parametrize("name, splits", [
    ("early_return_tail", 1),  # if (t == 0) the tile's sum, then every thread's own element
    ("shared_atomics_float", 2),  # if (threadIdx.x == 0) the shared totals, then every thread's
    ("stencil_1d_shared", 1),  # the halo loads of the first threads next to every thread's load
])
def test_work_for_a_few_threads_gets_its_own_loop_and_the_kernel_stays_correct(box, name, splits):
    task = _task(name)
    ctx = Context(task)
    new = guarded_fission(ctx, specialize_parallel(ctx, lower_task(task)))
    assert new is not None and new.count("for a few threads and for all, one loop each") == splits
    assert new.count("tx_lo; tx < tx_hi") >= splits  # the few threads' loop over those threads only
    _assert_correct(box, task, new)


SPLIT = r"""
__global__ void split(const float* x, float* y, int n) {
    __shared__ float s[2];
    int t = threadIdx.x;
    LEAVE
    if (t == 0) { s[0] = x[0]; }
    float v = LOCAL;
    y[t] = v;
}
"""


@pytest.mark.parametrize("leave, local, splits", [
    ("", "x[t]", True),
    ("if (x[t] < 0.0f) return;", "x[t]", False),  # a thread leaving before the guarded part would skip it
    ("float w = x[t];", "w", False),  # a local declared before the guarded part and read after it
    ("atomicAdd(&s[1], x[t]);", "atomicAdd(&s[1], 1.0f)", False),  # float atomics of two parts: another sum order
])
def test_regions_whose_parts_would_leave_early_or_carry_a_local_are_not_split(kernel_task, leave, local, splits):
    task = _fixture(kernel_task, SPLIT.replace("LEAVE", leave).replace("LOCAL", local), "split")
    assert (guarded_fission(Context(task), lower_task(task)) is not None) == splits
