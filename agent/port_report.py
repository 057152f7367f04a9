"""The report of a repository port: PORT_REPORT.md, port_report.json and the console table."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table


class KernelReport(BaseModel):
    name: str
    file: str
    line: int
    # correct, incorrect, unsupported, compile_error (g++ failed in its code, or said nowhere where it
    # failed), not_built (the build failed in other code); not checked: unverified (the program ran and
    # printed no verdict), not_launched (the check never launched it), timeout, runtime_error
    status: str
    reference_kind: str | None = None
    speedup: float | None = None
    tuning: str | None = None  # what per-kernel tuning on captured launches did
    unsupported: list[str] = []
    errors: list[str] = []  # the build's errors in its lowered code; where not built, why


class CheckRun(BaseModel):
    command: str
    passed: bool
    seconds: float
    detail: str
    verdict: str = ""  # passed, ran (no verdict printed), failed, timeout, crashed


class CheckReport(BaseModel):
    command: str | None
    passed: bool
    detail: str
    runs: list[CheckRun] = []  # each command that ran, in order; the first that failed ends the check
    notes: list[str] = []  # what the check ran instead of the project's own commands, and why
    # the run whose failure is the check's (index in runs): a command that timed out on its first
    # try and then failed in full failed; one whose smaller run failed for being smaller timed out
    failed_run: int | None = None

    @property
    def verdict(self) -> str:
        """passed, failed, or what kept the program from its own verdict (timeout, crashed)."""
        if self.passed:
            return "ran" if self.runs and all(r.verdict == "ran" for r in self.runs if r.passed) else "passed"
        if self.failed_run is not None and self.failed_run < len(self.runs):
            return self.runs[self.failed_run].verdict or "failed"
        return next((r.verdict or "failed" for r in self.runs if not r.passed), "failed")


NOT_WRONG = ("correct", "unverified", "not_launched")  # kernel statuses of a port that did its job


class PortReport(BaseModel):
    project: str
    translator: str
    build_ok: bool
    check: CheckReport
    kernels: list[KernelReport]
    unmapped_calls: list[str] = []
    build_errors: list[str] = []
    notes: list[str] = []  # what discovery could not read, and what it did instead
    time_s: float = 0.0
    app_runs_s: float = 0.0  # of time_s, spent running the project's own commands (checks, capture)
    cost_usd: float = 0.0

    @property
    def ok(self) -> bool:
        """Built, passed its check, and every kernel correct, run by a program that prints no verdict, or
        never run by it."""
        return self.build_ok and self.check.passed and all(k.status in NOT_WRONG for k in self.kernels)


CHECK_WORDS = {"passed": "passed", "ran": "ran (no verdict printed)", "failed": "FAILED", "timeout": "TIMED OUT",
               "crashed": "CRASHED"}


def write_reports(out: Path, report: PortReport) -> None:
    (out / "port_report.json").write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    lines = [
        f"# Port report: {report.project}",
        "",
        f"- translator: `{report.translator}`",
        f"- build: {'ok' if report.build_ok else 'FAILED'}",
        f"- check: {CHECK_WORDS[report.check.verdict]}"
        f"{f' (`{report.check.command}`)' if report.check.command else ''}: {report.check.detail}",
        f"- time: {report.time_s:.1f} s ({report.app_runs_s:.1f} s of it running the project's own commands), "
        f"cost: ${report.cost_usd:.4f}",
        *[f"  - ran `{r.command}`: {CHECK_WORDS[r.verdict or ('passed' if r.passed else 'failed')]} in {r.seconds:.1f} s"
          for r in report.check.runs],
        *[f"- note: {n}" for n in [*report.check.notes, *report.notes]],
        "",
        f"| kernel | file:line | status | reference | {SPEEDUP_COLUMN} | tuning | unsupported, build errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in report.kernels:
        speed = f"{k.speedup:.2f}x" if k.speedup else "-"
        lines.append(f"| {k.name} | {k.file}:{k.line} | {k.status} | {k.reference_kind or '-'} | {speed} "
                     f"| {k.tuning or '-'} | {'; '.join(k.unsupported + k.errors) or '-'} |")
    if report.unmapped_calls:
        lines += ["", "## Library calls with no CPU mapping", ""] + [f"- {c}" for c in report.unmapped_calls]
    if report.build_errors:
        lines += ["", "## Build errors", ""] + [f"- {e}" for e in report.build_errors]
    (out / "PORT_REPORT.md").write_text("\n".join(lines) + "\n")


SPEEDUP_COLUMN = "speedup vs faithful port"  # the tuned kernel over the faithful lowering, timed together
SHOWN_ERRORS = 3  # build errors on the console; all of them are in PORT_REPORT.md


def print_report(console: Console, report: PortReport) -> None:
    table = Table(title=f"{report.project}: build {'ok' if report.build_ok else 'FAILED'}, "
                        f"check {CHECK_WORDS[report.check.verdict]}")
    for col in ("kernel", "where", "status", "reference", SPEEDUP_COLUMN):
        table.add_column(col, overflow="fold")
    colors = {"correct": "green", "incorrect": "red", "unsupported": "yellow", "compile_error": "red",
              "not_built": "yellow", "timeout": "yellow", "runtime_error": "red", "unverified": "yellow",
              "not_launched": "yellow"}
    for k in report.kernels:
        table.add_row(k.name, f"{k.file}:{k.line}", f"[{colors.get(k.status, 'white')}]{k.status}[/]",
                      k.reference_kind or "-", f"{k.speedup:.2f}x" if k.speedup else "-")
    console.print(table)
    console.print(f"check: {report.check.detail}")
    for error in report.build_errors[:SHOWN_ERRORS]:
        console.print(f"[red]build error:[/] {error}")
    if len(report.build_errors) > SHOWN_ERRORS:
        console.print(f"... {len(report.build_errors) - SHOWN_ERRORS} more build errors in PORT_REPORT.md")
    for k in report.kernels:
        for problem in k.unsupported[:1]:
            console.print(f"[yellow]{k.name}:[/] {problem}")
    for note in [*report.check.notes, *report.notes]:
        console.print(f"note: {note}")
    for c in report.unmapped_calls:
        console.print(f"[yellow]unmapped:[/] {c}")
