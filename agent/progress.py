"""Progress of a run as plain lines, for output that is not a terminal.

Rich's live progress display draws nothing to a pipe or a log file until it stops, so a run
whose output is captured (CI, `| tee`) stayed silent through every step, even through a
120 s timeout. `PlainProgress` offers the calls a run makes on rich.progress.Progress and
prints one line whenever a task's step changes, with the seconds since the run began.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.console import Console
from rich.text import Text


class PlainProgress:
    """add_task / update / advance as printed lines; a context manager like rich's Progress."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._started = time.monotonic()
        self._tasks: dict[int, dict[str, Any]] = {}
        self._said: dict[int, str] = {}
        self._lock = threading.Lock()  # kernels run in parallel with --jobs

    def __enter__(self) -> "PlainProgress":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> int:
        with self._lock:
            task_id = len(self._tasks)
            self._tasks[task_id] = {"description": description, **fields}
        self._say(task_id)
        return task_id

    def update(self, task_id: int, *, description: str | None = None, **fields: Any) -> None:
        shown = {k: v for k, v in fields.items() if k not in ("total", "completed", "advance", "visible", "refresh")}
        with self._lock:
            self._tasks[task_id].update(shown, **({"description": description} if description is not None else {}))
        self._say(task_id)

    def advance(self, task_id: int, advance: float = 1) -> None:
        """Counts nothing: the lines say each step as it begins."""

    def _say(self, task_id: int) -> None:
        with self._lock:
            task = self._tasks[task_id]
            name, step = task.get("name"), task.get("step")
            line = f"{name}: {step}" if name and step else str(name or task["description"])
            if self._said.get(task_id) == line:
                return
            self._said[task_id] = line
            elapsed = time.monotonic() - self._started
        self.console.print(Text(f"[{elapsed:5.0f}s] {line}"), highlight=False, soft_wrap=True)
