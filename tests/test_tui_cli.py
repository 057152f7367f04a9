"""`agent tui` from the command line, in a real pseudo-terminal: opens, quits on q, exits 0;
bad input is one red line and exit status 1."""

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

AGENT = str(Path(sys.executable).parent / "agent")
SHIPPED = Path(__file__).parent.parent / "traces" / "openai_two_fixes.jsonl"
WAIT_S = 120


def run_in_pty(args: list[str], until: bytes) -> tuple[int, bytes]:
    """Start `args` on a pty (80x24); once `until` shows on screen, press q; return (status, output)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the agent, on the pty
        os.environ.update(COLUMNS="80", LINES="24", TERM="xterm-256color")
        os.execv(args[0], args)
    output, pressed = b"", False
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the child closed the pty: it has ended
                break
            if not chunk:
                break
            output += chunk
        if not pressed and until in output:
            os.write(fd, b"q")
            pressed = True
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), output


def test_opens_a_trace_and_quits_on_q():
    status, output = run_in_pty([AGENT, "tui", str(SHIPPED)], until=b"openai_two_fixes.jsonl")
    assert status == 0, output[-2000:]
    assert b"event" in output and b"Traceback" not in output


def test_bad_path_is_one_clear_line(tmp_path):
    done = subprocess.run([AGENT, "tui", str(tmp_path)], capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 1
    assert f"{tmp_path}: no kernel tasks and no CUDA project here" in done.stderr and "Traceback" not in done.stderr
