"""tools/optimize/uniform_exits.py and owned_stores.py: a barrier loop left on a shared flag runs
without per-thread loop flags, and a thread's own copies are loaded and stored once around its
branches and inner loops (shared flags set once per thread loop). Kernels where they apply stay
correct with 1 and 2 threads; loops some threads may leave alone (a thread's own condition, a
thread returning inside, threads that did not all enter) keep their flags, and statements that
leave the thread's iteration or copies other threads touch are left as they are. Real g++, real
sandbox; no timing (speed: scripts/bench_speed.py --corpus --only-sync: barrier_while_break
11.5x the faithful lowering with 1 thread, 11.3x with 2, measured in one process)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.analysis import code as C
from tools.optimize.base import Context
from tools.optimize.passes.owned_stores import owned_stores
from tools.optimize.passes.sync_transforms import perthread_stack
from tools.optimize.passes.uniform_exits import is_uniform, uniform_exits
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [4711, 4712]


def _kernel(code: str) -> str:
    return "".join(k.text(code) for k in C.kernels(code))


def _task(tmp_path: Path, source: str, n: int = 256, block: int = 64):
    (tmp_path / "k.cu").write_text(source)
    kernel = re.search(r"__global__ void (\w+)", source)[1]
    raw = {"name": "k", "cuda": "k.cu",
           "buffers": [{"name": "x", "dtype": "int32", "shape": [n], "role": "input",
                        "inputs": {"distribution": "randint", "low": 1, "high": 60}},
                       {"name": "y", "dtype": "int32", "shape": [n], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": n}],
           "launches": [{"kernel": kernel, "grid": [n // block], "block": [block], "args": ["x", "y", "n"]}],
           "reference": {"kind": "lowered"}}
    (tmp_path / "k.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "k.json")


@pytest.mark.parametrize("stack", [False, True], ids=["PerThread", "perthread_stack"])
def test_a_loop_left_on_a_shared_flag_runs_without_loop_flags(box, stack):
    task = load_task(CORPUS / "barrier_while_break" / "task.json")
    ctx = Context(task)
    base = lower_task(task)
    base = perthread_stack(ctx, base) if stack else base
    new = uniform_exits(ctx, base)
    assert new is not None and "in_loop" in _kernel(base)
    assert "in_loop" not in _kernel(new) and "any_thread(" not in _kernel(new)
    assert "if (active == 0) break;" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


WHILE_SHARED = r"""
__global__ void rounds_kernel(const int* x, int* y, int n) {
    __shared__ int left;
    __shared__ int budget;
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    if (t == 0) budget = 40;
    __syncthreads();
    while (budget > 0) {
        if (t == 0) { left = 0; budget = budget - 1; }
        __syncthreads();
        if (v > 1) { v = v - 2; atomicAdd(&left, 1); }
        __syncthreads();
        if (left == 0)
            break;
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + t] = v;
}
"""


def test_a_uniform_loop_condition_becomes_a_block_level_test(box, tmp_path):
    task = _task(tmp_path, WHILE_SHARED)
    new = uniform_exits(Context(task), lower_task(task))
    assert new is not None and "in_loop" not in _kernel(new)
    assert "if (!(budget > 0)) break;" in new and "if (left == 0) break;" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


COUNTED = r"""
__global__ void counted(const int* x, int* y, int rounds) {
    __shared__ int s[64];
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    int r = 0;
    int step = 1;
    do {                           // the thread's own counter, set alike in every thread
        s[t] = v;
        __syncthreads();
        v = v + s[(t + 1 + r) % 64] % 7;
        __syncthreads();
        r += step;
    } while (r < 2 * 3);
    y[blockIdx.x * blockDim.x + t] = v + r;
}
"""


@pytest.mark.parametrize("stack", [False, True], ids=["PerThread", "perthread_stack"])
def test_a_do_while_on_uniform_counters_runs_without_loop_flags(box, stack, tmp_path):
    task = _task(tmp_path, COUNTED)
    ctx = Context(task)
    base = perthread_stack(ctx, lower_task(task)) if stack else lower_task(task)
    new = uniform_exits(ctx, base)
    assert new is not None and "in_loop" in _kernel(base)
    assert "in_loop" not in _kernel(new) and "any_thread(" not in _kernel(new)
    assert "if (!(r[0] < 2 * 3)) break;" in new  # thread 0's copy, after the loop's body
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_the_corpus_do_while_with_a_round_counter_runs_without_loop_flags(box):
    task = load_task(CORPUS / "local_array_across_barrier" / "task.json")
    new = uniform_exits(Context(task), lower_task(task))
    assert new is not None and "in_loop" not in _kernel(new) and "if (!(r[0] < rounds)) break;" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def _counted(change: str) -> str:
    return COUNTED.replace("        r += step;\n", change)


@pytest.mark.parametrize("source", [
    _counted("        if (t & 1) r += step;\n"),                    # stepped by some threads only
    _counted("        if (t & 1)\n            r += step;\n"),
    _counted("        r += step + (t & 1);\n"),                     # by a thread's own amount
    _counted("        if (v > 40) continue;\n        r += step;\n"),  # a jump can skip the step
    _counted("        r += step;\n        if (t == 3) r = 0;\n"),   # set by one thread
    _counted("        step = t + 1;\n        r += step;\n"),       # stepped by a counter set unevenly
    _counted("        int* p = &r;\n        *p += step;\n"),        # written through its address
    _counted("        r = s[0];\n        if (t == 5) s[0] = 9;\n"),  # a value its region changes
], ids=["some_threads", "some_threads_next_line", "own_amount", "skippable", "one_thread", "uneven_step", "address", "changed_value"])
def test_counters_some_thread_may_set_differently_keep_the_loop_flags(tmp_path, source):
    task = _task(tmp_path, source)
    lowered = lower_task(task)
    assert "in_loop" in _kernel(lowered)
    assert uniform_exits(Context(task), lowered) is None


OWN_CONDITION = r"""
__global__ void own_condition(const int* x, int* y, int n) {
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    while (true) {                 // left on the thread's own value
        v = v / 2;
        __syncthreads();
        if (v < 3) break;
    }
    y[blockIdx.x * blockDim.x + t] = v;
}
"""
SOME_ENTER = r"""
__global__ void some_enter(const int* x, int* y, int n) {
    __shared__ int done;
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    if (t < 32) {                  // not all threads enter
        while (true) {
            if (t == 0) done = v > 4;
            __syncwarp();
            if (done) break;
            v = v - 1;
            __syncwarp();
        }
    }
    y[blockIdx.x * blockDim.x + t] = v;
}
"""
RETURN_INSIDE = r"""
__global__ void return_inside(const int* x, int* y, int n) {
    __shared__ int done;
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    while (true) {                 // a thread may return inside
        if (t == 0) done = v < 2;
        __syncthreads();
        if (done) break;
        if (v == 7) return;
        v = v - 1;
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + t] = v;
}
"""
WRITTEN_AFTER_TEST = r"""
__global__ void written_after_test(const int* x, int* y, int n) {
    __shared__ int done;
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    if (t == 0) done = 0;
    __syncthreads();
    while (true) {
        __syncthreads();
        if (done) break;   // a later thread would see an earlier one's write below
        if (v > 50) done = 1;
        v = v + 3;
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + t] = v;
}
"""


@pytest.mark.parametrize("source", [OWN_CONDITION, SOME_ENTER, RETURN_INSIDE, WRITTEN_AFTER_TEST],
                         ids=["own_condition", "some_enter", "return_inside", "written_after_test"])
def test_loops_some_threads_may_leave_alone_keep_their_flags(tmp_path, source):
    task = _task(tmp_path, source)
    lowered = lower_task(task)
    assert "in_loop" in _kernel(lowered)
    assert uniform_exits(Context(task), lowered) is None


def test_uniform_expressions_read_only_shared_names_and_assign_nothing():
    names = {"done", "n", "blockIdx", "BLOCK"}
    assert is_uniform("done == 0 && n > blockIdx.x * BLOCK", names)
    assert is_uniform("(unsigned int)n > 3u", names | {"unsigned", "int"})
    assert not is_uniform("done == t", names)
    assert not is_uniform("(done = 0)", names)
    assert not is_uniform("done++ > 1", names)
    assert not is_uniform("f(done)", names | {"f"})


@pytest.mark.parametrize("name", ["barrier_while_break", "nbody_tiles", "layernorm_rows", "matvec_warp_per_row",
                                  "scan_multi_block", "shared_atomics_float", "local_array_across_barrier"])
def test_own_copies_stored_once_stay_correct(box, name):
    task = load_task(CORPUS / name / "task.json")
    ctx = Context(task)
    base = perthread_stack(ctx, lower_task(task)) or lower_task(task)
    new = owned_stores(ctx, base)
    assert new is not None and ("cudaopt_own_" in new or "cudaopt_set_" in new)
    assert owned_stores(ctx, new) is None  # done once
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_a_shared_flag_set_to_one_literal_is_set_once_per_loop(box):
    task = load_task(CORPUS / "barrier_while_break" / "task.json")
    ctx = Context(task)
    new = owned_stores(ctx, uniform_exits(ctx, perthread_stack(ctx, lower_task(task))))
    assert "#pragma omp simd reduction(|:cudaopt_set_active)" in new
    assert "if (cudaopt_set_active) active = 1;" in new
    assert re.search(r"if \(cudaopt_own_v != 1u\) \{\s*cudaopt_own_v = ", new)
    assert "v[tid] = cudaopt_own_v;" in new and "steps[tid] = cudaopt_own_steps;" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


LOWERED = """namespace cudacpu_kernels {
void k(dim3 gridDim, dim3 blockDim, std::size_t /*dynamicSharedBytes*/, int* y) {
    const unsigned int nthreads = blockDim.x * blockDim.y * blockDim.z;
    cudacpu::PerThread<int> a(nthreads);
    cudacpu::PerThread<int> b(nthreads);
    int flag;  // __shared__: one per block
    for (unsigned int tz = 0; tz < blockDim.z; ++tz)
        for (unsigned int ty = 0; ty < blockDim.y; ++ty)
            #pragma omp simd
            for (unsigned int tx = 0; tx < blockDim.x; ++tx) {
                const unsigned int tid = (tz * blockDim.y + ty) * blockDim.x + tx;
                if (a[tid] > 0) { a[tid] = 1; continue; }
                if (b[tid] > 0) { b[tid] = b[tid ^ 1]; flag = 1; }
                if (flag == 2) flag = 1;
            }
}
}
"""


def test_leaving_statements_copies_of_other_threads_and_read_flags_are_left_alone(tmp_path):
    task = _task(tmp_path, WHILE_SHARED)
    assert owned_stores(Context(task), LOWERED) is None


THROUGH_POINTER = r"""
__global__ void through_pointer(const int* x, int* y, int n) {
    __shared__ int done;
    int* flag = &done;
    int t = threadIdx.x;
    int v = x[blockIdx.x * blockDim.x + t];
    __syncthreads();
    if (t == 0) done = 0;
    __syncthreads();
    while (true) {
        __syncthreads();
        if (done) break;
        if (v > 55) *flag = 1;   // the region writes what its exit tests, through a pointer
        v = v + 1;
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + t] = v;
}
"""


def test_shared_scalars_a_pointer_reaches_are_neither_exits_nor_flags(tmp_path):
    task = _task(tmp_path, THROUGH_POINTER)
    lowered = lower_task(task)
    assert uniform_exits(Context(task), lowered) is None
    assert "cudaopt_set_done" not in (owned_stores(Context(task), lowered) or "")
