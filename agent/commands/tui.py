"""`agent tui [PATH]`: the interactive terminal UI.

PATH is a kernel task file, a directory of tasks, a trace (.jsonl) or a CUDA repository
(ported in one pass by agent/project.py, watched through its trace); none means the
current directory. Tasks run in the same output directory, checkpoints and
trace as `agent port PATH` would use, so either command continues what the other began.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent.commands.port import default_out, task_files
from agent.configuration import Settings
from agent.errors import UserError


def run(path: Path | None, cfg: Settings, *, start: bool, out: Path | None = None) -> int:
    """Open the app on PATH (default: the current directory) until the user quits; 0 then."""
    app = make_app(path or Path("."), cfg, start=start, out=out)
    try:
        app.run()
    finally:
        if app.session is not None:
            _close(app.session)
    return 0


def make_app(path: Path, cfg: Settings, *, start: bool, out: Path | None = None):
    """The app for PATH: the viewer for a trace, the main screen for tasks; UserError for anything else."""
    if path.is_file() and path.suffix == ".jsonl":
        from agent.tui.app import TuiApp

        return TuiApp(trace=_read_trace(path))
    tasks = task_files(path)  # before importing the app: a bad path is reported at once
    if tasks is None:
        return _repository_app(path, cfg, start=start, out=out)
    from agent.translators.factory import make_translator
    from agent.tui.app import TuiApp
    from agent.tui.session import Session
    from tools.spec import TaskError

    make_translator(cfg.llm, cfg)  # a bad --llm spec or a missing key: one clear line before the screen opens
    out = out or default_out(path)
    try:
        session = Session(tasks, cfg, out=out)
    except TaskError as exc:
        raise UserError(str(exc)) from None
    if session.trace_path.is_file():
        _read_trace(session.trace_path)  # an unreadable trace from an earlier run: one clear line, not a traceback
    return TuiApp(session, start=start)


def _repository_app(path: Path, cfg: Settings, *, start: bool, out: Path | None):
    from agent.tui.app import TuiApp
    from agent.tui.repository import RepositorySession
    from tools.project.discover import DiscoveryError

    try:
        session = RepositorySession(path, cfg, out=out or default_out(path))
    except DiscoveryError as exc:
        raise UserError(f"{path}: no kernel tasks and no CUDA project here ({exc})") from None
    return TuiApp(session, start=start)


def _read_trace(path: Path):
    from agent.trace import TraceError, read_trace

    try:
        return read_trace(path)
    except TraceError as exc:
        raise UserError(str(exc)) from None


def _close(session) -> None:
    """Let the node in flight finish, so its work is checkpointed; Ctrl-C leaves it to be redone."""
    if session.close(timeout=0.5):
        return
    print("agent tui: finishing the step in flight so that it is checkpointed (Ctrl-C to leave it to the next run)...",
          file=sys.stderr)
    try:
        session.close()
    except KeyboardInterrupt:
        print("left; the next run redoes that step", file=sys.stderr)
