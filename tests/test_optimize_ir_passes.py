"""Passes over the lowered kernel's IR (tools/optimize/base.py: `Code`, `ir_transform`):
threads_parallel rewrites the IR and the kernel is printed again by the lowering's
printer; a text pass that changes a kernel leaves the IR passes a reason instead of stale IR.
The cases are CUDA source, lowered; the kernels that differ from them only in spelling (the
lowering's thread counters renamed where the kernel has locals of their names) get the same
passes. Real g++ for correctness."""

from __future__ import annotations

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Code, Context, NotApplicable
from tools.optimize.passes.threads_parallel import THREADS_PARALLEL
from tools.verify import check

SCALE = r"""
__global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}
"""

# the same kernel with parameters named as the lowering's thread counters, which keep their names
# (host code passes them): the lowering's counters become tx_2, ty_2
SCALE_RESPELLED = r"""
__global__ void scale(const float* x, float* y, int n, int tx, int ty) {
    int i = blockIdx.x * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (tx + ty) * x[i];
}
"""

BARRIER = r"""
__global__ void scale(const float* x, float* y, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    y[blockIdx.x * 64 + t] = 2.0f * s[63 - t];
}
"""


def _task(kernel_task, source, grid, block):
    scalars = [{"name": "n", "dtype": "int32", "value": 256}]
    if source is SCALE_RESPELLED:
        scalars += [{"name": "tx", "dtype": "int32", "value": 1}, {"name": "ty", "dtype": "int32", "value": 1}]
    return kernel_task(source, "scale", [{"name": "x", "dtype": "float32", "shape": [256], "role": "input"},
                                         {"name": "y", "dtype": "float32", "shape": [256], "role": "output",
                                          "init": "zeros"}], scalars, grid, block)


def _correct(box, task, code):
    report = check(task, code, box, seeds=[31, 32], threads=[1, 2])
    assert report.correct, report.summary()


def test_the_code_carries_the_ir_its_kernels_were_printed_from(kernel_task):
    task = _task(kernel_task, SCALE, [1], [64])
    lowered = lower_task(task)
    code = Code.of(task, lowered)
    assert code == lowered and set(code.kernels) == {"scale"}
    assert code.printed("scale") in lowered
    assert Code.of(task, "// not the lowering's output\n").kernels == {}


@pytest.mark.parametrize("source", [SCALE, SCALE_RESPELLED])
def test_threads_parallel_runs_the_one_thread_loop_in_parallel_and_stays_correct(box, kernel_task, source):
    task = _task(kernel_task, source, [1], [64])  # one block: fewer than any machine's cores
    import tools.optimize.passes.threads_parallel as tp
    saved, tp.cores = tp.cores, lambda: 4
    try:
        new = THREADS_PARALLEL.apply(Context(task), lower_task(task))
    finally:
        tp.cores = saved
    assert isinstance(new, Code) and new.kernels["scale"].parallel_threads
    kernel = new.printed("scale")
    assert "// blocks in order: too few to share" in kernel and "#pragma omp parallel for simd schedule(static)" in kernel
    assert "collapse(3)" not in kernel
    _correct(box, task, new)


def test_threads_parallel_says_why_a_kernel_with_barriers_or_many_blocks_keeps_its_loops(kernel_task):
    with pytest.raises(NotApplicable, match="scale: it has __shared__ memory"):
        THREADS_PARALLEL.apply(Context(task := _task(kernel_task, BARRIER, [1], [64])), lower_task(task))
    with pytest.raises(NotApplicable, match="scale: its launches have at least as many blocks"):
        THREADS_PARALLEL.apply(Context(task := _task(kernel_task, SCALE, [64], [4])), lower_task(task))


def test_a_text_pass_that_changes_a_kernel_leaves_the_ir_passes_a_reason(kernel_task, monkeypatch):
    import tools.optimize.passes.threads_parallel as tp
    monkeypatch.setattr(tp, "cores", lambda: 4)
    task = _task(kernel_task, SCALE, [1], [64])
    ctx = Context(task)
    code = Code.of(task, lower_task(task))
    # a text pass that leaves the kernel's text alone keeps its IR valid ...
    untouched = code.after_text("#pragma GCC optimize(\"O3\")\n" + code, "pragma")
    assert set(untouched.kernels) == {"scale"} and not untouched.changed_by
    assert THREADS_PARALLEL.apply(ctx, untouched).startswith("#pragma GCC optimize")
    # ... one that rewrites it marks it: the IR passes then say which pass changed it
    edited = code.after_text(code.replace("2.0f *", "2.0f * 1.0f *"), "edit")
    assert edited.changed_by == {"scale": "edit"} and not edited.kernels
    with pytest.raises(NotApplicable, match="scale: its text was changed by edit"):
        THREADS_PARALLEL.apply(ctx, edited)


