"""`agent replay TRACE` and `agent trace show TRACE`.

Replay runs each traced kernel's graph again with no model and no network: the task is
rebuilt from the trace's artifacts, LLM answers come from the recorded responses
(ScriptedModel), and the graph follows the recorded decisions. The tools run again by
default and every place where a new result differs from the recorded one (compile ok,
check status, error messages, candidate code, decisions) is reported; `--offline` serves the
tool results (and the deterministic compiler's code) from the trace too.

Only what is deterministic counts as a divergence. Two kinds of difference are expected and
reported apart: absolute paths of the task's directory (the replay rebuilds the task
elsewhere), and choices made by measuring time (code an optimizer kept because it timed
faster, and whether to optimize again after a correct optimized attempt).

A repository port's trace (agent/project.py: discover, translate, build, check, tune) holds
no kernel graph run: its kernels were tuned in a run of their own, traced in
OUT/kernels/trace.jsonl beside it, and replaying the port's trace replays that one.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agent.configuration import Settings, load_settings
from agent.errors import UserError
from agent.graph import GraphContext, build_graph, recursion_limit
from agent.llm.scripted import ScriptedModel
from agent.state import initial_state
from agent.trace import Trace, TraceError, TraceWriter, read_trace
from agent.translators.base import Translation, TranslateRequest
from tools.observations import Observation
from tools.spec import Task, TaskError, load_task
from tools.speedups import UNTUNED_PORT, reference_name, speedup_text

COMPARED = {"compile": ("ok",), "check": ("status",), "profile": ("status",), "plan": ()}


@dataclass
class Divergence:
    kernel: str
    where: str  # "check attempt 2", "decision 3", "artifact attempt-1.cpp", "result"
    recorded: str
    replayed: str
    why: str = ""  # for an expected difference: why it does not count


@dataclass
class KernelReplay:
    kernel: str
    recorded_status: str | None
    replayed_status: str | None
    divergences: list[Divergence] = field(default_factory=list)
    expected: list[Divergence] = field(default_factory=list)  # differences that do not count (paths, timings)


PATHS_DIFFER = "absolute paths: the replay rebuilds the task in another directory"
TIMING_CHOSE_CODE = "chosen by timing: the optimizer kept what measured faster"
TIMING_CHOSE_NEXT = "chosen by timing: whether to optimize again follows the measured gain"


# --- replay --------------------------------------------------------------------------


def run(trace: Path, *, offline: bool = False, console: Console | None = None, out: Path | None = None) -> int:
    """0 when the replay reproduced the recorded run, 1 when it diverged. The new trace goes
    to `out/replay.jsonl` (default: a fresh temporary directory)."""
    console = console or Console()
    recorded = _read(trace)
    if is_port_trace(recorded):
        kernel_runs = port_kernel_trace(trace, recorded)
        console.print(f"{trace} is a repository port's trace; its kernels ran in {kernel_runs}: replaying those",
                      highlight=False, soft_wrap=True, markup=False)
        trace, recorded = kernel_runs, _read(kernel_runs)
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
    expected = [d for r in replays for d in r.expected]
    if expected:
        console.print(_difference_table("expected differences (not counted)", expected, why=True))
    diverged = [d for r in replays for d in r.divergences]
    if diverged:
        console.print(_difference_table("divergences from the recorded run", diverged, why=False))
        return 1
    console.print("[green]the replay reproduced the recorded run[/]"
                  + (f" (apart from {len(expected)} expected difference(s))" if expected else ""))
    return 0


def _difference_table(title: str, differences: list[Divergence], *, why: bool) -> Table:
    table = Table(title=title)
    for column in ("kernel", "where", *(["why"] if why else []), "recorded", "replayed"):
        table.add_column(column, overflow="fold")
    for d in differences:
        table.add_row(*map(Text, (d.kernel, d.where, *([d.why] if why else []), d.recorded, d.replayed)))
    return table


def is_port_trace(trace: Trace) -> bool:
    """A repository port's own trace (agent/project.py): it begins with what discovery found."""
    return any(e.get("node") == "discover" for e in trace.events)


def port_kernel_trace(path: Path, trace: Trace) -> Path:
    """The trace of the kernel runs a port tuned: OUT/kernels/trace.jsonl beside OUT/trace.jsonl."""
    if not any(e["type"] == "tool_result" and e.get("node") == "capture" for e in trace.events):
        raise UserError(f"{path}: this repository port tuned no kernel (no launches were captured): "
                        "it recorded no kernel run to replay")
    beside = path.parent / "kernels" / "trace.jsonl"
    if not beside.is_file():
        raise UserError(f"{path}: this repository port's kernels ran in a trace of their own, OUT/kernels/trace.jsonl, "
                        f"and there is none at {beside}: replay that trace instead")
    return beside


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
    timed_choices = timing_driven_decisions(new_events)
    decided = [d for d in steer.divergences if d.where not in timed_choices]
    expected = [Divergence(d.kernel, d.where, d.recorded, d.replayed, TIMING_CHOSE_NEXT)
                for d in steer.divergences if d.where in timed_choices]
    diverged, differ = compare_events(kernel, events, new_events)
    divergences, expected = decided + diverged, expected + differ
    if recorded_status and replayed_status != recorded_status:
        divergences.append(Divergence(kernel, "result", recorded_status, str(replayed_status)))
    return KernelReplay(kernel, recorded_status, replayed_status, divergences, expected)


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

    def search_launches(self, task: Task, probe_first: bool) -> dict:
        return self._next("search_launches")

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


def compare_events(kernel: str, recorded: list[dict], replayed: list[dict]) -> tuple[list[Divergence], list[Divergence]]:
    """Tool results and candidate code, attempt by attempt: (divergences, expected differences).
    Absolute paths of the task's directory are compared as `<task dir>`; an attempt's code that
    an optimizer chose by timing (in either run) may differ."""
    diverged, expected = [], []
    names = _task_file_names(recorded)
    old, new = _tool_results(recorded), _tool_results(replayed)
    for key in sorted(set(old) | set(new), key=lambda k: (k[1], k[0])):
        tool, n = key
        where = f"{tool} attempt {n}" if n else tool
        if key not in new or key not in old:
            diverged.append(Divergence(kernel, where, "ran" if key in old else "did not run", "ran" if key in new else "did not run"))
            continue
        a, b = _essence(tool, old[key]), _essence(tool, new[key])
        if a == b:
            continue
        if _essence(tool, old[key], names) == _essence(tool, new[key], names):
            expected.append(Divergence(kernel, where, _short(a), _short(b), PATHS_DIFFER))
        else:
            diverged.append(Divergence(kernel, where, _short(a), _short(b)))
    old_code, new_code = _candidates(recorded), _candidates(replayed)
    timed = _timing_chosen_code(recorded) | _timing_chosen_code(replayed)
    for n in sorted(set(old_code) | set(new_code)):
        a, b = old_code.get(n), new_code.get(n)
        if a == b:
            continue
        where, texts = f"artifact attempt-{n}.cpp", _code_difference(a, b)
        if a is not None and b is not None and _without_task_dir(a, names) == _without_task_dir(b, names):
            expected.append(Divergence(kernel, where, *texts, PATHS_DIFFER))
        elif a is not None and b is not None and n in timed:
            expected.append(Divergence(kernel, where, *texts, TIMING_CHOSE_CODE))
        else:
            diverged.append(Divergence(kernel, where, *texts))
    return diverged, expected


def _task_file_names(events: list[dict]) -> list[str]:
    return [e["data"]["name"] for e in events if e["type"] == "artifact" and e["data"].get("role") == "task_file"
            and isinstance(e["data"].get("name"), str)]


def _without_task_dir(text: str, names: list[str]) -> str:
    """`text` with the directory of every absolute path to a task file written as `<task dir>`."""
    for name in names:
        absolute = r"(?<![\w.-])/[^\s\"'()<>:,;]*/" + re.escape(name) + r"(?![\w.-])"
        text = re.sub(absolute, lambda _match: f"<task dir>/{name}", text)
    return text


def _timing_chosen_code(events: list[dict]) -> set[int]:
    """Attempts whose code an optimizer chose by timing alternatives (its observations carry the measured ratio)."""
    return {e["data"]["attempt"] for e in events
            if e["type"] == "observation" and e.get("node") == "translate" and e["data"].get("kind") == "optimization"
            and "ratio" in (e["data"].get("data") or {}) and isinstance(e["data"].get("attempt"), int)}


def timing_driven_decisions(events: list[dict]) -> set[str]:
    """The decisions ("decision N", counted as the steering counts them) taken on a correct optimized
    attempt: whether to optimize again then follows the measured gain."""
    out: set[str] = set()
    mode = status = None
    count = 0
    for e in events:
        if e["type"] == "node_start" and e.get("node") == "translate":
            mode = status = None
        elif e["type"] == "artifact" and e["data"].get("role") == "candidate":
            mode = e["data"].get("mode")
        elif e["type"] == "tool_result" and e["data"].get("tool") == "check":
            status = (e["data"].get("result") or {}).get("status")
        elif e["type"] == "decision" and e.get("node") == "decide":
            count += 1
            if mode == "optimize" and status == "correct":
                out.add(f"decision {count}")
    return out


def _tool_results(events: list[dict]) -> dict[tuple[str, int], dict]:
    return {(e["data"]["tool"], e["data"].get("attempt", 0)): e["data"]["result"] for e in events if e["type"] == "tool_result"}


def _candidates(events: list[dict]) -> dict[int, str]:
    return {e["data"]["attempt"]: e["data"]["code"] for e in events if e["type"] == "artifact" and e["data"].get("role") == "candidate"}


def _essence(tool: str, result: dict, task_files: list[str] | None = None) -> dict:
    """What must agree between two runs: the verdict and the error messages (not timings); with
    `task_files`, their absolute paths in the messages as `<task dir>`."""
    keep = {k: result.get(k) for k in COMPARED.get(tool, ()) if k in result}
    errors = sorted(_without_task_dir(o.get("message", ""), task_files or [])
                    for o in result.get("observations", []) if o.get("severity") == "error")
    if tool != "profile":
        keep["errors"] = errors
    return keep


def _short(value: dict) -> str:
    text = json.dumps(value)
    return text if len(text) <= 300 else text[:297] + "..."


def _code_difference(a: str | None, b: str | None) -> tuple[str, str]:
    """The first line where two candidates differ, as (recorded, replayed)."""
    if a is None or b is None:
        return tuple("(none)" if c is None else f"{len(c.splitlines())} lines" for c in (a, b))  # type: ignore[return-value]
    old, new = a.splitlines(), b.splitlines()
    n = next((i for i, (x, y) in enumerate(zip(old, new)) if x != y), min(len(old), len(new)))
    line = lambda lines: f"line {n + 1}: {lines[n].strip()[:200]}" if n < len(lines) else f"ends after {len(lines)} lines"  # noqa: E731
    return line(old), line(new)


def _final_status(events: list[dict]) -> str | None:
    for e in reversed(events):
        if e["type"] == "node_end" and e["node"] == "kernel":
            return e["data"].get("status")
    return None


def _replay_table(replays: list[KernelReplay]) -> Table:
    table = Table(title="replay")
    for column in ("kernel", "recorded", "replayed", "divergences", "expected differences"):
        table.add_column(column, overflow="fold")
    for r in replays:
        table.add_row(Text(r.kernel), r.recorded_status or "-", r.replayed_status or "-", str(len(r.divergences)),
                      str(len(r.expected)))
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
    console.print(f"[bold]trace[/] {escape(str(trace))}  run {h.get('run_id')}  started {h.get('started')}", highlight=False)
    console.print(f"argv: {escape(' '.join(h.get('argv') or []))}   translator: {escape(str(config.get('llm', '?')))}",
                  highlight=False)
    if recorded.bad_lines:
        console.print(f"[yellow]{len(recorded.bad_lines)} unreadable line(s) (cut off by a kill?): {recorded.bad_lines[:10]}[/]")
    t0 = recorded.events[0]["t"] if recorded.events else 0
    references = reference_kinds(recorded.events)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("seq", "t+s", "kernel", "node", "type", "what"):
        table.add_column(column, overflow="fold")
    for e in recorded.events:
        style = TYPE_STYLE.get(e["type"], "white")
        # Text, not markup: messages hold brackets ("u[i - 1]", "[mismatch]") that rich would eat.
        table.add_row(str(e.get("seq")), f"{e.get('t', t0) - t0:.1f}", Text(e.get("kernel") or ""), Text(e.get("node") or ""),
                      Text(str(e["type"]), style=style), Text(describe(e, references.get(e.get("kernel")))))
    console.print(table)
    finals = {e["kernel"]: e["data"].get("status") for e in recorded.events if e["type"] == "node_end" and e["node"] == "kernel"}
    for kernel, status in finals.items():
        console.print(Text.assemble((kernel, "bold"), f": {status}"), highlight=False)
    return 0


def reference_kinds(events: list[dict]) -> dict[str, str]:
    """Each kernel's reference kind, from its check results: what its profile's speedups are against."""
    return {e["kernel"]: e["data"]["result"]["reference_kind"] for e in events
            if e["type"] == "tool_result" and isinstance(e.get("data"), dict) and e["data"].get("tool") == "check"
            and isinstance(e["data"].get("result"), dict) and e["data"]["result"].get("reference_kind")}


def describe(e: dict, reference_kind: str | None = None) -> str:
    """One line saying what an event holds: a kernel run's events (graph nodes, tools, LLM calls)
    and a repository port's steps (discover, translate, build, check, capture, tune, report).
    Another writer's data shape falls back to its fields."""
    try:
        return _describe(e, reference_kind)
    except (AttributeError, TypeError, KeyError, ValueError):
        return _fields(e.get("data"))


def _describe(e: dict, reference_kind: str | None) -> str:
    d = e.get("data") or {}
    kind, node = e["type"], e.get("node") or ""
    if not isinstance(d, dict):
        return _fields(d)
    port_step = _port_step(kind, node, d)
    if port_step is not None:
        return port_step
    if kind in ("node_start", "node_end"):
        parts = [f"{k}={v}" for k, v in d.items() if k in ("attempt", "status", "elapsed_s", "resumed", "translator", "paused")]
        if "sandbox" in d:
            sandbox = d["sandbox"]
            parts.append(f"sandbox={sandbox.get('mode') if isinstance(sandbox, dict) else sandbox}")
        if isinstance(d.get("tasks"), list):
            parts.append(f"tasks={','.join(map(str, d['tasks']))}")
        return " ".join(parts) or _fields(d)
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
    if kind == "tool_call" and "tool" in d:
        return f"{d['tool']}" + (f" (attempt {d['attempt']})" if "attempt" in d else "")
    if kind == "tool_result" and "tool" in d:
        return _tool_result(d["tool"], d.get("result") or {}, reference_kind)
    if kind == "observation" and "message" in d:
        label = "/".join(str(d[k]) for k in ("kind", "severity") if d.get(k))
        where = f"{d['file']}:{d['line']} " if d.get("file") and d.get("line") else f"{d['file']} " if d.get("file") else ""
        return (f"[{label}] " if label else "") + f"{where}{d['message'][:200]}"
    if kind == "artifact" and ("name" in d or "role" in d):
        content = d.get("code") if "code" in d else d.get("content")
        size = f"{len(content.splitlines())} lines" if isinstance(content, str) else "json"
        return f"{d.get('name') or '(unnamed)'} ({d.get('role') or 'artifact'}, {size})"
    if kind == "decision" and "next" in d:
        return f"-> {d['next']}" + (f": {d['reason']}" if d.get("reason") else "")
    if kind == "error":
        return str(d.get("error", ""))[:300]
    return _fields(d)


def _tool_result(tool: str, r: dict, reference_kind: str | None) -> str:
    verdict = r.get("status") or ("ok" if r.get("ok") else "failed" if "ok" in r else "no verdict")
    extra = ""
    if tool == "profile":
        times = r.get("time_s") or {}
        if r.get("speedup_vs_reference"):
            extra += f", {speedup_text(r['speedup_vs_reference'], reference_name(reference_kind))}"
        if times.get("baseline") and times.get("candidate"):
            extra += f", {speedup_text(times['baseline'] / times['candidate'], UNTUNED_PORT)}"
    if tool == "plan":
        extra = f" pattern={r.get('pattern')} features={','.join(r.get('features') or [])} lowering={'yes' if r.get('lowering') else 'no'}"
    return f"{tool}: {verdict}{extra}"


def _fields(data: Any) -> str:
    """Any data as short `key=value` pairs (long values by their size): never a bare None."""
    if not isinstance(data, dict):
        return json.dumps(data, default=str)[:200]
    parts = []
    for key, value in data.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        parts.append(f"{key}={text}" if len(text) <= 80 else f"{key}=({len(text)} chars)")
    return " ".join(parts)[:300] or "(no data)"


def _port_step(kind: str, node: str, d: dict) -> str | None:
    """A repository port's own events (agent/project.py and its graph), known by their fields
    (they name no tool and no attempt); None for any other event."""
    if "tool" in d or "attempt" in d:
        return None
    if {"sources", "kernels"} <= d.keys():
        return _discovered(d)
    if "file" in d and ("code" in d or d.get("reused")):
        return _translated(d)
    if "makefile" in d:
        return _build_started(d)
    if {"ok", "output"} <= d.keys():
        return _built(d)
    if {"command", "passed"} <= d.keys():
        return _checked(d)
    if "captured" in d:
        return _captured(d)
    if "build_ok" in d:
        return _reported(d)
    if "linked" in d:
        return f"linked {', '.join(map(str, d['linked'])) or 'no tuned kernel'} into the build"
    if "reverted" in d:
        return f"reverted the tuned {', '.join(map(str, d['reverted']))}: {d.get('detail', '')}"
    if kind == "decision" and "kernel" in d and ("status" in d or d.get("reused")):
        return _tuned({d["kernel"]: d})
    if kind == "decision" and node == "tune" and d and all(isinstance(v, dict) for v in d.values()):
        return _tuned(d)  # every kernel's tuning in one event
    if d.get("reused"):
        return f"{node}: reused from an earlier run"
    return None


def _discovered(d: dict) -> str:
    kernels = d.get("kernels") or []
    where = ", ".join(f"{k.get('name')} at {k.get('file')}:{k.get('line')}" for k in kernels[:6] if isinstance(k, dict))
    return (f"{len(d.get('sources') or [])} CUDA source(s), {len(kernels)} kernel(s)" + (f" ({where})" if where else "")
            + f"; build: {d.get('build', '?')}; executables: {', '.join(d.get('executables') or []) or 'none'}")


def _translated(d: dict) -> str:
    if d.get("reused"):
        return f"{d.get('file')}: translation reused from an earlier run"
    code = d.get("code")
    text = f"{d.get('file')} translated to C++ ({len(code.splitlines())} lines)" if isinstance(code, str) else f"{d.get('file')}: not translated"
    if d.get("error"):
        text += f"; error: {d['error']}"
    if d.get("unsupported"):
        text += f"; unsupported: {'; '.join(map(str, d['unsupported']))}"
    return text


def _build_started(d: dict) -> str:
    return f"build {d.get('makefile', '')} in the sandbox ({d.get('sandbox', '?')})"


def _built(d: dict) -> str:
    last = [line for line in str(d.get("output") or "").splitlines() if line.strip()][-1:]
    return "build: ok" if d.get("ok") else f"build: FAILED{': ' + last[0] if last else ''}"


def _checked(d: dict) -> str:
    if d.get("reused"):
        return f"check reused from an earlier run: {'passed' if d.get('passed') else 'FAILED'} ({d.get('detail', '')})"
    return f"{d.get('command')}: {'passed' if d.get('passed') else 'FAILED'} ({d.get('detail', '')})"


def _captured(d: dict) -> str:
    return f"captured the launches of {', '.join(d.get('captured') or []) or 'no kernel'}"


def _tuned(d: dict) -> str:
    parts = []
    for kernel, t in d.items():
        if t.get("reused"):
            parts.append(f"{kernel}: tuning reused from an earlier run")
            continue
        speedup = f", {speedup_text(t['speedup'], UNTUNED_PORT)}" if t.get("speedup") else ""
        parts.append(f"{kernel}: {t.get('status')}{speedup}" + (f" ({t['note']})" if t.get("note") else ""))
    return "; ".join(parts) or "no kernel tuned"


def _reported(d: dict) -> str:
    check = d.get("check") or {}
    kernels = ", ".join(f"{k.get('name')} {k.get('status')}" for k in d.get("kernels") or [])
    return (f"report: build {'ok' if d.get('build_ok') else 'FAILED'}, check {'passed' if check.get('passed') else 'FAILED'}"
            + (f"; {kernels}" if kernels else ""))
