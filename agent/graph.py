"""One kernel's loop as a LangGraph state machine.

    plan -> translate -> compile -> test -> profile -> decide --done--> END
     ^          ^           |         |                   |
     |          +-----------+---------+-------------------+  (fix / optimize)
     +------------------------------------------------------+  (replan: inferred launches checked)

Nodes keep the state plain JSON (agent/state.py) and write every step to the trace.
The deterministic tools and the translator come from a `GraphContext`, so a replay can
put recorded ones in their place. Budgets (iterations, wall time, tokens, money; per
kernel and what is left of the run's) are checked in `decide`; the best correct attempt
is always the result.
"""

from __future__ import annotations

import base64
import hashlib
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from langgraph.graph import END, START, StateGraph

from agent.configuration import Settings
from agent.state import FAILED, KernelState, obs_dicts, obs_records
from agent.trace import TraceWriter
from agent.translators.base import Translation, TranslateRequest, Translator
from tools.observations import Observation
from tools.spec import Task, parse_task
from tools.speedups import reference_name, speedup_text
from tools.verify.inputs import inputs_from_files

NODES = ("plan", "translate", "compile", "test", "profile", "decide")
GAIN = 0.97  # an optimization counts as a gain when it is at least 3% faster
MAX_EMBEDDED_BYTES = 4 << 20  # task files up to this size travel in the trace
REASON_CHARS = 300  # a result's reason is one line
DETAIL_LINES = 8  # of the compiler's messages, in a result


class Toolbox(Protocol):
    """The deterministic steps, each returning plain JSON data (see agent/toolbox.py)."""

    def plan(self, task: Task) -> dict[str, Any]: ...
    def search_launches(self, task: Task, probe_first: bool) -> dict[str, Any]: ...
    def compile(self, task: Task, code: str) -> dict[str, Any]: ...
    def check(self, task: Task, code: str) -> dict[str, Any]: ...
    def profile(self, task: Task, code: str, baseline: str | None = None) -> dict[str, Any]: ...


@dataclass
class GraphContext:
    """What the nodes use besides the state; not checkpointed."""

    settings: Settings
    trace: TraceWriter
    tools: Toolbox
    translator_for: Callable[[str], Translator]  # spec -> translator
    # Progress callback: (kernel, node, short text).
    on_step: Callable[[str, str, str], None] | None = None
    # Replay: given the kernel and the decision the graph reached, the decision to follow.
    steer: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
    _tasks: dict[str, Task] = field(default_factory=dict)

    def task(self, state: KernelState) -> Task:
        key = state["kernel"]
        if key not in self._tasks:
            self._tasks[key] = parse_task(state["task"], base_dir=Path(state["base_dir"]), origin=f"task {key}")
        return self._tasks[key]

    def forget_task(self, kernel: str) -> None:
        self._tasks.pop(kernel, None)

    def emit(self, state: KernelState, node: str, type: str, data: Any = None) -> None:
        self.trace.event(type, kernel=state["kernel"], node=node, data=data)

    def step(self, state: KernelState, node: str, text: str) -> None:
        if self.on_step:
            self.on_step(state["kernel"], node, text)


def build_graph(ctx: GraphContext | None, *, checkpointer: Any = None, interrupt_before: list[str] | None = None):
    """The compiled per-kernel graph. `ctx` may be None for a graph only used to read or edit state."""
    graph = StateGraph(KernelState)
    bodies = {"plan": plan, "translate": translate, "compile": compile_, "test": test_, "profile": profile, "decide": decide}
    for name in NODES:
        graph.add_node(name, _traced(name, bodies[name], ctx))
    graph.add_edge(START, "plan")
    graph.add_edge("plan", "translate")
    graph.add_conditional_edges("translate", after_translate, ["compile", "decide"])
    graph.add_conditional_edges("compile", after_compile, ["test", "decide"])
    graph.add_conditional_edges("test", after_test, ["profile", "decide"])
    graph.add_edge("profile", "decide")
    graph.add_conditional_edges("decide", after_decide, ["plan", "translate", END])
    return graph.compile(checkpointer=checkpointer, interrupt_before=interrupt_before or None)


def recursion_limit(settings: Settings) -> int:
    return 6 * settings.budgets.max_iters + 20


# --- edges -------------------------------------------------------------------------


def after_translate(state: KernelState) -> str:
    return "compile" if (state.get("current") or {}).get("code") else "decide"


def after_compile(state: KernelState) -> str:
    return "decide" if state["current"]["status"] == "compile_error" else "test"


def after_test(state: KernelState) -> str:
    return "profile" if state["current"]["status"] == "correct" else "decide"


def after_decide(state: KernelState) -> str:
    nxt = state["decision"]["next"]
    return END if nxt == "done" else "plan" if nxt == "replan" else "translate"


# --- node plumbing -----------------------------------------------------------------


def _traced(name: str, body: Callable, ctx: GraphContext | None) -> Callable[[KernelState], dict]:
    """Wrap a node: node_start/node_end events, elapsed time into the counters."""

    def node(state: KernelState) -> dict:
        if ctx is None:
            raise RuntimeError("this graph was built without a context; it can edit state but not run")
        ctx.emit(state, name, "node_start", {"attempt": state["counters"]["iterations"] + (name == "translate")})
        ctx.step(state, name, name)
        start = time.monotonic()
        update = body(state, ctx)
        counters = dict(update.get("counters") or state["counters"])
        took = time.monotonic() - start
        counters["elapsed_s"] = round(counters["elapsed_s"] + took, 3)
        if name in ("test", "profile"):  # an attempt's checking starts with its test
            before = 0.0 if name == "test" else counters.get("checking_s", 0.0)
            counters["checking_s"] = round(before + took, 3)
        update["counters"] = counters
        summary = {"elapsed_s": round(took, 3)}
        if update.get("current"):
            summary["status"] = update["current"].get("status")
        ctx.emit(state, name, "node_end", summary)
        return update

    node.__name__ = name
    return node


def _tool(ctx: GraphContext, state: KernelState, node: str, tool: str, call: Callable[[], dict], attempt: int) -> dict | None:
    """Run one tool with tool_call/tool_result events; a crashing tool is an error event and None."""
    ctx.emit(state, node, "tool_call", {"tool": tool, "attempt": attempt})
    try:
        result = call()
    except Exception as exc:  # a bug in a tool must not take the whole run down
        ctx.emit(state, node, "error", {"tool": tool, "attempt": attempt, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=8)})
        return None
    ctx.emit(state, node, "tool_result", {"tool": tool, "attempt": attempt, "result": result})
    return result


def _observe(ctx: GraphContext, state: KernelState, node: str, observations: list[dict]) -> None:
    for obs in observations:
        ctx.emit(state, node, "observation", obs)


def _tool_crash(tool: str) -> dict:
    return {"kind": "runtime", "message": f"the {tool} tool crashed (see the trace's error event)", "severity": "error"}


# --- nodes -------------------------------------------------------------------------


def plan(state: KernelState, ctx: GraphContext) -> dict:
    if state["decision"]["next"] == "replan":
        return _replan(state, ctx)
    task = ctx.task(state)
    for artifact in task_artifacts(task):
        ctx.emit(state, "plan", "artifact", artifact)
    result = _tool(ctx, state, "plan", "plan", lambda: ctx.tools.plan(task), 0)
    if result is None:
        result = {"observations": [_tool_crash("plan")], "lowering": None}
    observations = [{**o, "attempt": 0} for o in result.get("observations", [])]
    _observe(ctx, state, "plan", observations)
    plan_record = {k: v for k, v in result.items()
                   if k not in ("lowering", "observations", "launches_inferred", "buffers_inferred")}
    plan_record["strategy"] = _strategy(state["translator"], result.get("lowering") is not None)
    update = {"plan": plan_record, "lowering": result.get("lowering"), "observations": observations}
    if result.get("launches_inferred"):  # every later step works on the task with its inferred launches
        update["task"] = {**state["task"], "launches": result["launches_inferred"]}
        if result.get("buffers_inferred"):  # and the scratch buffers between its kernels
            update["task"]["buffers"] = result["buffers_inferred"]
        ctx.forget_task(state["kernel"])
        # Where several buffers fitted a parameter, the other answers are searched for when this
        # one's outputs mismatch ("of": how many answers in all, unknown until then).
        update["inferred_from"] = {"launches": state["task"].get("launches") or [], "buffers": state["task"]["buffers"]}
        update["launch_search"] = {"current": 0, "tried": 1, "of": None if result.get("launch_choices") else 1}
    return update


def _replan(state: KernelState, ctx: GraphContext) -> dict:
    """After an attempt with inferred launches ended incorrect: launch inference's answers checked
    against the reference through their faithful lowerings (a search that spends no translation
    attempt). The first that verifies replaces the task's launches (and buffers) and the lowering is
    redone for them; where it is the first answer, or none verifies, the loop goes on fixing."""
    n = state["counters"]["iterations"] + 1  # the attempt these launches are for
    ctx.forget_task(state["kernel"])
    given = ctx.task({**state, "task": {**state["task"], **state["inferred_from"]}})
    ctx.forget_task(state["kernel"])
    probe_first = state["translator"] != "compiler"  # the compiler's attempt was the faithful lowering
    found = _tool(ctx, state, "plan", "search_launches", lambda: ctx.tools.search_launches(given, probe_first), n) or {}
    answers, k = found.get("answers") or [], found.get("verified")
    search = {"current": k or 0, "tried": sum(1 for a in answers if "status" in a), "of": found.get("of", 1)}
    for i, answer in enumerate(answers):
        which = "the first answer" if i == 0 else f"alternative {i} of {search['of'] - 1}"
        ctx.emit(state, "plan", "decision", {"launches": which, "attempt": n, "status": answer.get("status"),
                                             "how": answer["how"]})
    if not k:
        reason = (f"attempt {n - 1} ended incorrect, but the launches inferred first verify: the translation is at fault"
                  if k == 0 else f"attempt {n - 1} ended incorrect with inferred launches, and none of the "
                                 f"{search['tried']} answer(s) of launch inference checked verifies")
        ctx.step(state, "plan", "launches kept")
        return {"launch_search": search, "decision": {"next": "fix", "reason": reason}}
    chosen = answers[k]
    search["how"] = chosen["how"].split(" | ")[0]
    task_json = {**state["task"], "launches": chosen["launches"], "buffers": chosen["buffers"]}
    task = ctx.task({**state, "task": task_json})
    result = _tool(ctx, state, "plan", "plan", lambda: ctx.tools.plan(task), n)
    if result is None:
        result = {"observations": [_tool_crash("plan")], "lowering": None}
    observations = [{**o, "attempt": n} for o in result.get("observations", [])]
    _observe(ctx, state, "plan", observations)
    plan_record = {**(state.get("plan") or {}), "launches": chosen["how"], "launch_alternative": k,
                   "strategy": _strategy(state["translator"], result.get("lowering") is not None)}
    ctx.step(state, "plan", f"launches: alternative {k} verified")
    return {"plan": plan_record, "lowering": result.get("lowering"), "observations": observations,
            "task": task_json, "launch_search": search}


def _strategy(translator: str, lowered: bool) -> str:
    if translator == "compiler":
        return "deterministic lowering" if lowered else "deterministic lowering (not possible: see observations)"
    return "LLM starting from the deterministic lowering" if lowered else "LLM from the CUDA source"


def translate(state: KernelState, ctx: GraphContext) -> dict:
    task = ctx.task(state)
    counters = dict(state["counters"])
    n = counters["iterations"] + 1
    wanted = state["decision"]["next"]
    # after a re-plan (other inferred launches) the attempt starts afresh from the new lowering
    mode = "translate" if wanted == "replan" else wanted if wanted in ("translate", "fix", "optimize") else "fix"
    fresh = state["observations"][state.get("obs_cursor", 0):]
    best = state.get("best")
    request = TranslateRequest(
        task=task,
        cuda_source=task.source(),
        mode=mode,
        attempt=n,
        previous_code=_previous_code(state, mode),
        best_code=best["code"] if best else None,
        lowering=state.get("lowering"),
        observations=obs_records(fresh),
        plan=state.get("plan") or {},
        # what is left once the attempt has been checked as the last one was
        seconds_left=max(0.0, wall_budget(state, ctx.settings) - counters["elapsed_s"] - counters.get("checking_s", 0.0)),
    )
    spec = state["translator"]
    fatal, failed_status = False, None
    try:
        translation = ctx.translator_for(spec).translate(request)
    except Exception as exc:
        translation, fatal, failed_status = _failed_translation(exc)
        ctx.emit(state, "translate", "error", {"translator": spec, "error": str(exc), "fatal": fatal})
    for exchange in translation.exchanges:
        ctx.emit(state, "translate", "llm_request", {"attempt": n, **(exchange.get("request") or {})})
        ctx.emit(state, "translate", "llm_response", {"attempt": n, **{k: v for k, v in exchange.items() if k != "request"}})
    observations = obs_dicts(translation.observations, n)
    _observe(ctx, state, "translate", observations)
    if translation.code:
        ctx.emit(state, "translate", "artifact", {"name": f"attempt-{n}.cpp", "role": "candidate", "attempt": n, "mode": mode, "code": translation.code, "notes": translation.notes})
    counters["iterations"] = n
    counters["tokens"] += translation.input_tokens + translation.output_tokens
    counters["cost_usd"] = round(counters["cost_usd"] + translation.cost_usd, 6)
    malformed = any(o.kind == "llm" for o in translation.observations)
    current = {
        "n": n,
        "mode": mode,
        "translator": spec,
        "code": translation.code,
        "status": "pending" if translation.code else failed_status or "no_code",
        "observations": observations,
        # No code and no complaint about the model's answer: the translator has nothing more to offer.
        "exhausted": not translation.code and not malformed and not fatal,
        "stopped": translation.stopped,
        "fatal": fatal,
        "best_time_before": (best or {}).get("time_s", {}).get("candidate"),
    }
    ctx.step(state, "translate", f"attempt {n} ({mode})")
    return {"current": current, "counters": counters, "observations": observations, "obs_cursor": len(state["observations"]) + len(observations)}


def _failed_translation(exc: Exception) -> tuple[Translation, bool, str | None]:
    """An exception from a translator: an observation; fatal unless the failure may pass; and the
    attempt's status where the failure has one of its own (a model server that cannot be reached)."""
    from agent.llm.base import BudgetExceeded, LLMError

    if isinstance(exc, LLMError):
        obs = Observation(kind="llm", message=str(exc),
                          data={"status": exc.status, "transient": exc.transient, "unreachable": exc.unreachable})
        # The failed call goes into the trace like any other, so that a replay fails the same way.
        failed = Translation(code=None, observations=[obs], exchanges=[exc.exchange()])
        return failed, not exc.transient, "llm_unreachable" if exc.unreachable else None
    if isinstance(exc, BudgetExceeded):
        return Translation(code=None, observations=[Observation(kind="llm", message=str(exc))]), True, None
    obs = Observation(kind="runtime", message=f"translator failed: {type(exc).__name__}: {exc}")
    return Translation(code=None, observations=[obs]), True, None


def _previous_code(state: KernelState, mode: str) -> str | None:
    if mode == "optimize":
        return (state.get("best") or {}).get("code")
    for attempt in reversed(state.get("attempts") or []):
        if attempt.get("code"):
            return attempt["code"]
    return None


def compile_(state: KernelState, ctx: GraphContext) -> dict:
    task, current = ctx.task(state), dict(state["current"])
    result = _tool(ctx, state, "compile", "compile", lambda: ctx.tools.compile(task, current["code"]), current["n"])
    if result is None:
        result = {"ok": False, "observations": [_tool_crash("compile")]}
    observations = [{**o, "attempt": current["n"]} for o in result.get("observations", [])]
    _observe(ctx, state, "compile", observations)
    current["status"] = "pending" if result.get("ok") else "compile_error"
    current["observations"] = current["observations"] + observations
    ctx.step(state, "compile", "compiled" if result.get("ok") else "compile error")
    return {"current": current, "observations": observations}


def _is_the_reference(state: KernelState, task: Task, code: str) -> bool:
    """The attempt is the task's reference itself, on inputs it has already run: the faithful
    lowering of a launch that a run of the ported program captured (its inputs are data files),
    which that run executed. A check would compare it with itself."""
    lowering = state.get("lowering")
    return (task.reference.kind == "lowered" and inputs_from_files(task) and lowering is not None
            and code.strip() == lowering.strip())


def test_(state: KernelState, ctx: GraphContext) -> dict:
    task, current = ctx.task(state), dict(state["current"])
    if _is_the_reference(state, task, current["code"]):
        ctx.emit(state, "test", "decision", {"check": "not run", "attempt": current["n"],
                                             "reason": "the attempt is the task's reference itself (the faithful lowering)"})
        current.update(status="correct", reference_kind="lowered", max_abs_err=0.0, max_rel_err=0.0, fatal=False)
        ctx.step(state, "test", "correct (the reference itself)")
        return {"current": current}
    result = _tool(ctx, state, "test", "check", lambda: ctx.tools.check(task, current["code"]), current["n"])
    if result is None:
        result = {"status": "runtime_error", "observations": [_tool_crash("check")]}
    observations = [{**o, "attempt": current["n"]} for o in result.get("observations", [])]
    _observe(ctx, state, "test", observations)
    status = result.get("status")
    current["status"] = status if status in (*FAILED, "correct", "unsupported") else "runtime_error"
    for key in ("max_abs_err", "max_rel_err", "reference_kind"):
        current[key] = result.get(key)
    current["observations"] = current["observations"] + observations
    current["fatal"] = bool(result.get("fatal"))
    ctx.step(state, "test", current["status"])
    return {"current": current, "observations": observations}


def profile(state: KernelState, ctx: GraphContext) -> dict:
    task, current = ctx.task(state), dict(state["current"])
    if state["translator"] == "compiler" and _is_the_reference(state, task, current["code"]):
        # the optimizer that comes next times every variant against this code itself
        ctx.step(state, "profile", "not timed (the reference itself; the optimizer times its variants against it)")
        best = state.get("best") or {k: v for k, v in current.items() if k != "observations"}
        return {"current": current, "best": best}
    # The faithful lowering is the baseline: a speedup over it is what translation and tuning gained.
    lowering = state.get("lowering")
    baseline = lowering if lowering and lowering.strip() != current["code"].strip() else None
    result = _tool(ctx, state, "profile", "profile", lambda: ctx.tools.profile(task, current["code"], baseline),
                   current["n"])
    if result is None:
        result = {"observations": [_tool_crash("profile")]}
    observations = [{**o, "attempt": current["n"]} for o in result.get("observations", [])]
    _observe(ctx, state, "profile", observations)
    if result.get("status") and result["status"] != "correct":  # the re-check after timing failed
        current["status"] = result["status"] if result["status"] in FAILED else "incorrect"
    current["time_s"] = result.get("time_s") or {}
    current["speedup_vs_reference"] = result.get("speedup_vs_reference")
    current["threads"] = result.get("threads")
    current["observations"] = current["observations"] + observations
    update: dict[str, Any] = {"current": current, "observations": observations}
    if current["status"] == "correct" and _better(current, state.get("best")):
        update["best"] = {k: v for k, v in current.items() if k != "observations"}
    speedup = current.get("speedup_vs_reference")
    ctx.step(state, "profile", speedup_text(speedup, reference_name(current.get("reference_kind")), ".2f") if speedup else "timed")
    return update


def _better(candidate: dict, best: dict | None) -> bool:
    if best is None:
        return True
    new, old = (candidate.get("time_s") or {}).get("candidate"), (best.get("time_s") or {}).get("candidate")
    return new is not None and (old is None or new < old)


def decide(state: KernelState, ctx: GraphContext) -> dict:
    current = state.get("current")
    attempts = list(state.get("attempts") or []) + ([current] if current else [])
    decision = _decide(state, current, ctx.settings)
    if ctx.steer is not None:
        decision = ctx.steer(state["kernel"], decision)
    ctx.emit(state, "decide", "decision", decision)
    update: dict[str, Any] = {"decision": decision, "current": None, "attempts": [current] if current else []}
    if decision["next"] == "done":
        update["result"] = final_result(state, attempts, stopped=decision["reason"] if decision.get("budget") else None)
        ctx.step(state, "decide", f"done: {update['result']['status']}")
    else:
        ctx.step(state, "decide", decision["next"])
    return update


def _decide(state: KernelState, current: dict | None, settings: Settings) -> dict[str, Any]:
    if current is None:
        return {"next": "done", "reason": "nothing to decide on"}
    if current.get("fatal"):
        return {"next": "done", "reason": "the translator failed for good (see the error event)"}
    if current.get("exhausted"):
        if current.get("stopped"):
            return {"next": "done", "reason": current["stopped"], "budget": True}
        return {"next": "done", "reason": f"the translator has nothing more to offer in {current['mode']} mode"}
    spent = budget_spent(state, settings)
    if spent:
        return {"next": "done", "reason": spent, "budget": True}
    if current["status"] == "correct":
        if current["mode"] != "optimize":
            return {"next": "optimize", "reason": "correct; looking for a faster version"}
        before, now = current.get("best_time_before"), (current.get("time_s") or {}).get("candidate")
        if before and now and now < before * GAIN:
            return {"next": "optimize", "reason": f"optimization gained {before / now:.2f}x; trying for more"}
        return {"next": "done", "reason": "correct; the last optimization found no further gain"}
    search = state.get("launch_search") or {}
    if current["status"] == "incorrect" and search.get("of", 1) is None and not state.get("best"):
        return {"next": "replan", "reason": f"attempt {current['n']} ended incorrect with inferred launches; "
                                            "checking launch inference's answers against the reference"}
    return {"next": "fix", "reason": f"attempt {current['n']} ended {current['status']}"}


def wall_budget(state: KernelState, settings: Settings) -> float:
    """Seconds this kernel may take: its own budget, or what was left of the run's when it started."""
    return min(settings.budgets.max_wall_s, (state.get("run_limits") or {}).get("wall_s", settings.budgets.run_wall_s))


def budget_spent(state: KernelState, settings: Settings) -> str | None:
    """Which budget (kernel or run) is used up, or None."""
    b, c = settings.budgets, state["counters"]
    run = state.get("run_limits") or {}
    if c["iterations"] >= b.max_iters:
        return f"iteration budget spent ({c['iterations']} of max_iters={b.max_iters})"
    wall = wall_budget(state, settings)
    if c["elapsed_s"] >= wall:
        return f"wall-time budget spent ({c['elapsed_s']:.0f}s of {wall:.0f}s)"
    if c["elapsed_s"] + c.get("checking_s", 0.0) >= wall:
        return (f"wall-time budget too short for another attempt ({c['elapsed_s']:.0f}s of {wall:.0f}s spent; "
                f"checking the last one took {c['checking_s']:.0f}s)")
    tokens = min(b.max_tokens, run.get("tokens", b.run_tokens))
    if c["tokens"] > 0 and c["tokens"] >= tokens:
        return f"token budget spent ({c['tokens']} of {tokens})"
    money = min(b.budget_usd, run.get("cost_usd", b.run_budget_usd))
    if c["cost_usd"] > 0 and c["cost_usd"] >= money:
        return f"money budget spent (${c['cost_usd']:.4f} of ${money:.2f})"
    return None


def final_result(state: KernelState, attempts: list[dict], stopped: str | None = None) -> dict[str, Any]:
    """KernelResult fields: the best correct attempt, else the last attempt that had code; with
    the reason for any other status than correct, and `stopped`: the budget that ended the loop
    while the translator still had something to try."""
    c = state["counters"]
    best = state.get("best")
    chosen = best or next((a for a in reversed(attempts) if a.get("code")), None)
    base = {"name": state["kernel"], "iterations": c["iterations"], "backend": state["translator"], "tokens": c["tokens"],
            "cost_usd": c["cost_usd"], "stopped": stopped}
    if chosen is None:
        unreachable = bool(attempts) and attempts[-1].get("status") == "llm_unreachable"
        status = "llm_unreachable" if unreachable else "unsupported"
        return {**base, "status": status, "attempt": None, **failure_reason(status, state.get("observations") or [])}
    status = "correct" if best else chosen["status"]
    if status not in (*FAILED, "correct", "unsupported"):
        status = "runtime_error"
    failure = failure_reason(status, chosen.get("observations") or []) if status != "correct" else {}
    if failure and (defects := (state.get("plan") or {}).get("source_defects")):
        failure["reason"] = "; ".join([*defects, failure["reason"]])[:REASON_CHARS]  # the cause first
    if search := state.get("launch_search"):
        base["launches"] = _search_text(search, status == "correct")
    return {
        **base,
        **failure,
        "status": status,
        "attempt": chosen["n"],
        "reference_kind": chosen.get("reference_kind"),
        "max_abs_err": chosen.get("max_abs_err"),
        "max_rel_err": chosen.get("max_rel_err"),
        "time_s": chosen.get("time_s") or {},
        "speedup_vs_reference": chosen.get("speedup_vs_reference"),
        "threads": chosen.get("threads"),
    }


def _search_text(search: dict, verified: bool) -> str:
    """How the launches were found where the task gave none: inferred, and which of inference's
    answers verified (of how many checked)."""
    k, tried, of = search["current"], search["tried"], search["of"]
    if of == 1:
        return "inferred"
    if of is None:
        return "inferred; the first answer verified" if verified else "inferred; its other answers not searched"
    if k:
        return f"inferred; alternative {k} verified ({tried} of {of} answers checked): {search.get('how', '')}"[:REASON_CHARS]
    if verified:
        return f"inferred; the first answer verified ({tried} of {of} answers checked)"
    return f"inferred; {tried} of {of} answers checked, none verified"


def failure_reason(status: str, observations: list[dict]) -> dict[str, Any]:
    """`reason`: one line on why a kernel ended `status`, from the first error observed (else the
    first warning); `details`: for a compile error, the first lines of the compiler's messages."""
    errors = [o for o in observations if o.get("severity", "error") == "error"]
    shown = errors or [o for o in observations if o.get("severity") == "warning"]
    if not shown:
        return {"reason": "no attempt produced code" if status in ("unsupported", "llm_unreachable") else f"ended {status}"}
    reason = _observation_text(shown[0]).splitlines()[0][:REASON_CHARS]
    if status != "compile_error":
        return {"reason": reason}
    compiler = "\n".join(_observation_text(o) for o in shown if o.get("kind") == "compile")
    return {"reason": reason, "details": compiler.splitlines()[:DETAIL_LINES]}


def _observation_text(obs: dict) -> str:
    file, line = obs.get("file"), obs.get("line")
    where = f"{file}:{line}: " if file and line else f"{file}: " if file else ""
    return f"{where}{obs.get('message', '').strip()}"


def code_of(state: KernelState) -> str | None:
    """The code that goes to OUT/<name>/<name>.cpp: the result's attempt."""
    number = (state.get("result") or {}).get("attempt")
    for attempt in state.get("attempts") or []:
        if attempt["n"] == number:
            return attempt.get("code")
    return None


def task_artifacts(task: Task) -> list[dict[str, Any]]:
    """The task and every file it names, so that a trace is enough to replay the run."""
    files: dict[str, Path] = {}
    if task.cuda:
        files[task.cuda] = task.path_of(task.cuda)
    ref = task.reference
    if ref.path:
        files[ref.path] = task.path_of(ref.path)
    if ref.kind == "python" and ref.function and ":" in ref.function:
        module = ref.function.split(":", 1)[0].replace(".", "/") + ".py"
        files.setdefault(module, task.path_of(module))
    for buffer in task.buffers:
        if buffer.data:  # a .npy of captured input values
            files.setdefault(buffer.data, task.path_of(buffer.data))
    out = [{"name": "task.json", "role": "task", "content": task.model_dump(mode="json", exclude_none=True)}]
    for rel, path in files.items():
        if not path.is_file():
            continue
        raw = path.read_bytes()
        record = {"name": rel, "role": "task_file", "sha256": hashlib.sha256(raw).hexdigest()}
        if len(raw) > MAX_EMBEDDED_BYTES:
            out.append({**record, "omitted": f"{len(raw)} bytes: too large to embed (replay needs the file)"})
            continue
        try:
            out.append({**record, "encoding": "utf-8", "content": raw.decode("utf-8")})
        except UnicodeDecodeError:
            out.append({**record, "encoding": "base64", "content": base64.b64encode(raw).decode()})
    return out
