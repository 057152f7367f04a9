"""The state of one kernel's loop, as LangGraph keeps and checkpoints it.

Everything in it is plain JSON data (dicts, lists, strings, numbers) so that the SQLite
checkpointer stores it without custom types and a trace can show it as is.

An attempt is `{"n", "mode", "translator", "code", "status", "observations", "time_s",
"speedup_vs_reference", "max_abs_err", "max_rel_err", "reference_kind", "threads",
"exhausted", "fatal", "best_time_before"}`; `status` is pending, no_code, llm_unreachable,
compile_error, incorrect, runtime_error, timeout, unsupported or correct. `exhausted`: the translator
returned no code and has nothing more to offer; `fatal`: a failure no retry can mend.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from tools.observations import Observation

FAILED = ("compile_error", "incorrect", "runtime_error", "timeout")


class Counters(TypedDict):
    iterations: int  # translate calls so far
    tokens: int
    cost_usd: float
    elapsed_s: float  # summed over nodes, so a resumed run does not count the time it lay dead
    checking_s: float  # the last attempt's test and profile: what checking another one will take


class KernelState(TypedDict, total=False):
    kernel: str  # the task's name
    task: dict[str, Any]  # the task as JSON (Task.model_dump)
    base_dir: str  # where the task's relative paths resolve
    translator: str  # translator spec for this kernel; may be overridden between steps
    run_limits: dict[str, float]  # what is left of the run's budgets when this kernel started
    plan: dict[str, Any]  # features, pattern, strategy, lowering status
    lowering: str | None  # the deterministic compiler's output (None when it could not lower)
    current: dict[str, Any] | None  # the attempt in flight
    attempts: Annotated[list[dict[str, Any]], operator.add]  # finished attempts, in order
    # Every observation, in order, each tagged with its attempt ("attempt": 0 for hints and plan).
    observations: Annotated[list[dict[str, Any]], operator.add]
    obs_cursor: int  # observations before this index went into an earlier translation
    best: dict[str, Any] | None  # the best correct attempt so far (by candidate median time)
    counters: Counters
    decision: dict[str, Any]  # {"next": translate|fix|optimize|replan|done, "reason"}
    # Launches inferred (the task gave none): the task's launches and buffers as given, and the
    # search over inference's answers ({"of": all answers, None until searched; "tried"; "current":
    # 0 for the first answer, k for alternative k; "how": what the answer in use changed}).
    inferred_from: dict[str, Any]
    launch_search: dict[str, Any]
    result: dict[str, Any] | None  # the KernelResult fields, set when the loop ends


def initial_state(
    *, kernel: str, task: dict[str, Any], base_dir: str, translator: str, run_limits: dict[str, float]
) -> KernelState:
    return KernelState(
        kernel=kernel,
        task=task,
        base_dir=base_dir,
        translator=translator,
        run_limits=run_limits,
        plan={},
        lowering=None,
        current=None,
        attempts=[],
        observations=[],
        obs_cursor=0,
        best=None,
        counters=Counters(iterations=0, tokens=0, cost_usd=0.0, elapsed_s=0.0, checking_s=0.0),
        decision={"next": "translate", "reason": "first attempt"},
        result=None,
    )


def obs_dicts(observations: list[Observation], attempt: int) -> list[dict[str, Any]]:
    return [{**o.model_dump(mode="json"), "attempt": attempt} for o in observations]


def obs_records(data: list[dict[str, Any]]) -> list[Observation]:
    fields = set(Observation.model_fields)
    return [Observation.model_validate({k: v for k, v in d.items() if k in fields}) for d in data]


def human_hint(text: str) -> dict[str, Any]:
    """An observation typed by the user, for the next translation."""
    return {**Observation(kind="human", message=text, severity="info").model_dump(mode="json"), "attempt": 0}
