"""`agent tui`: the interactive terminal UI (Textual) for watching, steering and replaying ports.

`TuiApp` (agent/tui/app.py) shows a `Session` (agent/tui/session.py: the driver thread that
steps each kernel's graph) or a trace alone; import them from their modules.
"""
