"""`agent eval BENCH`: run a translator over a benchmark and write the evaluation report.

BENCH is a task file, a directory of task files, an HPCTransEval JSON file, or a
directory of them (bench/data). Records are converted to tasks under REPORT_DIR/tasks;
each kernel runs through the agent's graph (agent.runner.run_tasks: resumable from
REPORT_DIR/runs/checkpoints.sqlite, `--jobs` kernels at a time); the report is
REPORT_DIR/report.json, report.md and PNG plots (bench.evaluate; the plots need matplotlib,
from the optional `bench` extra: without it they are skipped with one line saying so).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent.configuration import Settings
from agent.errors import UserError


def run(bench: Path, cfg: Settings, *, out: Path, limit: int | None = None, per_category: int | None = None,
        console: Console | None = None, ray: str | None = None) -> int:
    """Exit status 0 only when every task came out correct. `ray` (else the ray_address setting, else
    RAY_ADDRESS) runs each task as a Ray task on that cluster (agent.ray_runner); the report is the same."""
    from agent.runner import run_tasks
    from agent.translators.factory import make_translator
    from bench.evaluate import BenchError, build_report, invalid_row, plots_unavailable, resolve, task_row, write_report
    from tools.spec import TaskError

    console = console or Console()
    for option, value in (("--limit", limit), ("--per-category", per_category)):
        if value is not None and value < 1:
            raise UserError(f"{option} must be >= 1, got {value}")
    make_translator(cfg.llm, cfg)  # a bad --llm spec fails here, before any work
    address = None
    if ray is not None or cfg.ray_address or os.environ.get("RAY_ADDRESS"):
        from agent.ray_runner import connect, ray_address

        address = ray_address(cfg, ray)
        if address is not None:
            connect(address)  # Ray missing or the cluster unreachable: one line, before any work
    try:
        found = resolve(bench, out, limit=limit, per_category=per_category)
    except BenchError as exc:
        raise UserError(str(exc)) from None
    tasks = found.tasks
    for bad in found.invalid:
        console.print(f"[yellow]invalid task[/] {bad.name}: {bad.reason}", highlight=False)
    console.print(f"evaluating {len(tasks)} tasks from {bench} with translator [bold]{cfg.llm}[/]", highlight=False)
    try:
        if not tasks:
            outcomes = []
        elif address is not None:
            from agent.ray_runner import run_tasks_on_ray

            outcomes = run_tasks_on_ray([t.path for t in tasks], cfg, out=out / "runs", address=address, console=console)
        else:
            outcomes = run_tasks([t.path for t in tasks], cfg, out=out / "runs", console=console)
    except TaskError as exc:
        raise UserError(str(exc)) from None
    here = socket.gethostname()
    rows = [task_row(t, o.result, node=o.node or here) for t, o in zip(tasks, outcomes)] + [invalid_row(bad) for bad in found.invalid]
    report = build_report(str(bench), cfg.llm, rows)
    files = write_report(report, out)
    console.print(summary_table(report))
    console.print(f"report: {', '.join(str(f) for f in files)}", highlight=False, soft_wrap=True)
    if (skipped := plots_unavailable()) is not None:
        console.print(f"[yellow]{escape(skipped)}[/]", highlight=False, soft_wrap=True)
    return 0 if rows and all(r["correct"] for r in rows) else 1


def summary_table(report: dict) -> Table:
    from bench.evaluate import speedup_against

    against = speedup_against(report["tasks"])
    table = Table(title=escape(f"{report['benchmark']} with {report['translator']} (speedup vs {against})"),
                  caption=f"faster: the share of all tasks that came out correct and faster than {against}")
    for col in ("category", "tasks", "compiled", "correct", "geomean speedup", "faster"):
        # fold, never crop: a long category name stays whole on a narrow terminal
        table.add_column(col, justify="left" if col == "category" else "right", overflow="fold")
    s = report["summary"]
    for name, c in [*s["by_category"].items(), ("all", s)]:
        table.add_row(escape(name), str(c["total"]), str(c["compiled"]), str(c["correct"]),
                      f"{c['geomean_speedup']:.3g}x" if c["geomean_speedup"] else "-",
                      f"{100 * c['faster_share']:.0f}%" if c["faster_share"] is not None else "-")
    return table
