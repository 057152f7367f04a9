"""The run behind the TUI: one driver thread owns the graph, the checkpoints and the trace.

Each kernel is the same LangGraph thread `agent port` uses (same checkpoint database and
thread id), compiled with an interrupt before every node, so the driver advances a kernel
one node at a time. Between two nodes it takes the user's commands (pause, hint, change
of translator, retry, accept) and applies them to the checkpoint; nothing else touches
the graph, so no edit races a running node. Quitting finishes the node in flight and
leaves the checkpoint where the next session (or `agent port`) resumes.

The UI learns everything from the trace events the run writes (`on_event`), and the
session's own state from `on_state`; both are called on the driver thread.
"""

from __future__ import annotations

import queue
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from agent.configuration import Settings
from agent.graph import NODES, GraphContext, build_graph, final_result, recursion_limit
from agent.runner import CHECKPOINT_DB, open_checkpointer, thread_id_for, trace_config, write_result
from agent.state import human_hint, initial_state
from agent.trace import TraceWriter, read_trace
from agent.translators.base import Translator
from tools.result import KernelResult
from tools.spec import Task, TaskError, load_task

from .model import FINISHED, IDLE, PAUSED, RUNNING, STOPPED



class ObservedTrace(TraceWriter):
    """A trace writer that also hands every event to a listener (the UI)."""

    def __init__(self, path: Path, listener: Callable[[dict], None], **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.listener = listener

    def event(self, type: str, *, kernel: str | None = None, node: str | None = None, data: Any = None) -> dict:
        record = super().event(type, kernel=kernel, node=node, data=data)
        self.listener(record)
        return record


@dataclass
class Checkpointed:
    """What a kernel's checkpoint says, for the view at open time."""

    next: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    translator: str | None = None
    started: bool = False


@dataclass
class _Command:
    name: str
    kernel: str | None = None
    arg: Any = None


class Session:
    def __init__(
        self,
        task_paths: list[Path],
        settings: Settings,
        *,
        out: Path,
        trace_path: Path | None = None,
        translator_for: Callable[[str], Translator] | None = None,
    ) -> None:
        self.settings = settings
        self.tasks: dict[str, Task] = {}
        for path in task_paths:
            task = load_task(path)
            if task.name in self.tasks:  # one LangGraph thread and one OUT/<name> per name
                raise TaskError(f"{path}: another task is also named {task.name!r}")
            self.tasks[task.name] = task
        self.out = out
        self.db = out / CHECKPOINT_DB
        self.trace_path = trace_path or out / "trace.jsonl"
        self.thread_ids = {name: thread_id_for(task, settings.llm) for name, task in self.tasks.items()}
        self.on_event: Callable[[dict], None] = lambda event: None
        self.on_state: Callable[[str, str], None] = lambda state, note: None
        self.state = IDLE
        self._translator_for = translator_for or _cached_translators(settings)
        self._commands: queue.Queue[_Command] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._running = False
        self._active: str | None = None  # the kernel being driven, between its kernel start and end events
        self._saver: Any = None
        self._trace: ObservedTrace | None = None
        self._sandbox: Any = None
        self._graph: Any = None

    # --- what the UI calls (any thread) -----------------------------------------------
    def kernel_names(self) -> list[str]:
        return list(self.tasks)

    def cuda_of(self, name: str) -> tuple[str, str]:
        """(label, source) of a kernel's CUDA."""
        task = self.tasks[name]
        return task.cuda or "(inline CUDA)", task.source()

    def history(self) -> list[dict]:
        """The events of earlier sessions on this trace, oldest first."""
        if not self.trace_path.is_file() or not self.trace_path.stat().st_size:
            return []
        return read_trace(self.trace_path).events

    def checkpointed(self) -> dict[str, Checkpointed]:
        """Each kernel's checkpoint (read before the driver starts)."""
        if not self.db.is_file():
            return {name: Checkpointed() for name in self.tasks}
        saver = open_checkpointer(self.db)
        try:
            graph = build_graph(None, checkpointer=saver)
            out = {}
            for name, tid in self.thread_ids.items():
                snap = graph.get_state(_config(tid))
                values = snap.values or {}
                out[name] = Checkpointed(list(snap.next), values.get("result"), values.get("translator"), bool(values))
            return out
        finally:
            saver.conn.close()

    def open(self) -> None:
        """Start the driver thread (idle until `start`)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="agent-tui-driver", daemon=True)
            self._thread.start()

    def start(self) -> None:
        self._send("start")

    def pause(self) -> None:
        self._send("pause")

    def hint(self, kernel: str, text: str) -> None:
        self._send("hint", kernel, text)

    def set_translator(self, kernel: str, spec: str) -> None:
        """Raises on a spec that names no usable translator (checked here, before it is queued)."""
        self._translator_for(spec)
        self._send("translator", kernel, spec)

    def retry(self, kernel: str) -> None:
        self._send("retry", kernel)

    def accept(self, kernel: str, attempt: int) -> None:
        self._send("accept", kernel, attempt)

    def close(self, timeout: float | None = None) -> bool:
        """Stop after the node in flight; True when the driver has ended within `timeout`."""
        if self._thread is None:
            return True
        self._send("stop")
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _send(self, name: str, kernel: str | None = None, arg: Any = None) -> None:
        if kernel is not None and kernel not in self.tasks:
            raise KeyError(f"no kernel {kernel!r} in this session")
        self._commands.put(_Command(name, kernel, arg))

    # --- the driver thread -------------------------------------------------------------
    def _loop(self) -> None:
        try:
            while True:
                try:
                    command = self._commands.get(block=not self._running)
                except queue.Empty:
                    command = None
                if command is not None:
                    if command.name == "stop":
                        break
                    self._guarded(self._apply, command)
                    continue
                self._guarded(self._advance)
        finally:
            self._shutdown()

    def _guarded(self, action: Callable, *args: Any) -> None:
        """A failing command or step is an error event and a stop, never a dead driver."""
        try:
            action(*args)
        except Exception as exc:  # noqa: BLE001 - shown to the user; the session stays usable
            self._running = False
            name, self._active = self._active, None
            try:
                self._emit("error", kernel=name, node="tui", data={"error": f"{type(exc).__name__}: {exc}"})
            finally:
                self._set_state(PAUSED, f"stopped by an error: {type(exc).__name__}: {exc}")

    def _apply(self, command: _Command) -> None:
        if command.name == "start":
            self._running = True
            self._set_state(RUNNING, "")
        elif command.name == "pause":
            self._running = False
            self._end_active(paused=True)
            self._set_state(PAUSED, "paused; the checkpoint keeps every finished step")
        elif command.name == "hint":
            self._do_hint(command.kernel, command.arg)
        elif command.name == "translator":
            self._do_translator(command.kernel, command.arg)
        elif command.name == "retry":
            self._do_retry(command.kernel)
        elif command.name == "accept":
            self._do_accept(command.kernel, command.arg)

    def _advance(self) -> None:
        """One node of the first kernel with work left; finished when none has."""
        name = self._active if self._active and self._has_work(self._active) else self._next_kernel()
        if name is None:
            self._end_active(paused=False)
            self._running = False
            self._set_state(FINISHED, "every kernel has finished")
            return
        if name != self._active:
            self._end_active(paused=False)
            self._begin(name)
        config = self._config(name)
        if not self.graph().get_state(config).values:
            self.graph().invoke(self._initial(name), config, durability="sync")  # stops before plan
        else:
            self.graph().invoke(None, config, durability="sync")
        if not self.graph().get_state(config).next:
            self._end_active(paused=False)

    def _next_kernel(self) -> str | None:
        return next((name for name in self.tasks if self._has_work(name)), None)

    def _has_work(self, name: str) -> bool:
        snap = self.graph().get_state(self._config(name))
        return not snap.values or bool(snap.next)

    def _begin(self, name: str) -> None:
        values = self.graph().get_state(self._config(name)).values or {}
        self._active = name
        self._emit("node_start", kernel=name, node="kernel", data={
            "thread_id": self.thread_ids[name], "resumed": bool(values),
            "translator": values.get("translator", self.settings.llm), "sandbox": self.sandbox().mode})

    def _end_active(self, *, paused: bool) -> None:
        """The kernel event that closes the active kernel's stretch; writes the result when finished."""
        name, self._active = self._active, None
        if name is None:
            return
        snap = self.graph().get_state(self._config(name))
        if paused and snap.next:
            self._emit("node_end", kernel=name, node="kernel", data={"status": "paused", "paused": True, "next": list(snap.next)})
        elif snap.values.get("result"):
            result = self._write_result(name, snap.values)
            self._emit("node_end", kernel=name, node="kernel", data={"status": result.status, "paused": False})

    def _write_result(self, name: str, state: dict) -> KernelResult:
        return write_result(self.tasks[name], state, self.out, self.trace_path)

    # --- the user's edits, applied between nodes ----------------------------------------
    def _ensure_checkpoint(self, name: str) -> None:
        """A kernel that never ran gets its initial state (stopped before plan), so edits have a place."""
        config = self._config(name)
        if not self.graph().get_state(config).values:
            self.graph().invoke(self._initial(name), config, durability="sync")

    def _do_hint(self, name: str, text: str) -> None:
        self._ensure_checkpoint(name)
        config = self._config(name)
        self.graph().update_state(config, {"observations": [human_hint(text)]})
        self._emit("observation", kernel=name, node="user", data=human_hint(text))
        if not self.graph().get_state(config).next:  # finished: the hint needs another attempt to reach
            self._do_retry(name, reason="a hint from the user")

    def _do_translator(self, name: str, spec: str) -> None:
        self._ensure_checkpoint(name)
        self.graph().update_state(self._config(name), {"translator": spec})
        self._emit("decision", kernel=name, node="user", data={
            "next": "continue", "reason": f"translator changed to {spec} by the user", "translator": spec})

    def _do_retry(self, name: str, reason: str = "asked by the user") -> None:
        config = self._config(name)
        snap = self.graph().get_state(config)
        if snap.next or not snap.values:
            self._set_state(self.state, f"{name} has not finished; nothing to retry")
            return
        last = (snap.values.get("result") or {}).get("status")
        mode = "optimize" if last == "correct" else "fix"
        decision = {"next": mode, "reason": f"another attempt: {reason}"}
        self.graph().update_state(config, {"decision": decision, "result": None}, as_node="decide")
        self._emit("decision", kernel=name, node="user", data=decision)

    def _do_accept(self, name: str, n: int) -> None:
        config = self._config(name)
        state = self.graph().get_state(config).values
        attempt = next((a for a in state.get("attempts") or [] if a["n"] == n and a.get("code")), None)
        if attempt is None:
            self._set_state(self.state, f"{name}: no finished attempt {n} with code to accept")
            return
        if self._active == name:
            self._active = None
        # The result as if this attempt were the only one; the state's `best` stays what it is for later attempts.
        chosen = {k: v for k, v in attempt.items() if k != "observations"} if attempt["status"] == "correct" else None
        result = final_result({**state, "best": chosen}, [attempt])
        decision = {"next": "done", "reason": f"attempt {n} accepted by the user", "accepted": n}
        self.graph().update_state(config, {"decision": decision, "result": result, "current": None}, as_node="decide")
        self._emit("decision", kernel=name, node="user", data=decision)
        final = self._write_result(name, self.graph().get_state(config).values)
        self._emit("node_end", kernel=name, node="kernel", data={"status": final.status, "paused": False})

    # --- plumbing ---------------------------------------------------------------------
    def graph(self) -> Any:
        if self._graph is None:
            self._saver = open_checkpointer(self.db)
            from agent.toolbox import LiveToolbox

            ctx = GraphContext(settings=self.settings, trace=self.trace(), tools=LiveToolbox(self.settings, self.sandbox()),
                               translator_for=self._translator_for)
            self._graph = build_graph(ctx, checkpointer=self._saver, interrupt_before=list(NODES))
        return self._graph

    def trace(self) -> ObservedTrace:
        if self._trace is None:
            self._trace = ObservedTrace(self.trace_path, self.on_event, argv=sys.argv, config=trace_config(self.settings),
                                        secrets=self.settings.secrets())
            self._trace.event("node_start", node="run", data={
                "resumed": self._trace.resumed, "argv": sys.argv, "translator": self.settings.llm, "out": str(self.out),
                "interface": "tui", "tasks": list(self.tasks)})
        return self._trace

    def sandbox(self) -> Any:
        if self._sandbox is None:
            from agent.toolbox import limits_of
            from sandboxes import open_sandbox

            self._sandbox = open_sandbox(self.settings.sandbox, limits=limits_of(self.settings), image=self.settings.docker_image)
        return self._sandbox

    def _initial(self, name: str) -> dict:
        task = self.tasks[name]
        return initial_state(kernel=name, task=task.model_dump(mode="json", exclude_none=True),
                             base_dir=str(task.base_dir or Path.cwd()), translator=self.settings.llm, run_limits={})

    def _config(self, name: str) -> dict[str, Any]:
        return {**_config(self.thread_ids[name]), "recursion_limit": recursion_limit(self.settings)}

    def _emit(self, type: str, **kwargs: Any) -> None:
        self.trace().event(type, **kwargs)

    def _set_state(self, state: str, note: str) -> None:
        self.state = state
        self.on_state(state, note)

    def _shutdown(self) -> None:
        try:
            if self._trace is not None:
                self._end_active(paused=True)
                self._trace.event("node_end", node="run", data={"interface": "tui", "stopped": True})
                self._trace.close()
        finally:
            if self._saver is not None:
                self._saver.conn.close()
            if self._sandbox is not None:
                self._sandbox.close()
            self._set_state(STOPPED, "")


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _cached_translators(settings: Settings) -> Callable[[str], Translator]:
    from agent.translators.factory import make_translator

    cache: dict[str, Translator] = {}

    def get(spec: str) -> Translator:
        if spec not in cache:
            cache[spec] = make_translator(spec, settings)
        return cache[spec]

    return get
