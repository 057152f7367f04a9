"""The `compiler` translator: the deterministic lowering behind the Translator protocol.

- translate: `tools.cuda.lower_task(task)` (or the plan's lowering when it already ran).
- fix: a deterministic compiler cannot repair its own output; it only reports, so the
  loop ends with the failure on record.
- optimize: hands the best correct code to the optimizer when one is installed. The seam
  is one function, `tools.optimize.optimize(task, code, observations, **options)`, returning
  `(new_code, notes)` or None when it has nothing to try; `options` it may take: threads,
  fast_math_ok (from the configuration).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable

from tools.observations import Observation

from .base import TranslateRequest, Translation

Optimizer = Callable[..., "tuple[str, str] | None"]


def installed_optimizer() -> Optimizer | None:
    """`tools.optimize.optimize` when that module exists (a later issue builds it)."""
    try:
        module = importlib.import_module("tools.optimize")
    except ModuleNotFoundError as exc:
        if exc.name not in ("tools.optimize",):
            raise
        return None
    return getattr(module, "optimize", None)


class CompilerTranslator:
    name = "compiler"

    def __init__(self, optimizer: Optimizer | None = None, *, options: dict[str, Any] | None = None) -> None:
        """`options`: keyword settings offered to the optimizer (threads, fast_math_ok); only
        those its signature names are passed."""
        self.optimizer = optimizer if optimizer is not None else installed_optimizer()
        self.options = options or {}

    def translate(self, request: TranslateRequest) -> Translation:
        if request.mode == "translate":
            return self._lower(request)
        if request.mode == "fix":
            return _report_only(request)
        return self._optimize(request)

    def _lower(self, request: TranslateRequest) -> Translation:
        if request.lowering:
            return Translation(code=request.lowering, notes="deterministic lowering (from the plan)")
        from agent.toolbox import lower

        code, why = lower(request.task)
        return Translation(code=code, notes="deterministic lowering", observations=why)

    def _optimize(self, request: TranslateRequest) -> Translation:
        base = request.best_code or request.previous_code
        if self.optimizer is None or base is None:
            why = "no optimizer is installed" if self.optimizer is None else "no correct code to optimize"
            return Translation(code=None, observations=[_info("optimization", f"compiler: {why}; keeping the best version")])
        options = {**self.options, "max_seconds": request.seconds_left}
        proposal = self.optimizer(request.task, base, request.observations, **_accepted(self.optimizer, options))
        if proposal is None:
            return Translation(code=None, observations=[_info("optimization", "compiler: the optimizer has nothing more to try")])
        code, notes = proposal
        observations = list(getattr(proposal, "observations", []))
        if not getattr(proposal, "improved", True):
            # the input again: checking and timing it once more would only repeat what is known
            return Translation(code=None, stopped=getattr(proposal, "stopped", None), observations=[
                *observations, _info("optimization", "compiler: no version was both correct and faster; keeping the best")])
        return Translation(code=code, notes=notes, observations=observations)


def _accepted(function: Callable, options: dict[str, Any]) -> dict[str, Any]:
    names = inspect.signature(function).parameters
    return {k: v for k, v in options.items() if k in names and v is not None}


def _report_only(request: TranslateRequest) -> Translation:
    failures = [o for o in request.observations if o.severity == "error"]
    shown = "; ".join(str(o) for o in failures[:3]) or "no failure observed"
    message = (
        "the deterministic compiler cannot repair its own lowering (a lowering bug or an unsupported "
        f"construct); try an LLM translator (--llm). Failure: {shown}"
    )
    return Translation(code=None, observations=[_info("unsupported", message)])


def _info(kind: str, message: str) -> Observation:
    return Observation(kind=kind, message=message, severity="info")
