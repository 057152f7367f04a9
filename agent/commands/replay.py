"""`agent replay TRACE` and `agent trace show TRACE`.

Replay runs each traced kernel's graph again with no model and no network: the task is
rebuilt from the trace's artifacts, LLM answers come from the recorded responses
(ScriptedModel), and the graph follows the recorded decisions. The tools run again by
default and every place where a new result differs from the recorded one (compile ok,
check status, error messages, candidate code) is reported; `--offline` serves the tool
results (and the deterministic compiler's code) from the trace too.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agent.configuration import Settings, load_settings
from agent.errors import UserError
from agent.graph import GraphContext, build_graph, recursion_limit
from agent.llm.scripted import ScriptedModel
from agent.state import initial_state
from agent.trace import Trace, TraceError, TraceWriter, read_trace
from agent.translators.base import Translation, TranslateRequest
from tools.observations import Observation
from tools.spec import Task, TaskError, load_task

COMPARED = {"compile": ("ok",), "check": ("status",), "profile": ("status",), "plan": ()}


@dataclass
class Divergence:
    kernel: str
    where: str  # "check attempt 2", "decision 3", "artifact attempt-1.cpp", "result"
    recorded: str
    replayed: str


@dataclass
class KernelReplay:
    kernel: str
    recorded_status: str | None
    replayed_status: str | None
    divergences: list[Divergence] = field(default_factory=list)


# --- replay --------------------------------------------------------------------------


def run(trace: Path, *, offline: bool = False, console: Console | None = None, out: Path | None = None) -> int:
    """0 when the replay reproduced the recorded run, 1 when it diverged. The new trace goes
    to `out/replay.jsonl` (default: a fresh temporary directory)."""
    console = console or Console()
    recorded = _read(trace)
    settings = settings_from_header(recorded.header)
    workdir = Path(tempfile.mkdtemp(prefix="agent-replay-", dir=out))
    new_trace = workdir / "replay.jsonl"
    console.print(f"replaying {trace} ({'offline: tool results from the trace' if offline else 'tools re-run'}); new trace: {new_trace}", highlight=False, soft_wrap=True)
    replays = []
    sandbox = None if offline else _open_sandbox(settings)
    if sandbox is not None:
        console.print(f"sandbox: [bold]{sandbox.kind}[/] ({sandbox.mode})", highlight=False)
    argv = ["agent", "replay", str(trace)] + (["--offline"] if offline else [])
    try:
        with TraceWriter(new_trace, argv=argv, config=recorded.header.get("config", {})) as writer:
            writer.event("node_start", node="run", data={"replay_of": str(trace), "offline": offline,
                                                         "sandbox": {"kind": sandbox.kind, "mode": sandbox.mode} if sandbox else None})
            for kernel in recorded.kernels():
                try:
                    outcome = replay_kernel(recorded, kernel, settings, writer=writer, workdir=workdir / kernel, sandbox=sandbox)
                finally:
                    shutil.rmtree(workdir / kernel, ignore_errors=True)  # the rebuilt task; the new trace stays
                if outcome is not None:
                    replays.append(outcome)
    finally:
        if sandbox is not None:
            sandbox.close()
    if not replays:
        raise UserError(f"{trace}: no kernel in this trace can be replayed (no task artifacts recorded)")
    console.print(_replay_table(replays))
    diverged = [d for r in replays for d in r.divergences]
    if diverged:
        table = Table(title="divergences from the recorded run")
        for column in ("kernel", "where", "recorded", "replayed"):
            table.add_column(column, overflow="fold")
        for d in diverged:
            table.add_row(d.kernel, d.where, d.recorded, d.replayed)
        console.print(table)
        return 1
    console.print("[green]the replay reproduced the recorded run[/]")
    return 0


def _read(trace: Path) -> Trace:
    try:
        return read_trace(trace)
    except TraceError as exc:
        raise UserError(str(exc)) from None


def settings_from_header(header: dict[str, Any]) -> Settings:
    """The recorded run's configuration (budgets above all), with no key, and this machine's sandbox choice."""
    config = {k: v for k, v in (header.get("config") or {}).items() if not k.endswith("api_key")}
    config["sandbox"] = load_settings().sandbox
    try:
        return Settings(**config)
    except Exception:  # a trace from another version: keep what still validates
        base = load_settings()
        budgets = config.get("budgets") or {}
        try:
            return base.model_copy(update={"budgets": base.budgets.model_copy(update=budgets), "llm": config.get("llm", base.llm)})
        except Exception:
            return base


def _open_sandbox(settings: Settings):
    from sandboxes import open_sandbox

    from agent.toolbox import limits_of

    return open_sandbox(settings.sandbox, limits=limits_of(settings), image=settings.docker_image)


def replay_kernel(recorded: Trace, kernel: str, settings: Settings, *, writer: TraceWriter, workdir: Path, sandbox: Any) -> KernelReplay | None:
    """Replay one kernel; `sandbox` None means offline (tool results from the trace)."""
    events = recorded.of(kernel)
    task = rebuild_task(events, workdir)
    if task is None:
        return None
    spec = _translator_spec(events, settings)
    attempts = _by_attempt(events)
    steer = _Steer(kernel, recorded_decisions(events))
    translator = _replay_translator(spec, attempts, settings, offline=sandbox is None)
    if sandbox is None:
        tools: Any = RecordedToolbox(events)
    else:
        from agent.toolbox import LiveToolbox

        tools = LiveToolbox(settings, sandbox)
    ctx = GraphContext(settings=settings, trace=writer, tools=tools, translator_for=lambda _spec: translator, steer=steer)
    graph = build_graph(ctx)
    start = initial_state(kernel=kernel, task=task.model_dump(mode="json", exclude_none=True), base_dir=str(task.base_dir),
                          translator=spec, run_limits={})
    final = graph.invoke(start, {"recursion_limit": recursion_limit(settings)})
    new_events = [e for e in read_trace(writer.path).of(kernel)]
    recorded_status = _final_status(events)
    replayed_status = (final.get("result") or {}).get("status")
    divergences = steer.divergences + compare_events(kernel, events, new_events)
    if recorded_status and replayed_status != recorded_status:
        divergences.append(Divergence(kernel, "result", recorded_status, str(replayed_status)))
    return KernelReplay(kernel, recorded_status, replayed_status, divergences)


def rebuild_task(events: list[dict], workdir: Path) -> Task | None:
    """Write the traced task and its files into `workdir` and load it; None when not recorded."""
    files = [e["data"] for e in events if e["type"] == "artifact" and e["data"].get("role") in ("task", "task_file")]
    if not any(f.get("role") == "task" for f in files):
        return None
    workdir.mkdir(parents=True, exist_ok=True)
    for f in files:
        path = workdir / ("task.json" if f["role"] == "task" else f["name"])
        if workdir.resolve() not in path.resolve().parents:
            raise UserError(f"trace artifact {f['name']!r} would be written outside the replay directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        if "omitted" in f:
            raise UserError(f"the trace does not hold the task file {f['name']} ({f['omitted']})")
        if f["role"] == "task":
            path.write_text(json.dumps(f["content"], indent=2))
        elif f.get("encoding") == "base64":
            path.write_bytes(base64.b64decode(f["content"]))
        else:
            path.write_text(f["content"])
    try:
        return load_task(workdir / "task.json")
    except TaskError as exc:
        raise UserError(f"the traced task cannot be rebuilt: {exc}") from None


def _translator_spec(events: list[dict], settings: Settings) -> str:
    for e in events:
        if e["type"] == "node_start" and e["node"] == "kernel" and e["data"].get("translator"):
            return e["data"]["translator"]
    return settings.llm


def _by_attempt(events: list[dict]) -> dict[int, dict[str, Any]]:
    """Per attempt: its LLM exchanges, artifact and translate observations (a re-run node's last copy wins)."""
    out: dict[int, dict[str, Any]] = defaultdict(lambda: {"exchanges": [], "code": None, "observations": []})
    pending_request: dict[int, dict] = {}
    for e in events:
        data, n = e["data"], e["data"].get("attempt") if isinstance(e["data"], dict) else None
        if e["node"] != "translate" or not isinstance(n, int):
            continue
        if e["type"] == "node_start":
            out[n] = {"exchanges": [], "code": None, "observations": []}  # a re-run translate replaces the earlier copy
        elif e["type"] == "llm_request":
            pending_request[n] = {k: v for k, v in data.items() if k != "attempt"}
        elif e["type"] == "llm_response":
            exchange = {"request": pending_request.pop(n, {}), **{k: v for k, v in data.items() if k != "attempt"}}
            out[n]["exchanges"].append(exchange)
        elif e["type"] == "artifact" and data.get("role") == "candidate":
            out[n]["code"] = data.get("code")
        elif e["type"] == "observation":
            out[n]["observations"].append(data)
    return dict(out)


class RecordedTranslator:
    """The recorded candidate of each attempt (offline replay of a non-LLM translator)."""

    def __init__(self, name: str, attempts: dict[int, dict[str, Any]]) -> None:
        self.name = name
        self.attempts = attempts

    def translate(self, request: TranslateRequest) -> Translation:
        recorded = self.attempts.get(request.attempt, {})
        fields = set(Observation.model_fields)
        observations = [Observation.model_validate({k: v for k, v in o.items() if k in fields}) for o in recorded.get("observations", [])]
        return Translation(code=recorded.get("code"), notes="recorded", observations=observations)


def _replay_translator(spec: str, attempts: dict[int, dict[str, Any]], settings: Settings, offline: bool) -> Any:
    if spec.split(":", 1)[0] != "compiler":
        from agent.translators.llm import LLMTranslator

        exchanges = [x for n in sorted(attempts) for x in attempts[n]["exchanges"]]
        return LLMTranslator(ScriptedModel.from_exchanges(exchanges, name=spec), settings)
    if offline:
        return RecordedTranslator(spec, attempts)
    from agent.translators.factory import make_translator

    return make_translator(spec, settings)


class RecordedToolbox:
    """Tool results from a trace, served in recorded order per tool (a re-run step's last copy wins)."""

    def __init__(self, events: list[dict]) -> None:
        latest: dict[str, dict[int, dict]] = defaultdict(dict)
        for e in events:
            if e["type"] == "tool_result":
                latest[e["data"]["tool"]][e["data"].get("attempt", 0)] = e["data"]["result"]
        self._queues = {tool: [results[n] for n in sorted(results)] for tool, results in latest.items()}

    def _next(self, tool: str) -> dict:
        queue = self._queues.get(tool) or []
        if not queue:
            raise LookupError(f"the trace has no further recorded {tool} result")
        return queue.pop(0)

    def plan(self, task: Task) -> dict:
        return self._next("plan")

    def compile(self, task: Task, code: str) -> dict:
        return self._next("compile")

    def check(self, task: Task, code: str) -> dict:
        return self._next("check")

    def profile(self, task: Task, code: str, baseline: str | None = None) -> dict:
        return self._next("profile")


def recorded_decisions(events: list[dict]) -> list[dict]:
    """The decisions the recorded run followed, in order: the graph's own (node "decide"), where
    a user's steering (node "user", written by the TUI before the next step) replaced one."""
    out: list[dict] = []
    replaceable = False  # the last decision came from `decide` and no step has run since
    for e in events:
        if e["type"] == "node_start" and e["node"] != "decide":
            replaceable = False
        if e["type"] != "decision":
            continue
        if e["node"] == "decide":
            out.append(e["data"])
            replaceable = True
        elif e["node"] == "user" and e["data"].get("next") in ("fix", "optimize", "done"):
            if replaceable and out:
                out[-1] = e["data"]
            else:
                out.append(e["data"])
            replaceable = False
    return out


class _Steer:
    """Makes the replayed graph take the recorded decisions, noting where it would not have."""

    def __init__(self, kernel: str, decisions: list[dict]) -> None:
        self.kernel = kernel
        self.decisions = list(decisions)
        self.count = 0
        self.divergences: list[Divergence] = []

    def __call__(self, kernel: str, decision: dict) -> dict:
        self.count += 1
        if not self.decisions:
            return decision
        recorded = self.decisions.pop(0)
        if recorded.get("next") != decision.get("next"):
            self.divergences.append(Divergence(kernel, f"decision {self.count}", _decision_text(recorded), _decision_text(decision)))
        return {**recorded, "replayed_would_have": decision} if recorded.get("next") != decision.get("next") else decision


def _decision_text(d: dict) -> str:
    return f"{d.get('next')}: {d.get('reason', '')}"


def compare_events(kernel: str, recorded: list[dict], replayed: list[dict]) -> list[Divergence]:
    """Tool results and candidate code, attempt by attempt."""
    out = []
    old, new = _tool_results(recorded), _tool_results(replayed)
    for key in sorted(set(old) | set(new), key=lambda k: (k[1], k[0])):
        tool, n = key
        where = f"{tool} attempt {n}" if n else tool
        if key not in new or key not in old:
            out.append(Divergence(kernel, where, "ran" if key in old else "did not run", "ran" if key in new else "did not run"))
            continue
        a, b = _essence(tool, old[key]), _essence(tool, new[key])
        if a != b:
            out.append(Divergence(kernel, where, _short(a), _short(b)))
    old_code, new_code = _candidates(recorded), _candidates(replayed)
    for n in sorted(set(old_code) | set(new_code)):
        if old_code.get(n) != new_code.get(n):
            out.append(Divergence(kernel, f"artifact attempt-{n}.cpp", _code_text(old_code.get(n)), _code_text(new_code.get(n))))
    return out


def _tool_results(events: list[dict]) -> dict[tuple[str, int], dict]:
    return {(e["data"]["tool"], e["data"].get("attempt", 0)): e["data"]["result"] for e in events if e["type"] == "tool_result"}


def _candidates(events: list[dict]) -> dict[int, str]:
    return {e["data"]["attempt"]: e["data"]["code"] for e in events if e["type"] == "artifact" and e["data"].get("role") == "candidate"}


def _essence(tool: str, result: dict) -> dict:
    """What must agree between two runs: the verdict and the error messages (not timings)."""
    keep = {k: result.get(k) for k in COMPARED.get(tool, ()) if k in result}
    errors = sorted(o.get("message", "") for o in result.get("observations", []) if o.get("severity") == "error")
    if tool != "profile":
        keep["errors"] = errors
    return keep


def _short(value: dict) -> str:
    text = json.dumps(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _code_text(code: str | None) -> str:
    return "(none)" if code is None else f"{len(code.splitlines())} lines"


def _final_status(events: list[dict]) -> str | None:
    for e in reversed(events):
        if e["type"] == "node_end" and e["node"] == "kernel":
            return e["data"].get("status")
    return None


def _replay_table(replays: list[KernelReplay]) -> Table:
    table = Table(title="replay")
    for column in ("kernel", "recorded", "replayed", "divergences"):
        table.add_column(column)
    for r in replays:
        table.add_row(r.kernel, r.recorded_status or "-", r.replayed_status or "-", str(len(r.divergences)))
    return table


# --- show ----------------------------------------------------------------------------

TYPE_STYLE = {
    "node_start": "cyan", "node_end": "cyan", "llm_request": "magenta", "llm_response": "magenta", "tool_call": "blue",
    "tool_result": "blue", "observation": "yellow", "artifact": "green", "decision": "bold", "error": "red",
}


def show(trace: Path, *, console: Console | None = None) -> int:
    console = console or Console()
    recorded = _read(trace)
    h = recorded.header
    config = h.get("config") or {}
    console.print(f"[bold]trace[/] {trace}  run {h.get('run_id')}  started {h.get('started')}", highlight=False)
    console.print(f"argv: {' '.join(h.get('argv') or [])}   translator: {config.get('llm', '?')}", highlight=False)
    if recorded.bad_lines:
        console.print(f"[yellow]{len(recorded.bad_lines)} unreadable line(s) (cut off by a kill?): {recorded.bad_lines[:10]}[/]")
    t0 = recorded.events[0]["t"] if recorded.events else 0
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("seq", "t+s", "kernel", "node", "type", "what"):
        table.add_column(column, overflow="fold")
    for e in recorded.events:
        style = TYPE_STYLE.get(e["type"], "white")
        table.add_row(str(e.get("seq")), f"{e.get('t', t0) - t0:.1f}", e.get("kernel") or "", e.get("node") or "",
                      f"[{style}]{e['type']}[/]", describe(e))
    console.print(table)
    finals = {e["kernel"]: e["data"].get("status") for e in recorded.events if e["type"] == "node_end" and e["node"] == "kernel"}
    for kernel, status in finals.items():
        console.print(f"[bold]{kernel}[/]: {status}", highlight=False)
    return 0


def describe(e: dict) -> str:
    """One line saying what an event holds (any event: other writers' data shapes fall back to JSON)."""
    try:
        return _describe(e)
    except (AttributeError, TypeError, KeyError, ValueError):
        return json.dumps(e.get("data"), default=str)[:200]


def _describe(e: dict) -> str:
    d = e.get("data") or {}
    kind = e["type"]
    if kind in ("node_start", "node_end"):
        parts = [f"{k}={v}" for k, v in d.items() if k in ("attempt", "status", "elapsed_s", "resumed", "translator", "paused")]
        if "sandbox" in d:
            sandbox = d["sandbox"]
            parts.append(f"sandbox={sandbox.get('mode') if isinstance(sandbox, dict) else sandbox}")
        return " ".join(parts)
    if kind == "llm_request":
        body = d.get("body") or {}
        model = body.get("model") if isinstance(body, dict) else None
        return f"attempt {d.get('attempt')}: {d.get('provider', '?')} {d.get('api', '')} {model or ''} {len(json.dumps(body))} chars".strip()
    if kind == "llm_response":
        reply = d.get("reply") or {}
        if not reply:
            return f"attempt {d.get('attempt')}: failed: {d.get('error', '')}"
        return (f"attempt {d.get('attempt')}: {reply.get('input_tokens', 0)}+{reply.get('output_tokens', 0)} tokens, "
                f"finish={reply.get('finish_reason')}, {len(reply.get('text') or '')} chars")
    if kind == "tool_call":
        return f"{d.get('tool')} (attempt {d.get('attempt')})"
    if kind == "tool_result":
        r = d.get("result") or {}
        verdict = r.get("status") or ("ok" if r.get("ok") else "failed" if "ok" in r else "")
        extra = ""
        if d.get("tool") == "profile" and r.get("speedup_vs_reference"):
            extra = f" {r['speedup_vs_reference']:.2f}x vs reference"
        if d.get("tool") == "plan":
            extra = f" pattern={r.get('pattern')} features={','.join(r.get('features') or [])} lowering={'yes' if r.get('lowering') else 'no'}"
        return f"{d.get('tool')}: {verdict}{extra}".strip()
    if kind == "observation":
        where = f" {d.get('file')}:{d.get('line')}" if d.get("file") else ""
        return f"[{d.get('kind')}/{d.get('severity')}]{where} {(d.get('message') or '')[:200]}"
    if kind == "artifact":
        content = d.get("code") if "code" in d else d.get("content")
        size = f"{len(content.splitlines())} lines" if isinstance(content, str) else "json"
        return f"{d.get('name')} ({d.get('role')}, {size})"
    if kind == "decision":
        return f"-> {d.get('next')}: {d.get('reason', '')}"
    if kind == "error":
        return str(d.get("error", ""))[:300]
    return json.dumps(d)[:200]
