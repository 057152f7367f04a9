"""tools.optimize: transformations are checked before they are kept; wrong or slower variants
never replace the input; reordering-sensitive kernels stay within tolerance. Real g++, real
sandbox, the verifier's own check. No timing assertions (speed: scripts/bench_speed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize import TRANSFORMS, Budget, Transform, optimize, search
from tools.optimize.analysis import code as C
from tools.optimize.base import Context, NotApplicable
from tools.spec import load_task
from tools.verify import check

ROOT = Path(__file__).resolve().parent
FAST = Budget(max_variants=3, timing_s=0.05, rounds=2, seeds=2)


def _task(where: str, name: str):
    return load_task(ROOT / where / name / "task.json")


def _transform(name: str) -> Transform:
    return next(t for t in TRANSFORMS if t.name == name)


@pytest.fixture(scope="module")
def cancel():
    task = _task("optimize_fixtures", "gs_cancel")
    return task, lower_task(task)


@pytest.fixture(scope="module")
def accumulate():
    task = _task("optimize_fixtures", "gs_accumulate")
    return task, lower_task(task)


def test_grid_stride_flat_is_one_parallel_simd_loop_and_correct(cancel, box):
    task, faithful = cancel
    flat = _transform("grid_stride_flat").apply(Context(task), faithful)
    assert flat is not None
    kernel = C.kernel_named(flat, "cancel_kernel").text(flat)
    assert "#pragma omp parallel for simd schedule(static)" in kernel
    assert "for (int i = 0; i < n; ++i)" in kernel
    report = check(task, flat, box, seeds=[7, 8, 9], threads=[1, 2])
    assert report.correct, report.summary()


def test_grid_stride_with_per_thread_state_is_left_alone_and_the_pass_says_why(accumulate):
    task, faithful = accumulate
    with pytest.raises(NotApplicable, match="its threads run in more than one region|do more than grid-stride loops"):
        _transform("grid_stride_flat").apply(Context(task), faithful)


def test_launch_constants_and_restrict_stay_correct(accumulate, box):
    task, faithful = accumulate
    ctx = Context(task)
    variant = _transform("restrict").apply(ctx, _transform("launch_constants").apply(ctx, faithful))
    assert "constexpr cudaopt::Extent<4, 1, 1> gridDim{}; constexpr cudaopt::Extent<32, 1, 1> blockDim{};" in variant
    assert "const float* __restrict__ x" in variant
    report = check(task, variant, box, seeds=[11, 12], threads=[1, 2])
    assert report.correct, report.summary()


def test_restrict_refused_when_a_launch_aliases_two_pointers(cancel):
    task, faithful = cancel
    aliased = task.model_copy(deep=True)
    aliased.launches[0].args = ["x", "x", "big", "n"]
    assert _transform("restrict").apply(Context(aliased), faithful) is None


def test_a_pass_that_does_not_apply_says_why_in_the_search_observations(cancel, box):
    task, faithful = cancel

    def never(ctx, code):
        raise NotApplicable("kernel k: no loop of the shape it knows")

    result = search(task, faithful, box, budget=FAST, transforms=[
        Transform("never", "a pass that never applies", never), _transform("threads_parallel")])
    assert [(s.outcome, s.detail) for s in result.steps][0] == ("not_applicable", "kernel k: no loop of the shape it knows")
    said = [o.message for o in result.observations]
    assert "a pass that never applies: does not apply: kernel k: no loop of the shape it knows" in said
    # a real pass's reason: the fixture's launch has more blocks than the machine has cores, or the
    # pass applied (one core): either way the search says what happened to it
    assert any(m.startswith("thread loop as the parallel loop (few blocks): ") for m in said)


def test_a_wrong_variant_is_discarded_and_the_input_kept(cancel, box):
    task, faithful = cancel
    wrong = Transform("wrong", "subtracts twice", lambda ctx, code: code.replace("y[i] = t - big;", "y[i] = t - big - big;"))
    result = search(task, faithful, box, budget=FAST, transforms=[wrong])
    assert result.steps[0].outcome == "incorrect"
    assert C.is_marked(result.code) and not result.improved
    assert result.code.split("\n", 1)[1] == faithful  # the input, marked as searched
    assert result.observations[0].kind == "optimization" and "wrong" in result.observations[0].message


def test_a_much_slower_variant_is_discarded(cancel, box):
    task, faithful = cancel
    spin = "for (volatile int spin = 0; spin < 3000000; ++spin) {}\n"

    def slow(ctx, code):
        k = C.kernel_named(code, "cancel_kernel")
        return code[:k.body_open + 1] + spin + code[k.body_open + 1:]

    result = search(task, faithful, box, budget=FAST, transforms=[Transform("slow", "spins first", slow)])
    assert result.steps[0].outcome == "slower", result.steps
    assert result.code.split("\n", 1)[1] == faithful


def test_a_step_that_only_pays_on_the_input_replaces_the_steps_kept_before_it(cancel, box):
    """A path trap: `shorten` pays and is kept; `drop` pays more on the input but not after
    `shorten`. Marked fresh, `drop` is also tried on the input and replaces the best so far.
    The gaps are twentyfold so that a loaded machine (CI runs two workers on two cores) cannot
    turn a kept step into a slower one."""
    task, faithful = cancel
    k = C.kernel_named(faithful, "cancel_kernel")
    spinning = faithful[:k.body_open + 1] + "for (volatile int spin = 0; spin < 8000000; ++spin) {}\n" + faithful[k.body_open + 1:]
    shorten = Transform("shorten", "spins a twentieth as long", lambda ctx, code: code.replace("spin < 8000000", "spin < 400000"))

    def drop(ctx, code):
        if "spin < 8000000" in code:
            return code.replace("spin < 8000000", "spin < 0")
        return code.replace("spin < 400000", "spin < 8000000")

    budget = Budget(max_variants=4, timing_s=0.05, rounds=2, seeds=2)
    result = search(task, spinning, box, budget=budget, transforms=[shorten, Transform("drop", "spins not", drop, fresh=True)])
    assert [s.outcome for s in result.steps] == ["kept", "slower", "kept"], result.steps
    assert [s.on_input for s in result.steps] == [False, False, True]
    assert "applied to the input instead of after shorten" in result.steps[2].detail
    assert result.applied == ["drop"] and "spin < 0" in result.code


def test_fast_math_never_kept_where_it_changes_results(cancel, box):
    task, faithful = cancel
    result = search(task, faithful, box, budget=FAST, fast_math_ok=True, transforms=[_transform("fast_math")])
    assert result.steps[0].outcome in ("incorrect", "slower"), result.steps
    assert "fast-math" not in result.code


def test_fast_math_not_even_tried_without_configuration(cancel):
    task, faithful = cancel
    assert _transform("fast_math").apply(Context(task, fast_math_ok=False), faithful) is None


def test_optimize_seam_result_is_correct_and_marked(cancel, box):
    task, faithful = cancel
    proposal = optimize(task, faithful, sandbox=box, budget=Budget(max_variants=1, timing_s=0.05, rounds=2, seeds=2))
    code, notes = proposal
    assert C.is_marked(code) and notes.startswith("optimizer:")
    assert proposal.observations and all(o.kind == "optimization" for o in proposal.observations)
    assert check(task, code, box, seeds=[20, 21], threads=[1, 2]).correct
    assert optimize(task, code, sandbox=box, budget=FAST) is None  # already searched: nothing more to try


def test_a_sibling_s_transformations_are_searched_alone_first_and_the_rest_only_where_they_gain_nothing(cancel, box):
    task, faithful = cancel
    keep_any = Budget(max_variants=3, timing_s=0.05, rounds=2, seeds=2, min_gain=0.0, max_loss=0.0)  # no timing decides
    sibling = task.model_copy(update={"optimize_first": ["grid_stride_flat"]})
    code, notes = optimize(sibling, faithful, sandbox=box, budget=keep_any)
    assert C.applied(code) == ["grid_stride_flat"] and "tried first" in notes.splitlines()[0]
    assert len(notes.splitlines()) == 2  # its one step: no other transformation was tried
    # a sibling's step that does not apply here: the whole search runs
    other = task.model_copy(update={"optimize_first": ["fast_math"]})
    code, notes = optimize(other, faithful, sandbox=box, budget=keep_any)
    assert "tried first" not in notes and len(notes.splitlines()) > 2


def _stack(ctx: Context, code: str, names: list[str]) -> tuple[str, list[str]]:
    applied = []
    for name in names:
        variant = _transform(name).apply(ctx, code)
        if variant is not None:
            code, applied = variant, applied + [name]
    return code, applied


def test_nan_and_inf_propagation_survive_the_generic_transformations(box):
    task = _task("kernels", "nan_inf_propagation")
    variant, applied = _stack(Context(task, fast_math_ok=True), lower_task(task),
                              ["inline_minmax", "serial_small_grids", "launch_constants", "restrict", "unroll_loops", "fast_math"])
    assert "fast_math" not in applied  # its tolerance (rtol 1e-6) rules fast-math out before any test
    assert "inline_minmax" in applied and "serial_small_grids" in applied  # fmaxf over NaN and Inf inputs
    report = check(task, variant, box, seeds=[task.inputs.seed + 5, task.inputs.seed + 6], threads=[1, 2])
    assert report.correct, report.summary()


def test_guarded_tree_reduction_runs_only_admitted_threads_and_is_correct(box):
    task = _task("kernels", "reduce_tree_shared")
    variant, applied = _stack(Context(task), lower_task(task), ["guarded_thread_range", "launch_constants"])
    assert applied == ["guarded_thread_range", "launch_constants"]
    assert "for (unsigned int tx = tx_lo; tx < tx_hi; ++tx)" in variant
    report = check(task, variant, box, seeds=[42, 77], threads=[1, 2])
    assert report.correct, report.summary()


def test_guard_with_a_thread_dependent_bound_is_left_alone():
    from tools.optimize.analysis.guards import guarded_region

    ok = "const uint3 threadIdx = make_uint3(tx, ty, tz);\nunsigned int tid = threadIdx.x;\nif (tid < s)\n    a[tid] += a[tid + s];\n"
    assert guarded_region(ok, {}) is not None
    assert guarded_region(ok.replace("tid < s", "tid < idx[tid]"), {}) is None
    assert guarded_region(ok.replace("tid < s", "tid < s + tid"), {}) is None
    assert guarded_region(ok + "b[tid] = 0;\n", {}) is None  # not the whole body


def test_dense_exchange_is_correct_where_every_lane_writes(box):
    task = _task("kernels", "shfl_xor_allreduce")
    variant = _transform("dense_exchange").apply(Context(task), lower_task(task))
    assert variant is not None and "cudaopt::DenseExchange" in variant
    report = check(task, variant, box, seeds=[42, 50], threads=[1, 2])
    assert report.correct, report.summary()


def test_dense_exchange_refused_when_a_lane_may_skip_its_write():
    from tools.optimize.passes.dense_exchange import _dense_ok

    loop = "for (unsigned int tx = 0; tx < blockDim.x; ++tx) {{\n{}\n}}\n"
    masked = loop.format("if (!took_branch[tid]) continue;\nw.put<float>(0, tid, v[tid]);")
    plain = loop.format("w.put<float>(0, tid, v[tid]);")
    reader = loop.format("v[tid] += cudacpu::shfl_down<float>(w, 0, tid, 4);")
    ballot = loop.format("b[tid] = cudacpu::ballot(w, 0, tid, 0xffffffffu);")
    assert _dense_ok(plain + reader, "w")
    assert not _dense_ok(masked + reader, "w")
    assert not _dense_ok(plain + ballot, "w")  # a vote reads which lanes took part


# TVM's guarded read next to a plain one: with AVX-512 and g++'s generic tuning the vectorizer
# refuses it ("no vectype for stmt"); tuned for the CPU family it vectorizes.
GUARDED_READS = """
void sum_two(float* __restrict__ x, float* __restrict__ out, unsigned bx) {
    for (unsigned int tx = 0; tx < 256; ++tx) {
        float a = x[((int)bx * 418) + (int)tx];
        if ((int)tx < 162) a = a + x[((int)bx * 418) + 256 + (int)tx];
        out[tx] = a;
    }
}
"""


def _vectorized(source: str, tmp_path: Path) -> bool:
    import subprocess

    (tmp_path / "guarded.cpp").write_text(source)
    out = subprocess.run(["g++", "-O3", "-march=native", "-c", "guarded.cpp", "-o", "/dev/null", "-fopt-info-vec"],
                         cwd=tmp_path, capture_output=True, text=True, check=True)
    return "loop vectorized" in out.stderr


def test_tune_cpu_only_where_native_tunes_generic_and_then_guarded_reads_vectorize(accumulate, box, tmp_path):
    from tools.optimize.analysis.machine import native_cpu

    task, faithful = accumulate
    cpu = native_cpu()
    assert cpu is not None  # g++ is on every machine this project runs on
    variant = _transform("tune_cpu").apply(Context(task), faithful)
    if cpu[0] == cpu[1]:  # g++ knows this CPU's model: nothing to change
        assert variant is None
        return
    pragma = f'#pragma GCC target("tune={cpu[0]}")'
    assert variant.startswith(pragma) and _transform("tune_cpu").apply(Context(task), variant) is None
    report = check(task, variant, box, seeds=[11, 12], threads=[1, 2])
    assert report.correct, report.summary()
    if "avx512f" in Path("/proc/cpuinfo").read_text():
        assert not _vectorized(GUARDED_READS, tmp_path)
        assert _vectorized(pragma + "\n" + GUARDED_READS, tmp_path)
