"""`agent tui`: the interactive terminal UI (Textual) for watching, steering and replaying ports."""

from .app import TuiApp
from .session import Session

__all__ = ["Session", "TuiApp"]
