"""The main screen: kernel table, the selected kernel's code and observations, the live log."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, RichLog, Static, TabbedContent, TabPane

from agent.trace import read_trace

from .model import FINISHED, IDLE, RUNNING, KernelView
from .screens import ChoicePrompt, TextPrompt, TraceScreen
from .widgets import (CodePane, KernelTable, TextPane, diff_text, error_lines, kernel_info, observations_text,
                      summary_text)

if TYPE_CHECKING:
    from .app import TuiApp

TABS = ("tab-cuda", "tab-cpu", "tab-diff", "tab-obs", "tab-log")


class MainScreen(Screen[None]):
    BINDINGS = [
        Binding("s", "start", "Run"),
        Binding("p", "pause", "Pause"),
        Binding("h", "hint", "Hint"),
        Binding("r", "retry", "Retry"),
        Binding("a", "accept", "Accept"),
        Binding("m", "translator", "Model"),
        Binding("d", "tab('tab-diff')", "Diff"),
        Binding("v", "viewer", "Trace"),
        Binding("left_square_bracket", "diff_side('old', -1)", show=False),
        Binding("right_square_bracket", "diff_side('old', 1)", show=False),
        Binding("left_curly_bracket", "diff_side('new', -1)", show=False),
        Binding("right_curly_bracket", "diff_side('new', 1)", show=False),
        *[Binding(str(i + 1), f"tab('{tab}')", show=False) for i, tab in enumerate(TABS)],
    ]

    app: "TuiApp"

    def __init__(self) -> None:
        super().__init__()
        self.diff_pick: dict[str, dict[str, int]] = {}  # kernel -> {"old": i, "new": j} into its code versions

    def compose(self) -> ComposeResult:
        yield Static(id="summary")
        yield KernelTable(id="kernels")
        yield Static(id="kernel-info")
        with TabbedContent(id="tabs"):
            with TabPane("CUDA", id="tab-cuda"):
                yield CodePane(id="cuda")
            with TabPane("CPU", id="tab-cpu"):
                yield CodePane(id="cpu")
            with TabPane("Diff", id="tab-diff"):
                yield Static(id="diff-title")
                yield TextPane(id="diff")
            with TabPane("Observations", id="tab-obs"):
                yield TextPane(id="observations")
            with TabPane("Log", id="tab-log"):
                yield RichLog(id="log", wrap=False, max_lines=2000)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(KernelTable).focus()
        self.app.begin()

    # --- drawing -----------------------------------------------------------------------
    def write_log(self, line: str) -> None:
        self.query_one("#log", RichLog).write(line)

    def refresh_summary(self) -> None:
        self.query_one("#summary", Static).update(summary_text(self.app.view, self.app.run_state))

    def refresh_all(self, only: str | None = None) -> None:
        self.refresh_summary()
        self.query_one(KernelTable).show(self.app.view)
        selected = self.selected_kernel()
        if only is None or selected is None or only == selected.name:
            self.refresh_kernel(selected)

    def selected_kernel(self) -> KernelView | None:
        name = self.query_one(KernelTable).selected
        return self.app.view.kernels.get(name) if name else None

    def on_data_table_row_highlighted(self, event: KernelTable.RowHighlighted) -> None:
        self.refresh_kernel(self.selected_kernel())

    def refresh_kernel(self, kernel: KernelView | None) -> None:
        self.query_one("#kernel-info", Static).update(kernel_info(kernel))
        if kernel is None:
            return
        self.query_one("#cuda", CodePane).show(kernel.cuda, lexer="cpp", empty="(no CUDA source recorded)")
        latest = max((a.n for a in kernel.attempts.values() if a.code), default=None)
        self.query_one("#cpu", CodePane).show(kernel.current_code, lexer="cpp", marked=error_lines(kernel, latest))
        self.query_one("#observations", TextPane).show(observations_text(kernel))
        self.refresh_diff(kernel)

    def refresh_diff(self, kernel: KernelView) -> None:
        versions = list(kernel.versions().items())
        title = self.query_one("#diff-title", Static)
        if len(versions) < 2:
            title.update(Text(" nothing to compare yet: a diff needs two versions of the CPU code", "dim"))
            self.query_one("#diff", TextPane).show("")
            return
        old, new = self._diff_indices(kernel.name, len(versions))
        (old_label, old_code), (new_label, new_code) = versions[old], versions[new]
        title.update(Text.assemble((f" {old_label} → {new_label} ", "reverse"), "  [ ] left side · { } right side"))
        self.query_one("#diff", TextPane).show(diff_text(old_label, old_code, new_label, new_code))

    def _diff_indices(self, name: str, count: int) -> tuple[int, int]:
        pick = self.diff_pick.get(name, {})
        new = min(pick.get("new", count - 1), count - 1)
        old = min(pick.get("old", new - 1), count - 1)
        return max(old, 0), new

    # --- actions -----------------------------------------------------------------------
    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

    def action_diff_side(self, side: str, delta: int) -> None:
        kernel = self.selected_kernel()
        if kernel is None:
            return
        count = len(kernel.versions())
        old, new = self._diff_indices(kernel.name, count)
        pick = {"old": old, "new": new}
        pick[side] = max(0, min(count - 1, pick[side] + delta))
        self.diff_pick[kernel.name] = pick
        self.action_tab("tab-diff")
        self.refresh_diff(kernel)

    def action_start(self) -> None:
        if self.app.run_state == RUNNING:
            self.notify("already running")
            return
        self.app.session.start()

    def action_pause(self) -> None:
        if self.app.run_state != RUNNING:
            self.notify("not running")
            return
        self.app.session.pause()
        self.app.run_state = "pausing"
        self.refresh_summary()

    def action_hint(self) -> None:
        kernel = self._kernel_for_action()
        if kernel is None:
            return

        def done(text: str | None) -> None:
            if text:
                self.app.session.hint(kernel.name, text)
                self.notify(f"hint for {kernel.name}: it goes into the next translation")
                if kernel.finished:
                    self._run_again(kernel.name)

        self.app.push_screen(TextPrompt(f"Hint for {kernel.name}'s next translation",
                                        placeholder="e.g. use a blocked loop over rows"), done)

    def action_retry(self) -> None:
        kernel = self._kernel_for_action()
        if kernel is None:
            return
        if not kernel.finished:
            self.notify(f"{kernel.name} has not finished; nothing to retry", severity="warning")
            return
        self.app.session.retry(kernel.name)
        self.notify(f"{kernel.name}: one more attempt")
        self._run_again(kernel.name)

    def _run_again(self, name: str) -> None:
        """Run the reopened kernel at once when nothing else waits; a paused run waits for `s`."""
        others_done = all(k.finished for k in self.app.view.kernels.values() if k.name != name)
        if self.app.run_state == FINISHED or (self.app.run_state == IDLE and others_done):
            self.app.session.start()
        elif self.app.run_state != RUNNING:
            self.notify("press s to run it")

    def action_accept(self) -> None:
        kernel = self._kernel_for_action()
        if kernel is None:
            return
        choices = [(str(a.n), f"attempt {a.n} ({a.mode or 'translate'}): {a.status}" + (f" · {a.speedup:.3g}x" if a.speedup else ""))
                   for a in sorted(kernel.attempts.values(), key=lambda a: a.n) if a.code and a.status != "pending"]
        if not choices:
            self.notify(f"{kernel.name} has no finished attempt with code yet", severity="warning")
            return

        def done(choice: str | None) -> None:
            if choice:
                self.app.session.accept(kernel.name, int(choice))

        self.app.push_screen(ChoicePrompt(f"Accept which attempt of {kernel.name} as its result?", choices), done)

    def action_translator(self) -> None:
        kernel = self._kernel_for_action()
        if kernel is None:
            return

        def done(spec: str | None) -> None:
            if not spec or spec == kernel.translator:
                return
            try:
                self.app.session.set_translator(kernel.name, spec)
            except Exception as exc:  # noqa: BLE001 - a bad spec or a missing key: say so, keep going
                self.notify(f"cannot use {spec!r}: {exc}", severity="error", timeout=8)
                return
            self.notify(f"{kernel.name} translates with {spec} from its next attempt")

        self.app.push_screen(TextPrompt(f"Translator for {kernel.name}", value=kernel.translator,
                                        placeholder="compiler | openai:MODEL | anthropic:MODEL | openai-compatible:MODEL"), done)

    def _kernel_for_action(self) -> KernelView | None:
        if not self.app.session.tasks:
            self.notify("a repository port has no per-kernel loop to steer; open kernel tasks for that", severity="warning")
            return None
        kernel = self.selected_kernel()
        if kernel is None or kernel.name not in self.app.session.tasks:
            self.notify("select a kernel of this session first", severity="warning")
            return None
        return kernel

    def action_viewer(self) -> None:
        path = self.app.session.trace_path
        if not path.is_file():
            self.notify("no trace yet: start the run first", severity="warning")
            return
        self.app.push_screen(TraceScreen(read_trace(path)))
