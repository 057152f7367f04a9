"""The search: transformations applied one after another to the best version so far; each
result is checked against the reference (several seeds, 1 and N threads) before it is timed
against the current best in the same run; it replaces the best only when correct and faster.
A step marked `fresh` that does not pay after the steps kept so far is also applied to the input
and timed against the best: the kept steps may be what stood in its way (group_conv2d_1: index
runs 0.74x after specialize_parallel, 7.8x the best when applied to the input instead).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

from sandboxes import Sandbox
from tools.observations import Observation
from tools.spec import Task
from tools.verify import VerifyError, check
from tools.verify.check import default_seeds

from .analysis import code as C
from .base import Code, Context, NotApplicable, Transform
from .pipeline import TRANSFORMS
from .timing import TimingError, time_versions


@dataclass
class Budget:
    max_variants: int = 12  # versions checked (and timed when correct)
    max_seconds: float = 120.0  # wall time of the whole search (no new variant starts after it)
    timing_s: float = 0.4  # measured time per comparison (both versions together)
    rounds: int = 3
    seeds: int = 2  # fresh seeds per check (with 1 and N threads)
    min_gain: float = 1.05  # a variant must beat the best by this factor to replace it (geomean over thread counts)
    max_loss: float = 0.95  # ... and reach at least this share of the best's speed at every thread count


@dataclass
class Step:
    transform: str
    outcome: str  # kept, slower, incorrect, failed, not_applicable, skipped
    ratio: float | None = None  # best time / variant time (>1: the variant is faster)
    detail: str = ""
    on_input: bool = False  # a fresh step's retry: applied to the search's input, not to the best so far


@dataclass
class SearchResult:
    code: str  # the best correct version (the input when nothing helped)
    applied: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    speedup: float = 1.0  # product of the kept steps' measured ratios (estimate vs the input)
    stopped: str | None = None  # which budget ended the search before every transformation was tried

    @property
    def improved(self) -> bool:
        return bool(self.applied)

    def summary(self) -> str:
        if not self.applied:
            return "optimizer: no variant was both correct and faster; the input version kept"
        return f"optimizer: {', '.join(self.applied)} (about {self.speedup:.2f}x faster than the input)"


def search(task: Task, code: str, sandbox: Sandbox, *, budget: Budget | None = None, threads: int | None = None,
           fast_math_ok: bool = False, transforms: list[Transform] | None = None) -> SearchResult:
    """The fastest correct version of `code` that the transformations reach within budget."""
    budget = budget or Budget()
    nthreads = threads or os.cpu_count() or 1
    ctx = Context(task=task, fast_math_ok=fast_math_ok)
    code = Code.of(task, code)  # the text and its kernels' IR (base.py: how IR and text passes compose)
    result = SearchResult(code=code)
    started, tried = time.monotonic(), 0
    seeds = default_seeds(task, budget.seeds)
    for t in transforms if transforms is not None else TRANSFORMS:
        elapsed = time.monotonic() - started
        if tried >= budget.max_variants or elapsed > budget.max_seconds:
            result.steps.append(Step(t.name, "skipped", detail="budget spent"))
            result.stopped = result.stopped or (
                f"the optimizer's search checked its {budget.max_variants} variants" if tried >= budget.max_variants
                else f"the optimizer's search ran out of time ({elapsed:.0f}s of {budget.max_seconds:.0f}s)")
            continue
        variant, step = _attempt(task, t, ctx, result.code, result.code, sandbox, budget, seeds, nthreads)
        if step.outcome == "not_applicable":
            result.steps.append(step)
            if step.detail:  # the pass said why: a user sees why the kernel kept its slower shape
                result.observations.append(_observation(t, step, nthreads))
            continue
        tried += 1
        result.steps.append(step)
        result.observations.append(_observation(t, step, nthreads))
        if step.outcome == "kept":
            result.code, result.speedup = variant, result.speedup * (step.ratio or 1.0)
            result.applied.append(t.name)
        elif t.fresh and result.applied and tried < budget.max_variants:
            # The steps kept so far may be what keeps this one from paying: applied to the input
            # instead, it is timed against the best so far and replaces it where faster.
            variant, step = _attempt(task, t, ctx, code, result.code, sandbox, budget, seeds, nthreads)
            if step.outcome == "not_applicable":
                continue
            tried += 1
            step.on_input = True
            dropped = ", ".join(result.applied)
            step.detail = f"applied to the input instead of after {dropped}: {step.detail}"[:300]
            result.steps.append(step)
            result.observations.append(_observation(t, step, nthreads))
            if step.outcome == "kept":
                result.code, result.speedup = variant, result.speedup * (step.ratio or 1.0)
                result.applied = [t.name]
    if result.steps and any(s.outcome not in ("not_applicable", "skipped") for s in result.steps):
        result.code = C.mark(result.code, result.applied)  # searched: a later call has nothing more to try
    result.code = str(result.code)
    return result


def _attempt(task, t: Transform, ctx: Context, start: str, best: str, sandbox, budget: Budget, seeds, nthreads):
    """t applied to `start`, checked, and timed against `best`: (the variant, its step); (None, a
    `not_applicable` step with the pass's reason, where it gave one) where t does not apply."""
    try:
        variant = _apply(t, ctx, start)
    except NotApplicable as why:
        return None, Step(t.name, "not_applicable", detail=str(why)[:300])
    if variant is None:
        return None, Step(t.name, "not_applicable")
    if isinstance(variant, list):  # alternatives: the first that matches the reference is timed
        variant, failures = _first_correct(task, variant, sandbox, seeds)
        if variant is None:
            return None, Step(t.name, "incorrect", detail=failures)
    return variant, _evaluate(task, t, best, variant, sandbox, budget, seeds, nthreads)


def _apply(t: Transform, ctx: Context, code: Code) -> Code | list[Code] | None:
    """t's output as Code: an IR pass's as it returns it, a text pass's with the IR of the
    kernels it left alone (Code.after_text)."""
    try:
        out = t.apply(ctx, code)
    except (ValueError, IndexError):  # a text shape the transformation misread: it does not apply
        return None
    if out is None:
        return None
    if isinstance(out, list):
        return [code.after_text(o, t.name) for o in out]
    return code.after_text(out, t.name)


def _first_correct(task, alternatives: list[str], sandbox, seeds) -> tuple[str | None, str]:
    """The first alternative correct on one seed with one thread (the full check follows), or
    None and why none was."""
    failures = []
    for i, variant in enumerate(alternatives):
        try:
            report = check(task, variant, sandbox, seeds=seeds[:1], threads=[1])
        except VerifyError as exc:
            failures.append(f"{i + 1}: reference unusable: {exc}")
            continue
        if report.correct:
            return variant, ""
        failures.append(f"{i + 1}: {report.summary()}")
    return None, f"none of {len(alternatives)} alternatives matched ({'; '.join(failures)})"[:300]


def _evaluate(task, t: Transform, best: str, variant: str, sandbox, budget: Budget, seeds, nthreads) -> Step:
    try:
        report = check(task, variant, sandbox, seeds=seeds, threads=[1, max(2, nthreads)])
    except VerifyError as exc:
        return Step(t.name, "failed", detail=f"reference unusable: {exc}"[:300])
    if not report.correct:
        return Step(t.name, "incorrect", detail=report.summary()[:300])
    counts = sorted({1, nthreads})

    def clearly_slower(times) -> bool:
        # the variant's fastest call a quarter slower than the best's median at every thread count:
        # no later round could make it the 1.05x winner that keeping it takes
        return all(times[("variant", n)].min_s > 1.25 * times[("best", n)].median_s for n in counts)

    try:
        times = time_versions(task, {"best": best, "variant": variant}, sandbox, threads=counts, rounds=budget.rounds,
                              budget_s=budget.timing_s, settled=clearly_slower)
    except (TimingError, VerifyError) as exc:
        return Step(t.name, "failed", detail=str(exc)[:300])
    # Medians decide: faster in geomean over 1 and N threads, and not more than a few percent slower
    # at either (a serial twin of a small launch: 3.5x with 2 threads, 0.96x with 1). On a shared
    # machine other load only adds time, so a variant kept must also not lose in its fastest runs.
    ratios = [times[("best", n)].median_s / times[("variant", n)].median_s for n in counts]
    ratio = _geomean(ratios)
    fastest = _geomean([times[("best", n)].min_s / times[("variant", n)].min_s for n in counts])
    detail = "; ".join(f"{n} thread{'s' if n > 1 else ''}: median {times[('variant', n)].median_s * 1e3:.3g} ms vs "
                       f"{times[('best', n)].median_s * 1e3:.3g} ms" for n in counts)
    if ratio >= budget.min_gain and min(ratios) >= budget.max_loss and fastest >= 1.0:
        return Step(t.name, "kept", ratio, detail)
    return Step(t.name, "slower", ratio, detail)


def _geomean(values: list[float]) -> float:
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 0.0


def _observation(t: Transform, step: Step, nthreads: int) -> Observation:
    if step.outcome in ("kept", "slower"):
        verdict = "kept" if step.outcome == "kept" else "discarded (not faster)"
        message = f"{t.what}: {step.ratio:.2f}x the speed of the previous best (geomean; {step.detail}); {verdict}"
    elif step.outcome == "incorrect":
        message = f"{t.what}: results wrong, discarded: {step.detail}"
    elif step.outcome == "not_applicable":
        message = f"{t.what}: does not apply: {step.detail}"
    else:
        message = f"{t.what}: {step.outcome}: {step.detail}"
    return Observation(kind="optimization", severity="info", message=message,
                       data={"transform": t.name, "outcome": step.outcome, "ratio": step.ratio, "threads": nthreads})
