"""The Textual application: the main screen over a `Session`, or the trace viewer alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding
from textual.message import Message

from agent.trace import Trace

from .main_screen import MainScreen
from .model import FINISHED, IDLE, STOPPED, RunView, fold, log_line
from .screens import HelpScreen, TraceScreen

if TYPE_CHECKING:  # the session brings LangGraph, which the trace viewer alone does not need
    from .repository import RepositorySession
    from .session import Session


class SessionEvent(Message):
    """A trace event from the driver thread."""

    def __init__(self, event: dict[str, Any]) -> None:
        super().__init__()
        self.event = event


class SessionState(Message):
    """The driver's state changed (running, paused, finished, ...)."""

    def __init__(self, state: str, note: str) -> None:
        super().__init__()
        self.state, self.note = state, note


class TuiApp(App[None]):
    CSS_PATH = "tui.tcss"
    TITLE = "agent tui"
    ENABLE_COMMAND_PALETTE = False  # its footer entry would crowd out the keys at 80 columns
    BINDINGS = [
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, session: "Session | RepositorySession | None" = None, *, trace: Trace | None = None, start: bool = True) -> None:
        super().__init__()
        if session is None and trace is None:
            raise ValueError("TuiApp needs a session or a trace")
        self.session = session
        self.trace = trace
        self.autostart = start
        self.view = RunView()
        self.run_state = IDLE
        self.main: MainScreen | None = None

    def on_mount(self) -> None:
        if self.session is None:
            self.push_screen(TraceScreen(self.trace, closable=False))
            return
        self.main = MainScreen()
        self.push_screen(self.main)  # it calls `begin` once composed

    def begin(self) -> None:
        """Show what earlier sessions left, then start the driver (and the run, unless --no-start)."""
        self._load()
        session = self.session
        session.on_event = lambda event: self._post(SessionEvent(event))
        session.on_state = lambda state, note: self._post(SessionState(state, note))
        session.open()
        if not any(not k.finished for k in self.view.kernels.values()):
            self.run_state = FINISHED  # nothing left to do
        elif self.autostart:
            session.start()
        self.main.refresh_all()

    def _post(self, message: Message) -> None:
        try:
            self.post_message(message)
        except RuntimeError:  # the app's loop already closed (quitting)
            pass

    def _load(self) -> None:
        """The view as earlier sessions left it: their trace, then each kernel's checkpoint."""
        session = self.session
        self.view = fold(session.history())
        for line in self.view.log[-200:]:
            self.main.write_log(line)
        saved_states = session.checkpointed()
        for name in session.kernel_names():
            kernel = self.view.kernel(name)
            saved = saved_states.get(name)
            if saved is not None:  # the checkpoint decides what runs next
                if saved.result and not saved.next:
                    kernel.result_status = saved.result.get("status")
                    kernel.stage = "done" if kernel.result_status == "correct" else "failed"
                elif saved.started:
                    kernel.stage, kernel.result_status = "paused", None
                kernel.translator = saved.translator or kernel.translator
            kernel.translator = kernel.translator or session.settings.llm
            if not kernel.cuda:
                kernel.cuda_name, kernel.cuda = session.cuda_of(name)
        ordered = {name: self.view.kernels.pop(name) for name in session.kernel_names()}  # this session's first
        self.view.kernels = {**ordered, **self.view.kernels}

    # --- updates from the driver ---------------------------------------------------------
    def on_session_event(self, message: SessionEvent) -> None:
        self.view.apply(message.event)
        line = log_line(message.event)
        if line:
            self.main.write_log(line)
        self.main.refresh_all(only=message.event.get("kernel"))

    def on_session_state(self, message: SessionState) -> None:
        self.run_state = message.state
        if message.note and message.state != STOPPED:
            self.notify(message.note, timeout=4)
        self.main.refresh_summary()

    # --- app-wide keys -----------------------------------------------------------------
    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        if self.session is not None:
            self.session.pause()  # the node in flight finishes and is checkpointed (see commands/tui.py)
        self.exit()
