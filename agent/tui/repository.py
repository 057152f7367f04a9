"""A whole-repository port behind the TUI: `agent.project.port_repository` in a thread, watched
through its trace files (JSON Lines, flushed per event), which a second thread follows: the
port's own (OUT/trace.jsonl) and that of the per-kernel graph runs it makes on captured
launches (OUT/kernels/trace.jsonl), whose events name their kernels.

A repository port is its own graph (agent/port_graph.py: discover, translate, build, check,
capture, tune, link), checkpointed for resume but not steered from here: hints, retries and
pauses apply to kernel tasks only. It offers the part of `Session`'s interface that the app uses.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any, Callable

from agent.configuration import Settings
from agent.trace import read_trace

from .model import FINISHED, IDLE, PAUSED, RUNNING, STOPPED

FOLLOW_POLL_S = 0.2
KERNEL_TRACE = Path("kernels") / "trace.jsonl"  # where agent/project.py runs the kernels' graphs


class RepositorySession:
    def __init__(self, root: Path, settings: Settings, *, out: Path) -> None:
        from tools.project.discover import discover

        self.root = root
        self.project = discover(root)  # DiscoveryError for what is no CUDA project
        self.settings = settings
        self.out = out
        self.trace_path = out / "trace.jsonl"
        self.traces = [self.trace_path, out / KERNEL_TRACE]
        self.tasks: dict[str, Any] = {}  # no kernel tasks: the kernel actions do not apply
        self.on_event: Callable[[dict], None] = lambda event: None
        self.on_state: Callable[[str, str], None] = lambda state, note: None
        self.state = IDLE
        self._threads: list[threading.Thread] = []
        self._done = threading.Event()

    def history(self) -> list[dict]:
        return [e for path in self.traces if path.is_file() and path.stat().st_size for e in read_trace(path).events]

    def checkpointed(self) -> dict:
        return {}

    def kernel_names(self) -> list[str]:
        return [k.name for k in self.project.kernels]

    def cuda_of(self, name: str) -> tuple[str, str]:
        site = next(k for k in self.project.kernels if k.name == name)
        return f"{site.file}:{site.line}", (self.project.root / site.file).read_text(errors="replace")

    def open(self) -> None:
        """Nothing runs before `start`."""

    def start(self) -> None:
        if self._threads:
            self.on_state(self.state, "a repository port runs once per session")
            return
        offsets = {path: path.stat().st_size if path.is_file() else 0 for path in self.traces}
        self._threads = [threading.Thread(target=self._port, name="agent-tui-port", daemon=True),
                         threading.Thread(target=self._follow, args=(offsets,), name="agent-tui-follow", daemon=True)]
        for thread in self._threads:
            thread.start()
        self._set_state(RUNNING, f"porting {self.root}")

    def pause(self) -> None:
        if self.state == RUNNING:
            self.on_state(RUNNING, "a repository port cannot pause; quitting leaves its output as far as it got")

    def close(self, timeout: float | None = None) -> bool:
        for thread in self._threads:
            thread.join(timeout)
        return not any(t.is_alive() for t in self._threads)

    def _port(self) -> None:
        from rich.console import Console

        from agent.project import port_repository

        quiet = Console(file=io.StringIO(), width=100)
        try:
            status = port_repository(self.root, self.settings, out=self.out, trace=self.trace_path, check_commands=None, console=quiet)
            note = "the port builds and passes its check" if status == 0 else f"see {self.out / 'PORT_REPORT.md'}"
            final = FINISHED
        except Exception as exc:  # noqa: BLE001 - shown to the user, who can read the trace
            note, final = f"the repository port failed: {exc}", PAUSED
        self._done.set()
        for thread in self._threads[1:]:
            thread.join()
        self._set_state(final, note)
        self._set_state(STOPPED, "")

    def _follow(self, offsets: dict[Path, int]) -> None:
        """Hand on every event appended to the traces after `offsets`, until the port has ended."""
        pending = {path: b"" for path in offsets}
        while True:
            finished = self._done.is_set()
            for path in offsets:
                if not path.is_file():
                    continue
                with path.open("rb") as fh:
                    fh.seek(offsets[path])
                    chunk = fh.read()
                offsets[path] += len(chunk)
                *lines, pending[path] = (pending[path] + chunk).split(b"\n")
                for line in lines:
                    self._hand_on(line)
            if finished:
                return
            self._done.wait(FOLLOW_POLL_S)

    def _hand_on(self, line: bytes) -> None:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return
        if isinstance(record, dict) and "type" in record:  # not the header
            self.on_event(record)

    def _set_state(self, state: str, note: str) -> None:
        self.state = state
        self.on_state(state, note)
