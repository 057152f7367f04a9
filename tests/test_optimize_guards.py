"""tools/optimize/guards.py: which guards are proven to admit one contiguous range of threads,
and the guard-free regions the `specialize` step makes of them (checked with real g++)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.analysis import code as C
from tools.optimize.analysis.guards import Shape, Unproven, admitted_bounds, guarded_region, hoisted_guards, param_shapes
from tools.optimize.base import Context
from tools.optimize.passes.guarded_ranges import guarded_thread_range
from tools.optimize.passes.serial_launches import parallel_small_grids, serial_launches, serial_small_grids
from tools.optimize.passes.specialize import specialize, specialize_parallel
from tools.spec import load_task
from tools.verify import check

ROOT = Path(__file__).resolve().parent
X = Shape(1, False, True)
ENV = {"threadIdx.x": X, "tx": X, "n": Shape(0, True, False), "m": Shape(0, False, True)}
LOWERING_DECL = "const uint3 threadIdx = make_uint3(tx, ty, tz);"


@pytest.mark.parametrize("guard, side", [
    ("((((int)blockIdx.x) * 32) + (((int)threadIdx.x) >> 5)) < 75", "hi"),  # TVM's flattened guard
    ("blockIdx.x * blockDim.x + threadIdx.x < n", "hi"),
    ("(int)threadIdx.x - 1 >= n", "lo"),
    ("threadIdx.x / 4 + 7 <= m", "hi"),
    ("100 - (int)threadIdx.x * 2 > n", "hi"),  # decreasing in x: holds on a prefix
])
def test_monotone_guards_are_proven(guard, side):
    bounds = admitted_bounds(guard, ENV, admits_when_true=True)
    assert [b.side for b in bounds] == [side]


def test_conjunctions_and_equality_give_both_ends():
    bounds = admitted_bounds("threadIdx.x >= 3 && threadIdx.x < n", ENV, admits_when_true=True)
    assert sorted(b.side for b in bounds) == ["hi", "lo"]
    assert sorted(b.side for b in admitted_bounds("(int)threadIdx.x == n", ENV, admits_when_true=True)) == ["hi", "lo"]
    # `if (x < 3 || x >= n) continue;` admits [3, n)
    assert sorted(b.side for b in admitted_bounds("threadIdx.x < 3 || threadIdx.x >= n", ENV, admits_when_true=False)) == ["hi", "lo"]


@pytest.mark.parametrize("guard", [
    "threadIdx.x - 1 < n",  # unsigned subtraction wraps at x = 0
    "threadIdx.x % 32 < 16",  # remainders are not monotone
    "(threadIdx.x & 1) == 0",
    "threadIdx.x < idx[threadIdx.x]",  # a memory read
    "threadIdx.x < f(n)",  # a call
    "threadIdx.x < n + threadIdx.x",  # x on both sides
    "(int)threadIdx.x - 5 < m",  # a signed value that may be negative, compared in unsigned arithmetic
    "threadIdx.x * n < 64",  # a product by a non-constant
    "threadIdx.x != 3",
    "threadIdx.x < 3 ? 1 : 0",
])
def test_unproven_guards_are_refused(guard):
    with pytest.raises(Unproven):
        admitted_bounds(guard, ENV, admits_when_true=True)


def test_region_with_effects_before_its_guard_is_left_alone():
    ok = f"{LOWERING_DECL}\nint i = blockIdx.x * blockDim.x + threadIdx.x;\nif (i < n) {{ y[i] = 2 * x[i]; }}\n"
    assert guarded_region(ok, {"n": Shape(0, True, False)}) is not None
    assert guarded_region(ok.replace("int i =", "atomicAdd(&count, 1);\nint i ="), {}) is None
    assert guarded_region(ok.replace("int i = blockIdx.x * blockDim.x + threadIdx.x;", "int i = perm[threadIdx.x];"), {}) is None
    assert guarded_region(ok + "y[0] = 1;\n", {}) is None  # more than the guarded statement
    assert guarded_region(ok.replace("y[i] = 2 * x[i];", "y[i] = 2 * x[i]; n = 0;"), {}) is None  # changes its own bound
    assert guarded_region(ok.replace("y[i] = 2 * x[i];", "y[i] = 2 * x[i]; n >>= 1;"), {}) is None
    assert guarded_region(ok.replace("}\n", "} else { y[i] = 0; }\n"), {}) is None


def test_a_guard_inside_a_loop_of_one_trip_is_found_and_the_loop_kept_as_a_constant():
    # TVM's `#pragma unroll for (int ax1_0 = 0; ax1_0 < 1; ++ax1_0) { if (threadIdx.x < 63) {...} }`,
    # in a thread loop of the sync transformations (its 64-bit thread id)
    region = (f"{LOWERING_DECL}\nconst std::size_t tid = (std::size_t(tz) * blockDim.y + ty) * blockDim.x + tx;\n"
              "// #pragma unroll\nfor (int ax1_0 = 0; ax1_0 < 1; ++ax1_0) {\n"
              "  if (((int)threadIdx.x) < 63) { y[tid + ax1_0] = 2 * x[tid]; }\n}\n")
    found = guarded_region(region, {})
    assert found is not None and "const int ax1_0 = 0;" in found.body and "y[tid + ax1_0] = 2 * x[tid];" in found.body
    assert "< 63" in found.bounds[-1]
    # a break or continue there leaves the loop of one trip, not the thread's loop: left alone
    assert guarded_region(region.replace("2 * x[tid]; }", "2 * x[tid]; continue; }"), {}) is None
    # statements after the loop, or a loop of more trips, are not the guarded region
    assert guarded_region(region + "y[0] = 1;\n", {}) is None
    assert guarded_region(region.replace("ax1_0 < 1;", "ax1_0 < 2;"), {}) is None


def test_a_term_the_same_for_every_thread_is_evaluated_once(kernel_task, box):
    """`blockIdx.x < m` does not vary with threadIdx.x: one call decides all threads or none, no
    binary search (stride_loops' row trips, TVM's sum_1 1.48x); the kernel stays correct with
    blocks on both sides of it."""
    region = f"{LOWERING_DECL}\nint i = threadIdx.x;\nif (i < n && blockIdx.x < m) {{ y[i] = 2 * x[i]; }}\n"
    found = guarded_region(region, {"n": Shape(0, True, False), "m": Shape(0, True, False)})
    assert found is not None and len(found.bounds) == 3
    assert "cudaopt::first_true_near(blockDim.x" in found.bounds[1] and "(i < n)" in found.bounds[1]
    assert "(0u) ? 0u : blockDim.x)" in found.bounds[2] and "(blockIdx.x < m)" in found.bounds[2]
    source = """
__global__ void rows(const float* x, float* y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < n && blockIdx.x < m)
        y[i] = 2.0f * x[i];
}
"""
    buffers = [{"name": "x", "dtype": "float32", "shape": [256], "role": "input"},
               {"name": "y", "dtype": "float32", "shape": [256], "role": "output", "init": "zeros"}]
    scalars = [{"name": "n", "dtype": "int32", "value": 40}, {"name": "m", "dtype": "int32", "value": 3}]
    task = kernel_task(source, "rows", buffers, scalars, [4], [64])
    variant = guarded_thread_range(Context(task), lower_task(task))
    assert variant is not None and "(0u) ? 0u : blockDim.x)" in variant
    report = check(task, variant, box, seeds=[11, 12], threads=[1, 2])
    assert report.correct, report.summary()


def test_param_types_decide_signedness():
    shapes = param_shapes(["float* __restrict__ y", "int n", "unsigned int m", "const size_t len"])
    assert shapes == {"n": Shape(0, True, False), "m": Shape(0, False, True), "len": Shape(0, False, True)}


def test_specialized_tvm_style_kernels_lose_their_guards_and_stay_correct(box):
    task = load_task(ROOT / "optimize_fixtures" / "tvm_guarded" / "task.json")
    faithful = lower_task(task)
    variant = specialize(Context(task), faithful)
    assert variant is not None
    for k in C.kernels(variant):
        body = k.body(variant)
        assert "for (unsigned int tx = tx_lo; tx < tx_hi; ++tx)" in body
        assert "if (i >= n) continue;" not in body and ") < 75) {" not in body.split("first_true")[-1]
        assert "> gridDim{};" in body and "small launches on the calling thread" in body
    report = check(task, variant, box, seeds=[11, 12], threads=[1, 2])
    assert report.correct, report.summary()


def test_large_launches_keep_their_parallel_loop():
    task = load_task(ROOT / "optimize_fixtures" / "tvm_guarded" / "task.json")
    faithful = lower_task(task)
    small = serial_small_grids(Context(task), faithful)
    assert small is not None and small.count("#pragma omp parallel for") == faithful.count("#pragma omp parallel for")
    big = task.model_copy(update={"launches": [launch.model_copy(update={"grid": [400]}) for launch in task.launches]})
    assert serial_small_grids(Context(big), faithful) is None


def test_the_tasks_large_launches_run_serially_and_larger_ones_in_parallel(box):
    task = load_task(ROOT / "kernels" / "reduce_tree_shared" / "task.json")  # 196 blocks of 256 threads
    ctx, faithful = Context(task), lower_task(task)
    assert serial_small_grids(ctx, faithful) is None
    serial = serial_launches(ctx, faithful)
    assert serial is not None and serial_launches(ctx, serial) is None
    twin = re.search(r"if \(1ull \* gridDim\.x \* gridDim\.y \* gridDim\.z \* blockDim\.x \* blockDim\.y \* blockDim\.z < (\d+)ull\)", serial)
    assert twin and int(twin[1]) == 196 * 256 + 1  # this launch serial, any larger one parallel
    assert serial.count("#pragma omp parallel for") == faithful.count("#pragma omp parallel for")
    assert parallel_small_grids(ctx, serial) == faithful
    report = check(task, serial, box, seeds=[11], threads=[1, 2])
    assert report.correct, report.summary()
    small = task.model_copy(update={"launches": [launch.model_copy(update={"grid": [8]}) for launch in task.launches]})
    assert serial_launches(Context(small), faithful) is None  # serial_small_grids' launches


@pytest.mark.parametrize("fixture", [("optimize_fixtures", "tvm_guarded"), ("kernels", "int64_block_sums"),
                                     ("kernels", "argmax_block")])
def test_small_launches_made_parallel_again_are_specialize_without_the_serial_twin(fixture, box):
    # both forms serial_small_grids writes (a serial twin of the loop nest, an OpenMP `if` clause)
    task = load_task(ROOT.joinpath(*fixture) / "task.json")
    ctx, faithful = Context(task), lower_task(task)
    serial = specialize(ctx, faithful)
    assert "small launches on the calling thread" in serial
    parallel = parallel_small_grids(ctx, serial)
    assert parallel == specialize_parallel(ctx, faithful)
    assert "small launches" not in parallel and parallel_small_grids(ctx, parallel) is None
    report = check(task, parallel, box, seeds=[11], threads=[1, 2])
    assert report.correct, report.summary()


def test_the_if_clause_form_is_undone_too():
    region = ("    #pragma omp parallel if(1ull * gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z "
              ">= 32768ull)  // tools.optimize: small launches on the calling thread\n    {\n    }\n")
    assert parallel_small_grids(None, region) == "    #pragma omp parallel\n    {\n    }\n"


TVM_STEP = (f"{LOWERING_DECL}\nint cse_v1 = ((int)threadIdx.x) / 12;\n"
            "if (((int)threadIdx.x) < 144) {\n  y[((int)threadIdx.x)] = 0.0f;\n}\n"
            "for (int k = 0; k < 103; ++k) {\n  // #pragma unroll\n"
            "  if (((int)threadIdx.x) < 144) {\n    y[((int)threadIdx.x)] = y[((int)threadIdx.x)] + x[k];\n  }\n}\n")


def test_a_guard_retested_in_every_trip_leaves_the_loop_and_joins_the_one_before():
    hoisted = hoisted_guards(TVM_STEP)
    assert hoisted is not None and hoisted.count("if (") == 1
    guard_at, loop_at = hoisted.index("if (((int)threadIdx.x) < 144)"), hoisted.index("for (int k = 0; k < 103; ++k)")
    assert guard_at < hoisted.index("y[((int)threadIdx.x)] = 0.0f;") < loop_at
    region = guarded_region(hoisted, {})  # now the region guarded_thread_range runs over [0, 144)
    assert region is not None and "< 144" in region.bounds[-1] and "if (" not in region.body


@pytest.mark.parametrize("old, new", [
    ("< 144) {\n    y[((int)threadIdx.x)] = y[((int)threadIdx.x)] + x[k];",  # the loop changes what the guard reads
     "< n) {\n    y[((int)threadIdx.x)] = y[((int)threadIdx.x)] + x[k]; n = n - 1;"),
    ("((int)threadIdx.x) < 144) {\n    y", "((int)threadIdx.x) < k) {\n    y"),  # the guard reads the counter
    ("x[k];\n  }\n}", "x[k];\n  } else { y[0] = 1.0f; }\n}"),  # an else branch
    ("k < 103", "k < 0"),  # a loop of no trip never tested its guard
    ("((int)threadIdx.x) < 144) {\n    y", "flag[((int)threadIdx.x)] < 144) {\n    y"),  # a memory read
])
def test_guards_that_may_change_or_be_skipped_stay_in_the_loop(old, new):
    assert old in TVM_STEP
    changed = TVM_STEP.replace(old, new).replace("if (((int)threadIdx.x) < 144) {\n  y[((int)threadIdx.x)] = 0.0f;\n}\n", "")
    assert hoisted_guards(changed) is None


def test_launch_extents_stay_constants_inside_the_parallel_region(vectorized_lines):
    # A `constexpr dim3` local is shared by reference with the OpenMP region: its loops then read
    # the extents from memory and g++ left this stencil's thread loops scalar (gathers).
    task = load_task(ROOT / "kernels" / "stencil_1d_shared" / "task.json")
    variant = specialize_parallel(Context(task), lower_task(task))
    assert "constexpr cudaopt::Extent<79, 1, 1> gridDim{}; constexpr cudaopt::Extent<128, 1, 1> blockDim{};" in variant
    vectorized, report = vectorized_lines(variant)
    region = variant[:variant.index("#pragma omp parallel for")].count("\n") + 1  # its first line
    assert variant.count("#pragma omp simd") == 2  # the tile's load and the stencil, both in the region
    assert len({n for n in vectorized if n > region}) == 2, report[-2000:]


@pytest.mark.parametrize("n, m", [(40, 3), (-5, 70), (63, 0), (1000, -1), (20, 30)])
def test_a_guard_on_the_thread_index_starts_its_search_at_the_other_side(kernel_task, box, n, m):
    """`tid < s` ends at s, `t <= n` at n + 1, `threadIdx.x >= m` starts at m, `i + 3 < n + 100` (i = blockIdx.x *
    blockDim.x + t) ends at n + 100 - (i + 3) evaluated at t = 0: first_true_near confirms the guess with
    two calls of the predicate instead of searching (reduce_tree_shared 1.54x with 1 thread, measured
    in one process). A guess outside the block, or a signed bound below zero, still gives the range
    the guard admits: the kernel stays correct for bounds on both sides of the block."""
    region = f"{LOWERING_DECL}\nunsigned int tid = threadIdx.x;\nif (tid < s) {{ y[tid] = 1; }}\n"
    found = guarded_region(region, {"s": Shape(0, False, True)})
    assert found is not None and any("first_true_near(blockDim.x" in b and "return s; })(0u)" in b for b in found.bounds)
    inclusive = guarded_region(region.replace("tid < s", "tid <= s"), {"s": Shape(0, False, True)})
    assert any("return (s) + 1; })(0u)" in b for b in inclusive.bounds)
    shifted = guarded_region(region.replace("tid < s", "tid + 1 < s"), {"s": Shape(0, False, True)})
    assert any("return s - (tid + 1); })(0u)" in b for b in shifted.bounds)  # x + c < R ends at R - c
    scaled = guarded_region(region.replace("tid < s", "2 * tid < s"), {"s": Shape(0, False, True)})
    assert scaled is not None and not any("first_true_near" in b for b in scaled.bounds)  # not x plus a constant: searched
    source = """
__global__ void ranges(const float* x, float* y, int n, int m) {
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (t <= n && threadIdx.x >= m && i + 3 < n + 100)
        y[i] = 2.0f * x[i];
}
"""
    buffers = [{"name": "x", "dtype": "float32", "shape": [256], "role": "input"},
               {"name": "y", "dtype": "float32", "shape": [256], "role": "output", "init": "zeros"}]
    scalars = [{"name": "n", "dtype": "int32", "value": n}, {"name": "m", "dtype": "int32", "value": m}]
    task = kernel_task(source, "ranges", buffers, scalars, [4], [64])
    variant = guarded_thread_range(Context(task), lower_task(task))
    assert variant is not None and variant.count("first_true_near(blockDim.x") >= 3
    report = check(task, variant, box, seeds=[13, 14], threads=[1, 2])
    assert report.correct, report.summary()


def test_guards_on_macros_and_template_parameters_are_proven(kernel_task, box):
    """`#define HALF 40` is a signed constant to guards.py (an unknown name is not: `t - 8 < HALF`,
    negative for the first threads, would compare in unsigned arithmetic if HALF were unsigned),
    and so is a template kernel's `int BLOCK`."""
    from tools.optimize.analysis.guards import kernel_shapes

    source = """
#define HALF 40
__global__ void halves(const float* x, float* y, int n) {
    int t = threadIdx.x;
    if (t - 8 < HALF)
        y[blockIdx.x * blockDim.x + t] = 2.0f * x[blockIdx.x * blockDim.x + t];
}
"""
    buffers = [{"name": "x", "dtype": "float32", "shape": [256], "role": "input"},
               {"name": "y", "dtype": "float32", "shape": [256], "role": "output", "init": "zeros"}]
    task = kernel_task(source, "halves", buffers, [{"name": "n", "dtype": "int32", "value": 256}], [4], [64])
    faithful = lower_task(task)
    assert kernel_shapes(faithful, C.kernels(faithful)[0])["HALF"] == Shape(0, True, True)
    variant = guarded_thread_range(Context(task), faithful)
    assert variant is not None and "first_true_near(blockDim.x" in variant
    report = check(task, variant, box, seeds=[3], threads=[1, 2])
    assert report.correct, report.summary()
    template = lower_task(load_task(ROOT / "kernels" / "reduce_two_pass_template" / "task.json"))
    assert kernel_shapes(template, C.kernels(template)[0])["BLOCK"] == Shape(0, True, False)


@pytest.mark.parametrize("name", ["atomic_float_scatter_add", "atomic_cas_loops", "histogram_shared_atomics"])
def test_the_serial_twin_of_a_kernel_with_atomics_makes_them_plain(name, box):
    # nothing runs beside the calling thread there, so its atomics need no lock prefix or CAS loop;
    # the parallel nest keeps the real ones
    task = load_task(ROOT / "kernels" / name / "task.json")
    ctx, faithful = Context(task), lower_task(task)
    serial = serial_small_grids(ctx, faithful)
    assert serial is not None
    twins = [k.body(serial).split("} else {", 1) for k in C.kernels(serial)
             if "small launches on the calling thread" in k.body(serial)]
    assert twins
    for twin, parallel in twins:
        assert "CUDA_CPU_ONE_THREAD_ATOMICS" in twin and "CUDA_CPU_ONE_THREAD_ATOMICS" not in parallel
    assert "CUDA_CPU_ONE_THREAD_ATOMICS" not in (parallel_small_grids(ctx, serial) or "")
    report = check(task, serial, box, seeds=[11, 12], threads=[1, 2])
    assert report.correct, report.summary()
