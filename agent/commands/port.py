"""`agent port PATH`: a kernel task file, or a directory of task files, through the graph.

A directory of tasks holds `*.json` task files, or subdirectories each with a `task.json`.
Anything else is taken for a CUDA repository, which agent/project.py ports.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from agent.configuration import Settings
from agent.errors import UserError
from agent.output_lock import output_lock
from tools.spec import TaskError, load_task


def run(path: Path, cfg: Settings, *, out: Path | None = None, trace: Path | None = None,
        check_commands: list[str] | None = None, console: Console | None = None, expected_output: Path | None = None) -> int:
    """Exit status 0 only when every kernel came out correct."""
    from agent.runner import run_tasks
    from agent.translators.factory import make_translator

    console = console or Console()
    tasks = task_files(path)
    if tasks is None:
        from agent.project import port_repository

        return port_repository(path, cfg, out=out, trace=trace, check_commands=check_commands, console=console,
                               expected_output=expected_output)
    if check_commands or expected_output:
        raise UserError("--run and --expected-output check a ported repository; they do not apply to kernel tasks")
    out = out or default_out(path)
    make_translator(cfg.llm, cfg)  # a bad --llm spec or a missing key: one clear line before any work
    try:
        for task in tasks:  # a bad task file: one clear line before OUT is made
            load_task(task)
        with output_lock(out):
            outcomes = run_tasks(tasks, cfg, out=out, trace_path=trace, console=console)
    except TaskError as exc:
        raise UserError(str(exc)) from None
    console.print(f"results in {out}/<kernel>/result.json", highlight=False, soft_wrap=True)
    return 0 if outcomes and all(o.result.status == "correct" for o in outcomes) else 1


def default_out(path: Path) -> Path:
    """./port-out/NAME: a task file's stem (its directory's name for a task.json), or the directory's name."""
    if path.is_file():
        name = path.resolve().parent.name if path.name == "task.json" else path.stem
    else:
        name = path.resolve().name
    return Path("port-out") / name


def task_files(path: Path) -> list[Path] | None:
    """The task files PATH names, or None when PATH is no task and no directory of tasks."""
    if path.is_file():
        if path.suffix != ".json":
            raise UserError(f"{path}: not a kernel task (expected a .json task file, a directory of them, or a repository)")
        return [path]
    candidates = sorted(path.glob("*.json")) + sorted(path.glob("*/task.json"))
    tasks = [p for p in candidates if _looks_like_task(p)]
    return tasks or None


def _looks_like_task(path: Path) -> bool:
    """A JSON object with the task format's required keys (a repository's package.json is not one)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "buffers" in data and ("cuda" in data or "cuda_code" in data)
