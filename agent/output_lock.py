"""One run at a time per output directory: an fcntl lock on OUT/port.lock, which names its holder.

The kernel releases the lock when its holder ends, however it ends (kill -9 included), so a
lock file left behind never blocks a later run."""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import UserError

LOCK_FILE = "port.lock"
PID_WAIT_S = 1.0  # a holder writes its pid right after taking the lock


@contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Hold OUT for this process; another run holding it is a UserError naming its pid."""
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError(f"{out} is in use by another `agent port` run (pid {_holder(fd)}); "
                            f"wait for it to end, or give another -o") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    deadline = time.monotonic() + PID_WAIT_S
    while True:
        pid = os.pread(fd, 32, 0).decode(errors="replace").strip()
        if pid or time.monotonic() > deadline:
            return pid or "unknown"
        time.sleep(0.05)
