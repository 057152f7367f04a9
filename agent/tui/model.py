"""What the TUI shows, folded from trace events.

The same fold serves the live session (events arrive as the graph writes them) and the
trace viewer (the state at step i is the fold of the first i events), so what a user saw
live is what a replay of the trace shows. Plain data only; no Textual here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

STEPS = ("plan", "translate", "compile", "test", "profile", "decide")
# The states of a session's run, as the driver reports them.
IDLE, RUNNING, PAUSED, FINISHED, STOPPED = "idle", "running", "paused", "finished", "stopped"
LOG_KEEP = 2000  # event-log lines kept in memory


@dataclass
class AttemptView:
    n: int
    mode: str = ""
    code: str | None = None
    status: str = "pending"
    speedup: float | None = None
    time_s: dict[str, Any] = field(default_factory=dict)
    max_abs_err: float | None = None


@dataclass
class KernelView:
    name: str
    stage: str = "waiting"  # waiting, plan..decide, paused, done, failed
    translator: str = ""
    thread_id: str = ""
    cuda: str = ""
    cuda_name: str = ""
    lowering: str | None = None
    plan: dict[str, Any] = field(default_factory=dict)
    attempts: dict[int, AttemptView] = field(default_factory=dict)
    observations: list[dict[str, Any]] = field(default_factory=list)
    decision: dict[str, Any] = field(default_factory=dict)
    result_status: str | None = None  # set when the kernel's loop ended
    accepted: int | None = None  # the attempt the user accepted as the result
    tokens: int = 0
    cost_usd: float = 0.0
    elapsed_s: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def iterations(self) -> int:
        return max(self.attempts, default=0)

    @property
    def status(self) -> str:
        """The final status once finished, else the latest attempt's."""
        if self.result_status:
            return self.result_status
        if self.attempts:
            return self.attempts[self.iterations].status
        return "-"

    @property
    def best(self) -> AttemptView | None:
        """The fastest correct attempt."""
        correct = [a for a in self.attempts.values() if a.status == "correct"]
        timed = [a for a in correct if (a.time_s or {}).get("candidate")]
        if timed:
            return min(timed, key=lambda a: a.time_s["candidate"])
        return correct[-1] if correct else None

    @property
    def speedup(self) -> float | None:
        chosen = self.attempts.get(self.accepted) if self.accepted else self.best
        return chosen.speedup if chosen else None

    @property
    def finished(self) -> bool:
        return self.stage in ("done", "failed")

    @property
    def current_code(self) -> str | None:
        """The code of the latest attempt that had some."""
        for n in sorted(self.attempts, reverse=True):
            if self.attempts[n].code:
                return self.attempts[n].code
        return None

    def versions(self) -> dict[str, str]:
        """Labelled code versions for a diff: the lowering, then every attempt with code."""
        out = {"lowering": self.lowering} if self.lowering else {}
        for n in sorted(self.attempts):
            if self.attempts[n].code:
                out[f"attempt {n}"] = self.attempts[n].code
        return out


@dataclass
class RunView:
    kernels: dict[str, KernelView] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)
    seq: int = 0  # the last event folded in
    run_note: str = ""  # e.g. a repository port's check result

    def kernel(self, name: str) -> KernelView:
        if name not in self.kernels:
            self.kernels[name] = KernelView(name)
        return self.kernels[name]

    # --- summary -------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        views = list(self.kernels.values())
        speedups = [k.speedup for k in views if k.result_status == "correct" and k.speedup]
        geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None
        return {
            "kernels": len(views),
            "done": sum(k.finished for k in views),
            "correct": sum(k.result_status == "correct" for k in views),
            "geomean_speedup": geomean,
            "tokens": sum(k.tokens for k in views),
            "cost_usd": sum(k.cost_usd for k in views),
        }

    # --- the fold ------------------------------------------------------------------
    def apply(self, event: dict[str, Any]) -> None:
        self.seq = max(self.seq, event.get("seq") or 0)
        line = log_line(event)
        if line:
            self.log.append(line)
            del self.log[:-LOG_KEEP]
        node, kind, data = event.get("node"), event.get("type"), event.get("data") or {}
        name = event.get("kernel")
        if name is None:
            self._apply_run(node, kind, data)
            return
        view = self.kernel(name)
        if node == "kernel":
            _apply_kernel(view, kind, data)
        elif node == "run" and kind == "decision":  # finished in an earlier run
            view.result_status = data.get("status") or view.result_status or "correct"
            view.stage = _final_stage(view.result_status)
        else:
            _apply_step(view, node, kind, data)

    def _apply_run(self, node: str | None, kind: str | None, data: dict[str, Any]) -> None:
        """Run-level events; a repository port names its kernels here."""
        if node == "discover" and kind == "node_end":
            for k in data.get("kernels") or []:
                self.kernel(k.get("name", "?")).cuda_name = f"{k.get('file')}:{k.get('line')}"
        elif node == "report" and kind == "decision":
            for k in data.get("kernels") or []:
                view = self.kernel(k["name"])
                view.result_status = k.get("status")
                view.stage = _final_stage(view.result_status)
                if k.get("speedup"):
                    view.attempts.setdefault(1, AttemptView(1, status=k["status"])).speedup = k["speedup"]
            check = data.get("check") or {}
            self.run_note = f"build {'ok' if data.get('build_ok') else 'FAILED'}; check: {check.get('detail', '-')}"


def fold(events: list[dict[str, Any]]) -> RunView:
    view = RunView()
    for event in events:
        view.apply(event)
    return view


def _final_stage(status: str | None) -> str:
    return "done" if status == "correct" else "failed"


def _apply_kernel(view: KernelView, kind: str | None, data: dict[str, Any]) -> None:
    if kind == "node_start":
        view.thread_id = data.get("thread_id", view.thread_id)
        view.translator = data.get("translator", view.translator)
        view.result_status = None
        if view.stage in ("waiting", "paused", "done", "failed"):
            view.stage = "started"
    elif kind == "node_end":
        if data.get("paused"):
            view.stage = "paused"
        else:
            view.result_status = data.get("status")
            view.stage = _final_stage(view.result_status)


def _apply_step(view: KernelView, node: str | None, kind: str | None, data: dict[str, Any]) -> None:
    attempt = data.get("attempt") if isinstance(data.get("attempt"), int) else None
    if kind == "node_start" and node in STEPS:
        view.stage = node
        if node == "translate" and attempt:
            view.attempts.setdefault(attempt, AttemptView(attempt))
    elif kind == "node_end":
        view.elapsed_s += data.get("elapsed_s") or 0.0
        if node == "translate" and data.get("status") == "no_code" and view.attempts:
            view.attempts[view.iterations].status = "no_code"
    elif kind == "artifact":
        _apply_artifact(view, data)
    elif kind == "tool_result":
        _apply_tool_result(view, data)
    elif kind == "observation":
        view.observations.append(data)
    elif kind == "llm_response":
        reply = data.get("reply") or {}
        view.tokens += (reply.get("input_tokens") or 0) + (reply.get("output_tokens") or 0)
        view.cost_usd += reply.get("cost_usd") or 0.0
    elif kind == "decision":
        view.decision = data
        if node == "user" and data.get("next") in ("translate", "fix", "optimize"):  # a finished kernel reopened
            view.result_status, view.stage, view.accepted = None, "paused", None
        if node == "user" and data.get("accepted"):
            view.accepted = data["accepted"]
        if data.get("translator"):
            view.translator = data["translator"]
    elif kind == "error":
        view.errors.append(str(data.get("error", data)))


def _apply_artifact(view: KernelView, data: dict[str, Any]) -> None:
    role = data.get("role")
    if role == "candidate":
        n = data.get("attempt") or view.iterations or 1
        attempt = view.attempts.setdefault(n, AttemptView(n))
        attempt.code, attempt.mode = data.get("code"), data.get("mode", "")
    elif role == "task":
        content = data.get("content") or {}
        if content.get("cuda_code"):
            view.cuda, view.cuda_name = content["cuda_code"], "(inline CUDA)"
        view.plan.setdefault("cuda_file", content.get("cuda"))
    elif role == "task_file" and data.get("name") == view.plan.get("cuda_file") and data.get("encoding") == "utf-8":
        view.cuda, view.cuda_name = data.get("content", ""), data.get("name", "")


def _apply_tool_result(view: KernelView, data: dict[str, Any]) -> None:
    tool, result = data.get("tool"), data.get("result") or {}
    if tool == "plan":
        view.lowering = result.get("lowering")
        view.plan.update({k: v for k, v in result.items() if k not in ("lowering", "observations")})
        return
    n = data.get("attempt")
    if not isinstance(n, int) or n < 1:
        return
    attempt = view.attempts.setdefault(n, AttemptView(n))
    if tool == "compile":
        attempt.status = "compiled" if result.get("ok") else "compile_error"
    elif tool == "check":
        attempt.status = result.get("status") or attempt.status
        attempt.max_abs_err = result.get("max_abs_err")
    elif tool == "profile":
        if result.get("status"):
            attempt.status = result["status"]
        attempt.time_s = result.get("time_s") or {}
        attempt.speedup = result.get("speedup_vs_reference")


def log_line(event: dict[str, Any]) -> str:
    """One readable line per event worth showing in the live log ("" for the rest)."""
    kind, node, data = event.get("type"), event.get("node"), event.get("data") or {}
    who = event.get("kernel") or "run"
    if kind == "node_start":
        if node in STEPS and node != "decide":  # a decision has its own line
            attempt = data.get("attempt")
            return f"{who}: {node}" + (f" (attempt {attempt})" if node == "translate" and attempt else "")
        if node == "kernel":
            return f"{who}: {'resumed' if data.get('resumed') else 'started'} ({data.get('translator', '')})"
        return ""
    if kind == "node_end" and node == "kernel":
        return f"{who}: paused" if data.get("paused") else f"{who}: finished {data.get('status')}"
    if kind == "tool_result":
        tool = data.get("tool") or node  # a repository port's steps name no tool
        return f"{who}: {tool} -> {_verdict(tool, data.get('result') or data)}"
    if kind == "observation":
        return f"{who}: [{data.get('kind')}] {_first_line(data.get('message', ''))}"
    if kind == "decision":
        return f"{who}: decide {data.get('next', '')}: {data.get('reason', '')}"
    if kind == "llm_response":
        reply = data.get("reply") or {}
        tokens = (reply.get("input_tokens") or 0) + (reply.get("output_tokens") or 0)
        return f"{who}: model answered ({tokens} tokens, ${reply.get('cost_usd') or 0:.4f})"
    if kind == "error":
        return f"{who}: ERROR {_first_line(str(data.get('error', data)))}"
    return ""


def _verdict(tool: str | None, result: dict[str, Any]) -> str:
    if tool in ("compile", "build"):
        return "ok" if result.get("ok") else "errors"
    if "passed" in result:
        return "passed" if result["passed"] else "FAILED"
    if tool == "profile":
        speedup = result.get("speedup_vs_reference")
        return f"{speedup:.2f}x vs reference" if speedup else str(result.get("status", "timed"))
    if tool == "plan":
        return f"{result.get('pattern', '?')}, lowering {'ok' if result.get('lowering') else 'none'}"
    return str(result.get("status", "done"))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
