"""Screens besides the main one: prompts, the help screen and the trace viewer."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option

from agent.trace import Trace

from .model import RunView
from .widgets import CodePane, TextPane, error_lines, kernel_info, observations_text, summary_text

MAX_EVENT_CHARS = 6000  # an event's JSON shown in the viewer (artifacts carry whole files)


class TextPrompt(ModalScreen[str | None]):
    """One line of text (a hint, a translator spec); Enter submits, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, *, value: str = "", placeholder: str = "") -> None:
        super().__init__()
        self.title_text, self.value, self.placeholder = title, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield Input(value=self.value, placeholder=self.placeholder)
            yield Static("Enter: OK   Escape: cancel", classes="dialog-help")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChoicePrompt(ModalScreen[str | None]):
    """Pick one of a few labelled choices; returns the choice's id."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.title_text, self.choices = title, choices

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(self.title_text, classes="dialog-title")
            yield OptionList(*[Option(label, id=key) for key, label in self.choices])
            yield Static("Enter: choose   Escape: cancel", classes="dialog-help")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


HELP = """\
[b]agent tui[/b]: watch, steer and replay ports

The run goes on in the background; every finished step is checkpointed, so
quitting (q) and opening the same PATH again continues where it stopped.

[b]Run[/b]        s  start or resume       p  pause (after the step in flight)
[b]Kernel[/b]     h  hint for its next translation (a finished kernel gets
              another attempt)     r  retry (one more attempt)
              a  accept an attempt as the result
              m  change its translator (compiler, openai:MODEL, ...)
[b]Views[/b]      1-5 CUDA, CPU, diff, observations, log tabs
              d  diff tab   [ ]  older/newer left side   { }  right side
              v  trace viewer (step through the run event by event)
[b]Viewer[/b]     n/b or arrows  next/previous event   g/G  first/last
              1-3 event, CPU code, observations tabs
[b]Other[/b]      ?  this help   q  quit (the checkpoint is kept)
"""


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help"):
            yield Static(HELP)
            yield Static("Escape: close", classes="dialog-help")

    def action_close(self) -> None:
        self.dismiss(None)


class TraceScreen(Screen[None]):
    """Step through a trace; the kernel's code and observations as they were at each event."""

    BINDINGS = [
        Binding("n,right", "step(1)", "Next"),
        Binding("b,left", "step(-1)", "Back"),
        Binding("g", "jump(0)", "First"),
        Binding("G", "jump(-1)", "Last"),
        Binding("escape,q", "close", "Close"),
        Binding("1", "tab('trace-event')", show=False),
        Binding("2", "tab('trace-cpu')", show=False),
        Binding("3", "tab('trace-obs')", show=False),
    ]

    def __init__(self, trace: Trace, *, closable: bool = True) -> None:
        super().__init__()
        self.trace = trace
        self.closable = closable
        self.index = 0
        self._folded: tuple[int, RunView] | None = None  # (index, view) of the last fold

    def compose(self) -> ComposeResult:
        yield Static(id="trace-title")
        with Horizontal(id="trace-body"):
            yield DataTable(id="trace-events", cursor_type="row", zebra_stripes=True)
            with TabbedContent(id="trace-tabs"):
                with TabPane("Event", id="trace-event"):
                    yield TextPane(id="trace-data")
                with TabPane("CPU", id="trace-cpu"):
                    yield CodePane(id="trace-code")
                with TabPane("Obs", id="trace-obs"):
                    yield TextPane(id="trace-observations")
        yield Static(id="trace-kernel")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#trace-events", DataTable)
        table.add_columns("seq", "kernel", "node", "type")
        for event in self.trace.events:
            table.add_row(str(event.get("seq")), event.get("kernel") or "-", event.get("node") or "-", event.get("type"))
        self.show(0)
        table.focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.cursor_row != self.index:
            self.show(event.cursor_row)

    def action_step(self, delta: int) -> None:
        self.show(self.index + delta)

    def action_jump(self, where: int) -> None:
        self.show(where if where >= 0 else len(self.trace.events) - 1)

    def action_tab(self, tab: str) -> None:
        self.query_one("#trace-tabs", TabbedContent).active = tab

    def action_close(self) -> None:
        if self.closable:
            self.dismiss(None)
        else:
            self.app.exit()

    def state_at(self, index: int) -> RunView:
        """The fold of the events up to `index`; stepping forward folds only the new ones."""
        if self._folded is None or self._folded[0] > index:
            self._folded = (-1, RunView())
        done, view = self._folded
        for event in self.trace.events[done + 1: index + 1]:
            view.apply(event)
        self._folded = (index, view)
        return view

    def show(self, index: int) -> None:
        events = self.trace.events
        if not events:
            self.query_one("#trace-title", Static).update(f"{self.trace.path.name}: no events")
            return
        self.index = index = max(0, min(index, len(events) - 1))
        table = self.query_one("#trace-events", DataTable)
        if table.cursor_row != index:
            table.move_cursor(row=index)
        event = events[index]
        self.query_one("#trace-title", Static).update(Text.assemble(
            (f" {Path(self.trace.path).name} ", "reverse bold"),
            f" event {index + 1}/{len(events)} · seq {event.get('seq')} · {event.get('kernel') or 'run'}"
            f" · {event.get('node')} · {event.get('type')}"))
        data = json.dumps(event.get("data"), indent=1, ensure_ascii=False, default=str)
        if len(data) > MAX_EVENT_CHARS:
            data = data[:MAX_EVENT_CHARS] + f"\n… ({len(data) - MAX_EVENT_CHARS} more characters)"
        self.query_one("#trace-data", TextPane).show(Text(data))
        view = self.state_at(index)
        kernel = view.kernels.get(event.get("kernel") or "") or next(iter(view.kernels.values()), None)
        self.query_one("#trace-kernel", Static).update(
            kernel_info(kernel) if kernel else summary_text(view, "trace"))
        code_pane = self.query_one("#trace-code", CodePane)
        if kernel:
            n = max((a.n for a in kernel.attempts.values() if a.code), default=None)
            code_pane.show(kernel.current_code, lexer="cpp", marked=error_lines(kernel, n), empty="(no CPU code yet at this step)")
            self.query_one("#trace-observations", TextPane).show(observations_text(kernel))
        else:
            code_pane.show(None, lexer="cpp", empty="(no kernel yet at this step)")
            self.query_one("#trace-observations", TextPane).show(Text("(no kernel yet at this step)", "dim"))
