"""Run kernel tasks through the graph: checkpoints, trace, progress display, result files.

Each kernel is one LangGraph thread in `OUT/checkpoints.sqlite`; its id comes from the
task's content (the task and every file it names) and the translator, so running the same
command again resumes an interrupted kernel where its last finished step left it, and a
finished kernel is not redone. Results go to `OUT/<name>/<name>.cpp` and
`OUT/<name>/result.json` (tools.result.KernelResult).

Hooks for an interactive front end: `add_hint` puts a human observation into a kernel's
state before its next translation; `set_translator` changes one kernel's translator;
`run_tasks(..., interrupt_before=[...])` pauses kernels before the named nodes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import operator
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from agent.configuration import Settings
from agent.errors import UserError
from agent.graph import GraphContext, build_graph, code_of, recursion_limit, task_artifacts
from agent.progress import PlainProgress
from agent.state import KernelState, human_hint, initial_state
from agent.toolbox import LiveToolbox, limits_of
from agent.trace import TraceError, TraceWriter
from agent.translators.base import Translator
from agent.translators.factory import make_translator
from sandboxes import Sandbox, SandboxError, open_sandbox
from tools.result import KernelResult
from tools.spec import Task, TaskError, load_task, validate_task_deep
from tools.speedups import reference_name

CHECKPOINT_DB = "checkpoints.sqlite"
STATUS_STYLE = {"correct": "green", "incorrect": "red", "compile_error": "red", "runtime_error": "red", "timeout": "yellow",
                "unsupported": "yellow", "invalid_task": "red", "llm_unreachable": "red"}


@dataclass
class KernelOutcome:
    name: str
    thread_id: str
    result: KernelResult
    out_dir: Path
    resumed: bool = False  # continued from a checkpoint
    skipped: bool = False  # already finished in an earlier run: not redone
    paused: bool = False  # stopped at an interrupt_before node; run again to continue
    plan: dict[str, Any] = field(default_factory=dict)  # the plan node's findings (features, pattern, launches)
    node: str | None = None  # the machine that ran it, where known (a Ray run names the worker's node)

    @property
    def launches_inferred(self) -> bool:
        return str(self.plan.get("launches", "")).startswith("inferred")


# --- identities and checkpoints ------------------------------------------------------


def thread_id_for(task: Task, translator: str) -> str:
    """Stable id of (task content, translator): the same inputs resume the same thread."""
    digest = hashlib.sha256()
    for artifact in task_artifacts(task):
        digest.update(json.dumps(artifact, sort_keys=True).encode())
    digest.update(translator.encode())
    return f"{task.name}-{digest.hexdigest()[:16]}"


def open_checkpointer(db_path: Path | str):
    from langgraph.checkpoint.sqlite import SqliteSaver

    Path(db_path).parent.mkdir(parents=True, exist_ok=True)
    return SqliteSaver(sqlite3.connect(str(db_path), check_same_thread=False))


def thread_config(thread_id: str, settings: Settings | None = None) -> dict[str, Any]:
    """The LangGraph config of one kernel's checkpointed thread (with the run's recursion limit, given settings)."""
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    if settings is not None:
        config["recursion_limit"] = recursion_limit(settings)
    return config


def kernel_state(checkpoint_db: Path | str, thread_id: str) -> KernelState | None:
    """The checkpointed state of one kernel, or None when there is none."""
    saver = open_checkpointer(checkpoint_db)
    try:
        values = build_graph(None, checkpointer=saver).get_state(thread_config(thread_id)).values
        return values or None
    finally:
        saver.conn.close()


def add_hint(checkpoint_db: Path | str, thread_id: str, text: str) -> None:
    """Put a human hint into a kernel's observations; its next translation sees it."""
    _update(checkpoint_db, thread_id, {"observations": [human_hint(text)]})


def set_translator(checkpoint_db: Path | str, thread_id: str, spec: str) -> None:
    """Translate this kernel's next attempts with another translator."""
    _update(checkpoint_db, thread_id, {"translator": spec})


def _update(checkpoint_db: Path | str, thread_id: str, values: dict[str, Any]) -> None:
    saver = open_checkpointer(checkpoint_db)
    try:
        graph = build_graph(None, checkpointer=saver)
        config = thread_config(thread_id)
        if not graph.get_state(config).values:
            raise KeyError(f"no checkpointed kernel with thread id {thread_id!r} in {checkpoint_db}")
        graph.update_state(config, values)
    finally:
        saver.conn.close()


# --- running ---------------------------------------------------------------------------


class RunUsage:
    """What the run has spent so far, for the per-run budgets."""

    def __init__(self, settings: Settings) -> None:
        self.budgets = settings.budgets
        self.tokens = 0
        self.cost_usd = 0.0
        self.elapsed_s = 0.0

    def add(self, state: KernelState) -> None:
        counters = state.get("counters") or {}
        self.tokens += counters.get("tokens", 0)
        self.cost_usd += counters.get("cost_usd", 0.0)
        self.elapsed_s += counters.get("elapsed_s", 0.0)

    def left(self) -> dict[str, float]:
        b = self.budgets
        return {
            "tokens": max(0, b.run_tokens - self.tokens),
            "cost_usd": max(0.0, b.run_budget_usd - self.cost_usd),
            "wall_s": max(0.0, b.run_wall_s - self.elapsed_s),
        }


def trace_config(settings: Settings) -> dict[str, Any]:
    """The configuration for a trace header: no secret, not even masked."""
    data = settings.model_dump(mode="json")
    for key in [k for k in data if k.endswith("api_key")]:
        data[key] = "[redacted]" if data.get(key) else None
    return data


def run_tasks(
    task_paths: list[Path],
    settings: Settings,
    *,
    out: Path,
    trace_path: Path | None = None,
    console: Console | None = None,
    interrupt_before: list[str] | None = None,
    translator_for: Callable[[str], Translator] | None = None,
) -> list[KernelOutcome]:
    """Run every task (in order, or `settings.jobs` at a time); returns one outcome per task."""
    console = console or Console(stderr=True)
    tasks = [load_task(p) for p in task_paths]
    out.mkdir(parents=True, exist_ok=True)
    trace_path = trace_path or out / "trace.jsonl"
    try:
        first = open_sandbox(settings.sandbox, limits=limits_of(settings), image=settings.docker_image)
    except SandboxError as exc:
        raise UserError(f"--sandbox {settings.sandbox}: {exc}") from None
    first.close()  # opened to say which sandbox is in force; each kernel gets a fresh one
    try:
        trace = TraceWriter(trace_path, argv=sys.argv, config=trace_config(settings), secrets=settings.secrets())
    except TraceError as exc:
        raise UserError(f"cannot continue the trace: {exc}") from None
    saver = open_checkpointer(out / CHECKPOINT_DB)
    console.print(f"sandbox: [bold]{first.kind}[/] ({first.mode})", highlight=False, soft_wrap=True)
    console.print(f"trace: {trace_path}   checkpoints: {out / CHECKPOINT_DB}", highlight=False, soft_wrap=True)
    trace.event("node_start", node="run", data={
        "resumed": trace.resumed, "argv": sys.argv, "translator": settings.llm, "out": str(out),
        "sandbox": {"kind": first.kind, "mode": first.mode}, "tasks": [t.name for t in tasks],
    })
    usage = RunUsage(settings)
    translators = translator_for or cached_translators(settings)
    outcomes: list[KernelOutcome] = []
    try:
        with _progress(console) as progress:
            def one(task: Task) -> KernelOutcome:
                bar = progress.add_task(task.name, total=None, name=task.name, step="waiting")
                on_step = lambda kernel, node, text: progress.update(bar, step=text)  # noqa: E731
                box = None
                try:
                    try:  # a task at fault is said before any of its work runs
                        validate_task_deep(task, memory_mb=settings.limits.memory_mb)
                    except TaskError as exc:
                        return record_invalid_task(task, exc, out=out, trace=trace)
                    box = open_kernel_sandbox(settings, task)
                    return run_kernel(task, settings, out=out, trace=trace, saver=saver, sandbox=box, usage=usage,
                                      translator_for=translators, on_step=on_step, interrupt_before=interrupt_before)
                except Exception as exc:  # one broken kernel must not end a directory's run
                    return record_crash(task, exc, out=out, trace=trace, console=console)
                finally:
                    if box is not None:
                        box.close()
                    progress.update(bar, step="finished")

            if settings.jobs > 1 and len(tasks) > 1:
                outcomes = fan_out(tasks, one, settings.jobs)
            else:
                outcomes = [one(task) for task in tasks]
    except KeyboardInterrupt:
        ignore_further_interrupts()
        trace.event("error", node="run", data={"error": "interrupted (KeyboardInterrupt); run the same command to resume"})
        console.print(f"[yellow]interrupted[/]: trace and checkpoints kept in {out}; run the same command to resume", highlight=False, soft_wrap=True)
        raise
    finally:
        trace.event("node_end", node="run", data={"kernels": {o.name: o.result.status for o in outcomes}})
        trace.close()
        saver.conn.close()
    console.print(summary_table(outcomes))
    print_reasons(console, outcomes)
    return outcomes


def ignore_further_interrupts() -> None:
    """Once Ctrl-C has stopped a run, another one must not cut short the saving of its trace and
    checkpoint, nor the interpreter's exit (a second SIGINT there prints a traceback)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


class _FanOut(TypedDict):
    tasks: list[Task]
    task: Task
    outcomes: Annotated[list[KernelOutcome], operator.add]


def fan_out(tasks: list[Task], run_one: Callable[[Task], KernelOutcome], jobs: int) -> list[KernelOutcome]:
    """Run kernels in parallel as a LangGraph fan-out: one `Send` per task, at most `jobs` at once.
    Each kernel keeps its own checkpointed thread (run_one); this graph only schedules them."""
    graph = StateGraph(_FanOut)
    graph.add_node("kernel", lambda state: {"outcomes": [run_one(state["task"])]})
    graph.add_conditional_edges(START, lambda state: [Send("kernel", {"task": t}) for t in state["tasks"]], ["kernel"])
    graph.add_edge("kernel", END)
    final = graph.compile().invoke({"tasks": tasks, "outcomes": []}, {"max_concurrency": jobs})
    order = {t.name: i for i, t in enumerate(tasks)}
    return sorted(final["outcomes"], key=lambda o: order.get(o.name, len(order)))


def finished_earlier(snapshot) -> bool:
    """A kernel graph's state that holds a result and has nothing left to run: not redone."""
    return bool(snapshot.values.get("result")) and not snapshot.next


def stopped_by_budget(snapshot) -> bool:
    """A finished kernel graph whose search a budget ended while the translator had more to try."""
    return finished_earlier(snapshot) and bool(snapshot.values["result"].get("stopped"))


def nth_search(first: str, n: int) -> str:
    """The thread of a kernel's nth search (see run_kernel's `again`); `first` is the first's."""
    return first if n == 1 else f"{first}~{n}"


def searches_of(graph, first: str) -> int:
    """How many searches of the kernel whose first thread is `first` have been checkpointed (at least 1)."""
    n = 1
    while graph.get_state(thread_config(nth_search(first, n + 1))).values:
        n += 1
    return n


def run_kernel(
    task: Task,
    settings: Settings,
    *,
    out: Path,
    trace: TraceWriter,
    saver: Any,
    sandbox: Sandbox,
    usage: RunUsage,
    translator_for: Callable[[str], Translator],
    on_step: Callable[[str, str, str], None] | None = None,
    interrupt_before: list[str] | None = None,
    wall_s: float | None = None,
    again: bool = False,
) -> KernelOutcome:
    """Run (or resume, or skip when finished) one kernel's graph and write its result files.
    `wall_s`: the seconds it may take, where the caller's budget leaves less than the run's.
    `again`: a run that finished because a budget stopped its search searches anew."""
    spec = settings.llm
    ctx = GraphContext(settings=settings, trace=trace, tools=LiveToolbox(settings, sandbox), translator_for=translator_for, on_step=on_step)
    graph = build_graph(ctx, checkpointer=saver, interrupt_before=interrupt_before)
    first = thread_id_for(task, spec)
    searches = searches_of(graph, first)
    if again and stopped_by_budget(graph.get_state(thread_config(nth_search(first, searches)))):
        searches += 1  # in a thread of its own: the earlier one stays as it ended
    thread_id = nth_search(first, searches)
    config = thread_config(thread_id, settings)
    snapshot = graph.get_state(config)
    resumed = skipped = False
    if finished_earlier(snapshot):
        skipped = True
        trace.event("decision", kernel=task.name, node="run", data={"next": "done", "reason": "finished in an earlier run; not redone", "thread_id": thread_id})
    else:
        resumed = bool(snapshot.values)
        trace.event("node_start", kernel=task.name, node="kernel", data={"thread_id": thread_id, "resumed": resumed, "translator": spec, "sandbox": sandbox.mode})
        start = None if resumed else initial_state(
            kernel=task.name, task=task.model_dump(mode="json", exclude_none=True), base_dir=str(task.base_dir or Path.cwd()),
            translator=spec, run_limits=_within(usage.left(), wall_s),
        )
        graph.invoke(start, config, durability="sync")
    snapshot = graph.get_state(config)
    state = snapshot.values
    usage.add(state)
    paused = bool(snapshot.next)
    result = write_result(task, state, out, trace.path) if not paused else _pending_result(task, state, trace.path)
    if not skipped:
        trace.event("node_end", kernel=task.name, node="kernel", data={"status": result.status, "paused": paused})
    return KernelOutcome(task.name, thread_id, result, out / task.name, resumed=resumed, skipped=skipped, paused=paused,
                         plan=state.get("plan") or {})


def _within(limits: dict[str, float], wall_s: float | None) -> dict[str, float]:
    return limits if wall_s is None else {**limits, "wall_s": min(limits["wall_s"], wall_s)}


def write_result(task: Task, state: KernelState, out: Path, trace_path: Path) -> KernelResult:
    """OUT/<name>/result.json and OUT/<name>/<name>.cpp from a finished kernel's state."""
    fields = dict(state["result"])
    fields.pop("attempt", None)
    result = KernelResult.model_validate({**fields, "trace": str(trace_path)})
    kernel_dir = out / task.name
    result.write(kernel_dir)
    code = code_of(state)
    if code:
        (kernel_dir / f"{task.name}.cpp").write_text(code)
    return result


def record_crash(task: Task, exc: Exception, *, out: Path, trace: TraceWriter, console: Console) -> KernelOutcome:
    """A kernel whose run failed outside the tools (sandbox, checkpoint, a bug): recorded, not fatal to the run."""
    import traceback

    message = f"{type(exc).__name__}: {exc}"
    trace.event("error", kernel=task.name, node="kernel", data={"error": message, "traceback": traceback.format_exc(limit=10)})
    console.print(f"[red]{task.name}: the run failed: {message}[/]", highlight=False, soft_wrap=True)
    result = KernelResult(name=task.name, status="runtime_error", trace=str(trace.path), reason=f"the run failed: {message}")
    result.write(out / task.name)
    return KernelOutcome(task.name, "", result, out / task.name)


def record_invalid_task(task: Task, exc: TaskError, *, out: Path, trace: TraceWriter) -> KernelOutcome:
    """A task that its CUDA source contradicts (or that cannot fit): its own status, nothing run."""
    trace.event("error", kernel=task.name, node="validate", data={"error": f"invalid task: {exc}"})
    result = KernelResult(name=task.name, status="invalid_task", trace=str(trace.path), reason=str(exc))
    result.write(out / task.name)
    return KernelOutcome(task.name, "", result, out / task.name)


def _pending_result(task: Task, state: KernelState, trace_path: Path) -> KernelResult:
    """A paused kernel's record (not written): the best so far, else not yet known."""
    status = "correct" if state.get("best") else "unsupported"
    counters = state.get("counters") or {}
    return KernelResult(name=task.name, status=status, iterations=counters.get("iterations", 0), backend=state.get("translator", ""), trace=str(trace_path))


def cached_translators(settings: Settings) -> Callable[[str], Translator]:
    """One translator per spec, made when first asked for and shared by the kernels of a run."""
    cache: dict[str, Translator] = {}

    def get(spec: str) -> Translator:
        if spec not in cache:
            cache[spec] = make_translator(spec, settings)
        return cache[spec]

    return get


def open_kernel_sandbox(settings: Settings, task: Task) -> Sandbox:
    """A fresh sandbox for one kernel's candidates, with the task's directory (references,
    golden files) masked where the sandbox can mask host paths."""
    box = open_sandbox(settings.sandbox, limits=limits_of(settings), image=settings.docker_image)
    hidden = getattr(box, "hide", None)
    if isinstance(hidden, list) and task.base_dir is not None:
        hidden.append(str(task.base_dir.resolve()))
    return box


def _progress(console: Console) -> Progress | PlainProgress:
    if not console.is_terminal or console.is_dumb_terminal:  # rich's live display would stay blank until the end
        return PlainProgress(console)
    return Progress(
        SpinnerColumn(), TextColumn("[bold]{task.fields[name]}"), TextColumn("{task.fields[step]}"), TimeElapsedColumn(),
        console=console, transient=False,
    )


def print_reasons(console: Console, outcomes: list[KernelOutcome]) -> None:
    """Why each kernel that is not correct ended as it did, and a compile error's first lines."""
    for o in outcomes:
        r = o.result
        if r.status == "correct" or o.paused or not r.reason:
            continue
        style = STATUS_STYLE.get(r.status, "white")
        console.print(f"[{style}]{r.name}: {r.status}[/]: {escape(r.reason)}", highlight=False, soft_wrap=True)
        for line in r.details:
            if line != r.reason:
                console.print(f"    {escape(line)}", highlight=False, soft_wrap=True)


def summary_table(outcomes: list[KernelOutcome]) -> Table:
    kinds = {o.result.reference_kind for o in outcomes if o.result.speedup_vs_reference}
    against = reference_name(kinds.pop()) if len(kinds) == 1 else "each kernel's reference"
    table = Table(title=f"port results (speedup vs {against})")
    for column in ("kernel", "status", "reference", "max abs err", "speedup", "iters", "backend", "note"):
        table.add_column(column, overflow="fold")  # fold, never crop: a long kernel name stays whole
    for o in outcomes:
        r = o.result
        style = STATUS_STYLE.get(r.status, "white")
        err = f"{r.max_abs_err:.2e}" if r.max_abs_err is not None else "-"
        speed = f"{r.speedup_vs_reference:.3g}x" if r.speedup_vs_reference else "-"
        note = "paused" if o.paused else "not redone" if o.skipped else "resumed" if o.resumed else ""
        table.add_row(r.name, f"[{style}]{r.status}[/]", r.reference_kind or "-", err, speed, str(r.iterations), r.backend, note)
    return table
