"""Issue 8: no optimization changes results beyond the task's tolerance.

The fixtures (tests/optimize_fixtures/exact_*) are kernels built to catch reorderings:
exact_float_reductions (float sums of values of very different magnitudes as a shared-memory
tree, warp shuffles and a per-thread loop; NaN and Inf through max/min/sum reductions,
comparisons and selects), exact_int_semantics (unsigned wrap-around, overflowing int32 products
widened or summed, / and % of negative values), exact_alias_shift (one buffer behind two
pointers at shifted indices), exact_butterflies (`t ^ j` steps: a bitonic sort with NaN and Inf
among the values, Walsh-Hadamard sums of values of very different magnitudes). Each reference follows the kernel's own order, and each fixture has
a `wrong.cu`: what an unsafe optimization would compute, which the checks must reject.

For every fixture, every transformation in tools.optimize.TRANSFORMS (whatever it holds when
the tests run, so later additions are policed too) is applied alone to the faithful lowering and
its variant checked on fresh seeds (not the search's) with 1 and 2 threads; a variant that is
wrong there must be rejected as "incorrect" by the search. Then the whole search runs (every
transformation gets its turn): the versions it kept and its final code must be correct on fresh
seeds, and a variant it produced that is known to be wrong there must be logged as incorrect.
Real g++, real sandbox, the verifier's own check; fast_math is allowed by configuration.
"""

from __future__ import annotations

import difflib
import hashlib
from functools import cached_property
from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.cuda import lower_task
from tools.optimize import TRANSFORMS, Budget, SearchResult, Transform, search
from tools.optimize.analysis import code as C
from tools.optimize.base import Context, NotApplicable
from tools.optimize.search import _first_correct
from tools.spec import Task, load_task
from tools.verify import check
from tools.verify.check import VerifyReport, default_seeds

FIXTURES = Path(__file__).resolve().parent / "optimize_fixtures"
THREADS = [1, 2]
# Every transformation gets its turn, and each fresh one its retry on the input (no time cap);
# timing is short: speed is not asserted here.
SEARCH = Budget(max_variants=2 * len(TRANSFORMS), max_seconds=3600.0, timing_s=0.05, rounds=1, seeds=2)
ONE = Budget(max_variants=1, max_seconds=3600.0, timing_s=0.05, rounds=1, seeds=2)

# Outputs each fixture's wrong.cu must get wrong on the fresh seeds (what the fixture is built to catch).
WRONG_OUTPUTS = {
    "exact_float_reductions": {"tree_out", "down_out", "xor_out", "serial_out",  # association order of float sums
                               "tmax", "wmax", "nan_count", "row_max", "row_below"},  # NaN rules
    "exact_int_semantics": {"widened", "dot", "q8", "r8", "hash", "mixed"},  # widening, >> for /, & for %, signedness
    "exact_alias_shift": {"a", "b"},  # loads hoisted above aliasing stores
    "exact_butterflies": {"sorted", "walsh"},  # NaN rules of a compare-and-swap, the order of butterfly steps
}


class Fixture:
    """One exact_* task: its faithful lowering and fresh-seed verdicts, cached by code."""

    def __init__(self, name: str, box: LocalSandbox):
        self.name, self.box = name, box
        self.task: Task = load_task(FIXTURES / name / "task.json")
        self.ctx = Context(self.task, fast_math_ok=True)
        self._verdicts: dict[str, VerifyReport] = {}

    @cached_property
    def faithful(self) -> str:
        return lower_task(self.task)

    @property
    def fresh_seeds(self) -> list[int]:
        """Seeds the search never uses (it checks on default_seeds)."""
        used = set(default_seeds(self.task, SEARCH.seeds))
        return [s for s in range(self.task.inputs.seed + 100, self.task.inputs.seed + 110) if s not in used][:2]

    def verdict(self, code: str) -> VerifyReport:
        key = hashlib.sha256(code.encode()).hexdigest()
        if key not in self._verdicts:
            self._verdicts[key] = check(self.task, code, self.box, seeds=self.fresh_seeds, threads=THREADS)
        return self._verdicts[key]

    @cached_property
    def alone(self) -> dict[str, str]:
        """Each transformation's variant of the faithful lowering (where it applies)."""
        return {t.name: v for t in TRANSFORMS if (v := self.applied(t, self.faithful)) is not None}

    def applied(self, t: Transform, code: str) -> str | None:
        """The variant the search evaluates: of alternatives, the first that matches the reference
        on the search's own seeds (None where none does: the search counts that as incorrect)."""
        variant = _apply(t, self.ctx, code)
        if isinstance(variant, list):
            variant, _ = _first_correct(self.task, variant, self.box, default_seeds(self.task, SEARCH.seeds))
        return variant

    @cached_property
    def rejections(self) -> dict[str, SearchResult]:
        """For each variant that is wrong on fresh seeds: the search given only its transformation."""
        return {t.name: search(self.task, self.faithful, self.box, budget=ONE, threads=2, fast_math_ok=True, transforms=[t])
                for t in TRANSFORMS if t.name in self.alone and not self.verdict(self.alone[t.name]).correct}

    @cached_property
    def searched(self) -> SearchResult:
        return search(self.task, self.faithful, self.box, budget=SEARCH, threads=2, fast_math_ok=True)

    def wrong_variant(self) -> str:
        return lower_task(self.task.model_copy(update={"cuda": "wrong.cu"}))


def _apply(t: Transform, ctx: Context, code: str) -> str | None:
    """As the search applies a transformation: a misread text shape means it does not apply."""
    try:
        return t.apply(ctx, code)
    except (ValueError, IndexError, NotApplicable):
        return None


def _unmarked(code: str) -> str:
    return code.split("\n", 1)[1] if C.is_marked(code) else code


def _diff(before: str, after: str, limit: int = 60) -> str:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), "faithful", "variant", lineterm="", n=1))
    return "\n".join(lines[:limit])


_CACHE: dict[str, Fixture] = {}


@pytest.fixture(params=sorted(WRONG_OUTPUTS))
def fx(request, box) -> Fixture:
    name = request.param
    if name not in _CACHE:
        _CACHE[name] = Fixture(name, box)
    return _CACHE[name]


def test_reference_follows_the_kernels_own_order(fx):
    """The faithful lowering matches the reference exactly where it matters (fresh seeds, 1 and 2 threads)."""
    report = fx.verdict(fx.faithful)
    assert report.correct, report.summary()
    assert not [n for n in report.notes if "everywhere" in n], report.notes  # outputs vary: a constant would not pass


def test_the_fixture_rejects_what_an_unsafe_optimization_computes(fx):
    """wrong.cu (another association order, widening, NaN rules, hoisted aliasing loads) is caught
    in the outputs it is built to catch, and the search discards it."""
    wrong = fx.wrong_variant()
    report = fx.verdict(wrong)
    assert not report.correct
    assert WRONG_OUTPUTS[fx.name] <= {m.buffer for m in report.mismatches}, report.summary()
    bait = Transform("unsafe", "what an unsafe optimization computes", lambda ctx, code: wrong)
    result = search(fx.task, fx.faithful, fx.box, budget=ONE, threads=2, transforms=[bait])
    assert [s.outcome for s in result.steps] == ["incorrect"]
    assert not result.improved and _unmarked(result.code) == fx.faithful


def test_every_transformation_alone_is_exact_or_rejected_by_the_search(fx):
    """Each transformation on the faithful lowering: correct on fresh seeds, or the search rejects it."""
    assert fx.alone, "no transformation applies: the fixture polices nothing"
    for name, variant in fx.alone.items():  # shown with a failure
        print(f"{fx.name}: {name} alone: {fx.verdict(variant).status}")
    kept_wrong = []
    for name, result in fx.rejections.items():
        if result.steps[0].outcome != "incorrect" or _unmarked(result.code) != fx.faithful:
            kept_wrong.append(f"{name} on {fx.name}: search said {result.steps[0].outcome!r}, fresh seeds say\n"
                              f"{fx.verdict(fx.alone[name]).summary()}\n{_diff(fx.faithful, fx.alone[name])}")
    assert not kept_wrong, "\n\n".join(kept_wrong)


def test_search_keeps_only_versions_exact_on_fresh_seeds(fx):
    """The whole search: every version it kept, and the code it returns, is correct on fresh seeds
    (1 and 2 threads); a variant it produced that is known to be wrong there was logged as incorrect."""
    result = fx.searched
    print("\n".join(f"{fx.name}: search: {s.transform} {s.outcome} {s.ratio or ''}" for s in result.steps))  # with a failure
    assert [s.transform for s in result.steps if not s.on_input] == [t.name for t in TRANSFORMS]
    retried = [s for s in result.steps if s.on_input]
    assert all(next(t for t in TRANSFORMS if t.name == s.transform).fresh for s in retried)
    assert "skipped" not in {s.outcome for s in result.steps}
    assert any(s.outcome != "not_applicable" for s in result.steps)
    code, fooled = fx.faithful, []
    for step in result.steps:
        if step.outcome in ("not_applicable", "skipped"):
            continue
        t = next(t for t in TRANSFORMS if t.name == step.transform)
        start = fx.faithful if step.on_input else code  # a fresh step's retry starts from the input
        variant = fx.applied(t, start)
        if variant is None and step.outcome == "incorrect" and isinstance(_apply(t, fx.ctx, start), list):
            continue  # alternatives, none of which matched: nothing was evaluated further
        assert variant is not None, f"{t.name} applied in the search but not when replayed"
        known = fx.verdict(variant) if step.outcome == "kept" or variant in fx.alone.values() else None
        if known is not None and not known.correct and step.outcome != "incorrect":
            fooled.append(f"{t.name} ({step.outcome}): {known.summary()}\n{_diff(start, variant)}")
        if step.outcome == "kept":
            code = variant
    assert not fooled, "the search accepted versions that are wrong on fresh seeds:\n" + "\n\n".join(fooled)
    assert _unmarked(result.code) == code
    final = fx.verdict(result.code)
    assert final.correct and final.threads == THREADS, final.summary()


def test_fast_math_is_tried_and_rejected_where_it_changes_results(box):
    """The tempting transformation is produced (configuration allows it, rtol >= 1e-4), is wrong on
    fresh seeds (reassociated sums, NaN tests folded away), and the search logs it as incorrect and
    returns the input without it."""
    fx = _CACHE.setdefault("exact_float_reductions", Fixture("exact_float_reductions", box))
    assert fx.task.tolerance.rtol >= 1e-4 and "fast_math" in fx.alone
    assert not fx.verdict(fx.alone["fast_math"]).correct
    result = fx.rejections["fast_math"]
    assert [s.outcome for s in result.steps] == ["incorrect"]
    assert "fast-math" not in result.code and _unmarked(result.code) == fx.faithful
    observed = result.observations[0]
    assert observed.data["transform"] == "fast_math" and observed.data["outcome"] == "incorrect"
    assert "results wrong" in observed.message


def test_reassociation_is_offered_only_where_the_tolerance_allows_it(box):
    """Sums in another order are wrong at a tight tolerance, so the pass is not even offered there;
    at rtol 1e-4 it is offered without the fast-math configuration, and its variant of the
    reduction fixture goes through the same check as every other."""
    fx = _CACHE.setdefault("exact_float_reductions", Fixture("exact_float_reductions", box))
    by_name = {t.name: t for t in TRANSFORMS}
    tight = fx.task.model_copy(update={"tolerance": fx.task.tolerance.model_copy(update={"rtol": 1e-6})})
    assert by_name["reassociate"].apply(Context(tight), fx.faithful) is None
    variant = by_name["reassociate"].apply(Context(fx.task), fx.faithful)
    assert variant is not None and '"associative-math"' in variant and "fast-math" not in variant
    assert "reassociate" in fx.alone  # policed by the tests above: rejected wherever it is wrong
