"""tools/optimize/stride_loops.py: a loop striding over the threads (grid- and block-stride loops,
`if (G) for (...)`) runs trip by trip across the threads, the thread loop innermost. Corpus
kernels stay correct with 1 and 2 threads, among them threads that return before the loop and
uneven trip counts; loops that write shared memory, leave early, change their counter or run the
same trips in every thread are refused. Real g++, real sandbox; no timing (speed:
scripts/bench_speed.py --corpus --only-sync; dot_product_double 2.5x the faithful lowering with
specialize_parallel, measured in one process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context, NotApplicable
from tools.optimize.passes.stride_loops import stride_loops
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [3579, 3580]


@pytest.mark.parametrize("name, loops", [
    ("dot_product_double", 1),  # grid-stride accumulation: 30000 elements over 2560 threads, uneven trips
    ("column_sums_2d_block", 1),  # if (col < cols) for (r = threadIdx.y; r < rows; r += 8)
    ("matvec_warp_per_row", 1),  # threads past the last row return before the loop
    ("softmax_rows", 3),  # three block-stride loops in three regions
])
def test_stride_loops_run_across_the_threads_and_stay_correct(box, name, loops):
    task = load_task(CORPUS / name / "task.json")
    new = stride_loops(Context(task), lower_task(task))
    assert new is not None and new.count("trip by trip across the threads") == loops
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_the_trip_index_is_affine_in_the_thread():
    task = load_task(CORPUS / "dot_product_double" / "task.json")
    new = stride_loops(Context(task), lower_task(task))
    # each trip runs over the threads whose index is still below n, found per trip: no test per thread
    assert "cudaopt_any0 |= tx_lo < tx_hi;" in new and "if (!(i < n)) continue;" not in new
    # an int counter's trip in int arithmetic (unsigned arithmetic converted back made its loads gathers)
    # (the kernel's local `tid` is `tid_2` in the lowered code: `tid` is the lowering's own)
    assert "const int i = (int)((int)blockIdx.x * (int)blockDim.x + tid_2) + (int)cudaopt_n0 * (int)((int)blockDim.x * (int)gridDim.x);" in new
    assert "first_true_near(blockDim.x" in new and "return n - i; })(0u)" in new  # each trip's end guessed at n - i(0)
    assert "double acc = cudaopt_s0_acc[cudaopt_t];" in new and "cudaopt_s0_acc[cudaopt_t] = acc;" in new


def test_the_threads_own_index_is_recomputed_not_saved(box):
    """After specialize_parallel each thread loop declares `const std::size_t tid = ...`: every
    loop stride_loops makes declares it again, so that per-thread arrays stay indexed by an
    affine tid (saved in an array, tid made every `acc[tid]` a gather: reduce_warp_shuffle 0.86x
    with the copy, 1.07x without, measured in one process)."""
    from tools.optimize.passes.specialize import specialize_parallel
    from tools.optimize.passes.sync_transforms import sync_together

    task = load_task(CORPUS / "reduce_warp_shuffle" / "task.json")
    ctx = Context(task)
    code = lower_task(task)
    code = specialize_parallel(ctx, sync_together(ctx, code) or code)
    new = stride_loops(ctx, code)
    assert new is not None and "cudaopt_s0_tid" not in new
    assert new.count("const std::size_t tid = (std::size_t(tz) * blockDim.y + ty) * blockDim.x + tx;") >= 3
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


REFUSED = r"""
__global__ void refused(const float* x, float* y, int n) {
    __shared__ float s[64];
    int t = threadIdx.x;
    float a = 0.0f;
    for (int c = t; c < n; c += blockDim.x) s[n % 64] += x[c];   // writes shared memory at one place for all threads
    for (int c = t; c < n; c += blockDim.x) { if (x[c] < 0.0f) break; a += x[c]; }   // leaves early
    for (int c = t; c < n; c += blockDim.x) { a += x[c]; c += 1; }   // changes its counter
    for (int c = 0; c < n; c += 1) a += x[c];   // the same trips in every thread
    y[blockIdx.x * blockDim.x + t] = a + s[t];
}
"""


def test_loops_that_are_not_independent_strides_are_refused(tmp_path):
    (tmp_path / "refused.cu").write_text(REFUSED)
    raw = {"name": "refused", "cuda": "refused.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [500], "role": "input"},
                       {"name": "y", "dtype": "float32", "shape": [128], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": 500}],
           "launches": [{"kernel": "refused", "grid": [2], "block": [64], "args": ["x", "y", "n"]}],
           "reference": {"kind": "lowered"}}
    (tmp_path / "refused.json").write_text(json.dumps(raw))
    task = load_task(tmp_path / "refused.json")
    with pytest.raises(NotApplicable, match="that can run trip by trip"):
        stride_loops(Context(task), lower_task(task))


@pytest.mark.parametrize("kernel, int_form, unsigned_form", [
    # three block-stride loops over a row: `row[c]`, `gamma[c]` and `beta[c]` (1.4x slower gathered, one process)
    ("layernorm_rows", r"\(int\)\(\(int\)threadIdx\.x\) \+ \(int\)(cudaopt_n\d) \* \(int\)\(\(int\)blockDim\.x\)",
     r"(threadIdx.x) + (int)\1 * (blockDim.x)"),
    # a grid-stride loop `i = blockIdx.x * blockDim.x + tid`: a[i] * b[i] (14.2 us -> 8.1 us contiguous, 1 thread)
    ("dot_product_double", r"\(int\)\(\(int\)blockIdx\.x \* \(int\)blockDim\.x \+ tid_2\)",
     r"(int)(blockIdx.x * blockDim.x + tid_2)"),
])
def test_an_int_counters_loads_are_contiguous_not_gathered(tmp_path, kernel, int_form, unsigned_form):
    """With the trip computed in unsigned arithmetic and converted to int, g++ read through the
    counter with gather instructions; in int arithmetic, with contiguous loads."""
    import re
    import subprocess

    from tools.build import DEFAULT_CXXFLAGS
    from tools.cuda import runtime_include_dir
    from tools.optimize.passes.specialize import specialize_parallel

    task = load_task(CORPUS / kernel / "task.json")
    new = stride_loops(Context(task), specialize_parallel(Context(task), lower_task(task)))
    assert len(re.findall(int_form, new)) >= 2
    unsigned = re.sub(int_form, unsigned_form, new)

    def gathers(source):
        path = tmp_path / "k.cpp"
        path.write_text(source)
        subprocess.run(["g++", *DEFAULT_CXXFLAGS, "-fPIC", "-c", f"-I{runtime_include_dir()}", str(path), "-o",
                        str(tmp_path / "k.o")], check=True)
        return subprocess.run(["objdump", "-d", str(tmp_path / "k.o")], capture_output=True, text=True, check=True).stdout.count("gather")
    assert gathers(unsigned) > 0  # the form the counter had: the loads gathered
    assert gathers(new) < gathers(unsigned)


def test_int_locals_of_launch_coordinates_are_recomputed_in_int_arithmetic():
    """column_sums_2d_block's `int col = blockIdx.x * 32 + threadIdx.x;`: recomputed in every trip
    in int arithmetic (converted from unsigned arithmetic, its loads were gathers: 2.0x slower with
    1 thread, measured in one process); sums, differences and products only (unsigned arithmetic
    converted to int is int arithmetic modulo 2^32 for those). Locals of other types, and
    expressions with other operators, keep their text."""
    from tools.optimize.passes.stride_loops import _INT_LOCAL, _int_locals

    task = load_task(CORPUS / "column_sums_2d_block" / "task.json")
    new = stride_loops(Context(task), lower_task(task))
    trips = new[new.index("trip by trip across the threads"):]
    assert "int col = (int)blockIdx.x * 32 + (int)threadIdx.x;" in trips
    for kept in ("unsigned int i = blockIdx.x * 32u + threadIdx.x;", "int w = threadIdx.x / 32;",
                 "int h = threadIdx.x >> 1;", "long j = blockIdx.x * blockDim.x + threadIdx.x;"):
        assert _int_locals(kept) == kept
    assert _int_locals("int d = threadIdx.x - 1u;") == "int d = (int)threadIdx.x - 1;"
    # in a loop's body, the same for plain ints only: an unsigned local's wrap-around is meant
    body = "int s = blockIdx.x * 8 + j - 3; unsigned int u = blockIdx.x - 1u; const int c = tx + 1; long int l = tx;"
    assert [m["head"].strip() for m in _INT_LOCAL.finditer(body)] == ["int s =", "const int c ="]
    assert _int_locals("const int k = 2u * tx + bx;") == \
        "const int k = 2 * (int)tx + (int)bx;"


def test_the_search_step_makes_the_launch_extents_constants_first(box):
    """On the faithful lowering (specialize not kept), the stride_loops step specializes first:
    its loops over per-thread arrays vectorize with constant block extents (column_sums_2d_block
    24 us unspecialized, 4.6 us specialized, 1 thread, measured in one process)."""
    from tools.optimize.analysis import code as C
    from tools.optimize.passes.specialize import specialize_parallel
    from tools.optimize.passes.stride_loops import STRIDE_LOOPS

    task = load_task(CORPUS / "column_sums_2d_block" / "task.json")
    ctx, faithful = Context(task), lower_task(task)
    specialized = specialize_parallel(ctx, faithful)
    new = STRIDE_LOOPS.apply(ctx, faithful)
    assert new == stride_loops(ctx, specialized) and C.CONSTANT_EXTENTS.search(new)
    assert STRIDE_LOOPS.apply(ctx, specialized) == new  # code specialized before: not again
    report = check(task, new, box, seeds=[5, 6], threads=[1, 2])
    assert report.correct, report.summary()


def test_a_shared_tile_filled_by_a_block_stride_loop_runs_trip_by_trip(box):
    """conv1d_constant_filter fills its tile with `for (j = threadIdx.x; j < BLOCK + 2 * HALF; j +=
    BLOCK) tile[j] = ...`: a store to shared memory at a place each thread of a trip has its own,
    and a bound of macros (guards.py: signed constants), so each trip runs over the range of
    threads it admits (15.4 us -> 7.2 us with 1 thread, measured in one process)."""
    from tools.optimize.analysis.guards import RANGED_TX_LOOP
    from tools.optimize.passes.specialize import specialize

    task = load_task(CORPUS / "conv1d_constant_filter" / "task.json")
    ctx = Context(task)
    new = stride_loops(ctx, specialize(ctx, lower_task(task)))
    assert new is not None
    trips = new[new.index("trip by trip across the threads"):]
    assert trips.index(RANGED_TX_LOOP) < trips.index("tile[j] = ")
    assert "int src = (int)blockIdx.x * BLOCK + j - HALF;" in trips  # int arithmetic: contiguous loads
    report = check(task, new, box, seeds=[5, 6], threads=[1, 2])
    assert report.correct, report.summary()


def test_template_parameters_are_constants_of_the_trip(box):
    """reduce_two_pass_template's `for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x)`,
    BLOCK a template parameter (`template <int BLOCK>`, two instantiations): the same for every
    thread, so the loop runs trip by trip (29.3 us -> 9.5 us with 1 thread, measured in one process)."""
    from tools.optimize.analysis import code as C
    from tools.optimize.passes.specialize import specialize

    task = load_task(CORPUS / "reduce_two_pass_template" / "task.json")
    ctx = Context(task)
    code = specialize(ctx, lower_task(task))
    kernel = C.kernels(code)[0]
    assert C.template_values(code, kernel) == {"BLOCK": "int"}
    plain = lower_task(load_task(CORPUS / "dot_product_double" / "task.json"))
    assert C.template_values(plain, C.kernels(plain)[0]) == {}
    new = stride_loops(ctx, code)
    assert new is not None and "trip by trip across the threads" in new
    report = check(task, new, box, seeds=[5, 6], threads=[1, 2])
    assert report.correct, report.summary()
