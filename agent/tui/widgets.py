"""Widgets of the main screen: the kernel table, code panes, observations, summary line."""

from __future__ import annotations

import difflib
from typing import Any

from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from .model import KernelView, RunView

STAGE_STYLE = {"done": "green", "failed": "red", "paused": "yellow", "waiting": "dim"}
STATUS_STYLE = {"correct": "green", "incorrect": "red", "compile_error": "red", "runtime_error": "red",
                "timeout": "yellow", "unsupported": "yellow", "no_code": "yellow"}
SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def speedup_text(speedup: float | None) -> str:
    return f"{speedup:.3g}x" if speedup else "-"


def summary_text(view: RunView, state: str) -> Text:
    s = view.summary()
    geomean = speedup_text(s["geomean_speedup"])
    text = Text.assemble(
        (f" {state} ", "reverse bold"),
        f" {s['done']}/{s['kernels']} done · {s['correct']} correct · geomean {geomean}"
        f" · {s['tokens']} tok · ${s['cost_usd']:.4f}",
    )
    text.no_wrap = True
    return text


def kernel_info(kernel: KernelView | None) -> Text:
    if kernel is None:
        return Text("no kernel selected")
    status = kernel.status
    text = Text.assemble(
        (kernel.name, "bold"), f" · {kernel.translator or '-'} · {kernel.stage} · #{kernel.iterations} ",
        (status, STATUS_STYLE.get(status, "")),
        f" · {speedup_text(kernel.speedup)} · {kernel.tokens} tok · ${kernel.cost_usd:.4f} · {kernel.elapsed_s:.0f}s",
    )
    text.no_wrap = True
    return text


class KernelTable(DataTable):
    """One row per kernel: stage, iterations, status, speedup, cost."""

    COLUMNS = {"kernel": 20, "stage": 9, "iter": 4, "status": 13, "speedup": 8, "cost": 9}

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        for column, width in self.COLUMNS.items():
            self.add_column(column, key=column, width=width)

    def show(self, view: RunView) -> None:
        for name, kernel in view.kernels.items():
            cells = _row(kernel)
            if name in self.rows:
                for column, cell in zip(self.COLUMNS, cells):
                    self.update_cell(name, column, cell)
            else:
                self.add_row(*cells, key=name)

    @property
    def selected(self) -> str | None:
        if not self.row_count:
            return None
        return str(self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value)


def _row(kernel: KernelView) -> tuple[Any, ...]:
    return (
        kernel.name,
        Text(kernel.stage, STAGE_STYLE.get(kernel.stage, "bold")),
        str(kernel.iterations),
        Text(kernel.status, STATUS_STYLE.get(kernel.status, "")),
        speedup_text(kernel.speedup),
        f"${kernel.cost_usd:.4f}",
    )


class CodePane(VerticalScroll):
    """Source with line numbers; lines named by error observations are highlighted."""

    def compose(self):
        yield Static(id=f"{self.id}-body", classes="code")

    def show(self, code: str | None, *, lexer: str, marked: set[int] | None = None, empty: str = "(none yet)") -> None:
        body = self.query_one(Static)
        if not code:
            body.update(Text(empty, "dim"))
            return
        body.update(Syntax(code, lexer, line_numbers=True, highlight_lines=marked or set(), word_wrap=False,
                           theme="ansi_dark"))


class TextPane(VerticalScroll):
    """Scrollable rich text (observations, a diff)."""

    def compose(self):
        yield Static(id=f"{self.id}-body")

    def show(self, text: Text | str) -> None:
        self.query_one(Static).update(text)


def observations_text(kernel: KernelView) -> Text:
    """Every observation grouped by attempt (0: plan and hints), errors at their lines."""
    if not kernel.observations:
        return Text("no observations yet", "dim")
    text = Text()
    current = None
    for obs in kernel.observations:
        attempt = obs.get("attempt", 0)
        if attempt != current:
            current = attempt
            text.append(f"{'plan / hints' if not attempt else f'attempt {attempt}'}\n", "bold underline")
        severity = obs.get("severity", "info")
        where = ""
        if obs.get("line"):
            where = f" {obs.get('file') or ''}:{obs['line']}"
        text.append(f" {severity:<7}", SEVERITY_STYLE.get(severity, ""))
        text.append(f" [{obs.get('kind')}]{where} ", "bold" if obs.get("kind") == "human" else "")
        text.append(f"{obs.get('message', '')}\n")
    return text


def error_lines(kernel: KernelView, attempt: int | None) -> set[int]:
    return {o["line"] for o in kernel.observations
            if o.get("attempt") == attempt and o.get("severity") == "error" and isinstance(o.get("line"), int)}


def diff_text(old_label: str, old: str, new_label: str, new: str) -> Text:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_label, new_label, lineterm="", n=2))
    if not lines:
        return Text(f"{old_label} and {new_label} are the same code", "dim")
    text = Text()
    for line in lines:
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else ""
        text.append(line + "\n", style)
    return text
