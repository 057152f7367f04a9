"""`agent verify TASK CANDIDATE` and `agent profile TASK CANDIDATE`.

Checks a CPU candidate against the task's reference (and, for profile, times it against the
reference), prints a table and the observations, and writes the Result record of docs/formats.md to
OUT/result.json (default ./verify-out/<task name>/). Exit status 0 only when correct.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sandboxes import Limits, SandboxError, open_sandbox
from tools.observations import Observation
from tools.result import KernelResult, Times
from tools.spec import TaskError, load_task, validate_task_deep
from tools.speedups import reference_name
from tools.verify import ProfileReport, VerifyError, VerifyReport, check
from tools.verify import profile as run_profile

from ..configuration import Settings
from ..errors import UserError

STATUS_STYLE = {"correct": "green", "incorrect": "red", "compile_error": "red", "runtime_error": "red", "timeout": "yellow"}


def _fmt_s(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1e3:.4g} ms" if value >= 1e-4 else f"{value * 1e6:.4g} us"


def _fmt_err(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def result_record(name: str, report: VerifyReport, prof: ProfileReport | None, threads: int) -> KernelResult:
    status = report.status
    if prof is not None and report.status == "correct" and not prof.correct_after_timing:
        status = prof.status if prof.status != "correct" else "incorrect"
    times = Times()
    if prof is not None:
        times = Times(candidate=prof.candidate.median_s if prof.candidate else None,
                      reference=prof.reference.median_s if prof.reference else None,
                      baseline=prof.baseline.median_s if prof.baseline else None)
    finite = lambda v: v if v is not None and v == v and abs(v) != float("inf") else None  # noqa: E731
    return KernelResult(
        name=name, status=status, reference_kind=report.reference_kind,  # type: ignore[arg-type]
        max_abs_err=finite(report.max_abs_err), max_rel_err=finite(report.max_rel_err), time_s=times,
        speedup_vs_reference=prof.speedup_vs_reference if prof and status == "correct" else None,
        threads=threads, iterations=0, backend="user",
    )


def print_report(console: Console, task_name: str, result: KernelResult, report: VerifyReport, prof: ProfileReport | None) -> None:
    table = Table(title=f"{'profile' if prof else 'verify'}: {task_name}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    style = STATUS_STYLE.get(result.status, "white")
    table.add_row("status", f"[{style}]{result.status}[/]")
    table.add_row("reference", f"{report.reference_kind}" + (" (weakest evidence)" if report.reference_kind == "lowered" else ""))
    table.add_row("seeds x threads", f"{report.seeds} x {report.threads}")
    table.add_row("max abs / rel error", f"{_fmt_err(report.max_abs_err)} / {_fmt_err(report.max_rel_err)}")
    if prof is not None:
        for who in ("candidate", "reference", "baseline"):
            stats = getattr(prof, who)
            if stats:
                table.add_row(f"{who} time", f"{_fmt_s(stats.median_s)} median ({stats.runs} runs, spread {stats.spread:.0%})")
        if prof.speedup_vs_reference:
            table.add_row(f"speedup vs {reference_name(prof.reference_kind)}",
                          f"{prof.speedup_vs_reference:.2f}x ({prof.threads} threads)")
        table.add_row("correct after timing", "yes" if prof.correct_after_timing else "[red]no[/]")
    console.print(table)
    observations = report.observations + (prof.observations if prof else [])
    for obs in observations[:12]:
        console.print(observation_line(obs), highlight=False)
    for note in dict.fromkeys(report.notes + (prof.notes if prof else [])):
        console.print(f"[dim]note: {_escape(note)}[/]", highlight=False)


def observation_line(obs: Observation) -> str:
    """The observation as rich markup: its kind in colour, then where and what. The kind is left
    out where the message already starts with it ("mismatches in 2 of 4 runs", not "mismatch mismatches ...")."""
    color = {"error": "red", "warning": "yellow"}.get(obs.severity, "cyan")
    where = f"{obs.file}:{obs.line}: " if obs.file and obs.line else ""
    if obs.message.lower().startswith(obs.kind.lower()):
        return f"[{color}]{_escape(where + obs.message)}[/]"
    return f"[{color}]{_escape(obs.kind)}[/] " + _escape(where + obs.message)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def run(task: Path, candidate: Path, cfg: Settings, *, out: Path | None, profile: bool, console: Console) -> int:
    try:
        spec = load_task(task)
        validate_task_deep(spec, memory_mb=cfg.limits.memory_mb)
    except TaskError as exc:
        raise UserError(str(exc)) from None
    try:
        source = candidate.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{candidate}: cannot read the candidate ({exc})") from None
    threads = cfg.threads or os.cpu_count() or 1
    try:
        sandbox = open_sandbox(cfg.sandbox, limits=Limits(**cfg.limits.model_dump()), image=cfg.docker_image)
    except SandboxError as exc:
        raise UserError(str(exc)) from None
    prof: ProfileReport | None = None
    try:
        report = check(spec, source, sandbox, threads=sorted({1, max(2, threads)}), cxx=cfg.compiler.cxx,
                       cxxflags=cfg.compiler.cxxflags, candidate_name=str(candidate))
        if profile and report.status == "correct":
            prof = run_profile(spec, source, sandbox, threads=threads, cxx=cfg.compiler.cxx, cxxflags=cfg.compiler.cxxflags,
                               candidate_name=str(candidate))
    except VerifyError as exc:
        raise UserError(f"{task}: {exc}") from None
    finally:
        sandbox.close()
    result = result_record(spec.name, report, prof, threads)
    out_dir = out or Path("verify-out") / spec.name
    path = result.write(out_dir)
    print_report(console, spec.name, result, report, prof)
    console.print(f"[dim]sandbox: {_escape(sandbox.mode)}[/]", highlight=False)
    console.print(f"result: {path}", highlight=False)
    return 0 if result.status == "correct" else 1
