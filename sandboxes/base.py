"""The Sandbox protocol: where generated code and compilers run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Mapping, Protocol, Sequence, runtime_checkable


@dataclass(frozen=True)
class Limits:
    """Resource limits for one command. None means the sandbox default."""

    timeout_s: float = 120.0
    memory_mb: int = 4096
    cpu_s: int = 600
    file_mb: int = 1024
    max_procs: int = 512
    # Of each output stream, the result keeps this much of its start and as much of its end;
    # what a command prints in between is counted, not held (a runaway printer must not
    # fill the tool's memory). `run(stdout_file=...)` keeps the whole stdout on disk.
    output_kb: int = 64


@dataclass
class RunResult:
    command: str
    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    signal: int | None = None
    notes: list[str] = field(default_factory=list)
    # How much the command printed on each stream; more than `stdout`/`stderr` hold when cut.
    stdout_bytes: int | None = None
    stderr_bytes: int | None = None
    output_cut: bool = False  # a stream's middle was not kept

    def __post_init__(self) -> None:
        if self.stdout_bytes is None:
            self.stdout_bytes = len(self.stdout.encode())
        if self.stderr_bytes is None:
            self.stderr_bytes = len(self.stderr.encode())

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, chars: int = 2000) -> str:
        text = (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()
        return text[-chars:]


class SandboxError(Exception):
    """The sandbox itself failed (not the command inside it)."""


class SandboxUnavailable(SandboxError):
    """The requested sandbox cannot run here (no Docker daemon, no image): the message is one
    line saying what was tried, why it failed and what to do, fit to print without a traceback."""


def human_size(count: int) -> str:
    """A byte count as people read it: 983 MiB, 1.0 GiB, 64 KiB, 7 bytes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{count} bytes"


class OutputKeeper:
    """One output stream of a command in bounded memory: its first and last `keep` bytes and
    the count of all of it; with `copy`, the whole stream is also written to that file, up to
    `copy_limit` bytes."""

    def __init__(self, keep: int, copy: BinaryIO | None = None, copy_limit: int = 0):
        self.keep = keep
        self.head = bytearray()
        self.end = bytearray()
        self.total = 0
        self.copy = copy
        self.copy_limit = copy_limit
        self.copied = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if self.copy is not None and self.copied < self.copy_limit:
            part = data[: self.copy_limit - self.copied]
            self.copy.write(part)
            self.copied += len(part)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.end += data
            if len(self.end) > self.keep:
                del self.end[: len(self.end) - self.keep]

    @property
    def copy_cut(self) -> bool:
        return self.copy is not None and self.copied < self.total

    @property
    def cut(self) -> bool:
        return self.total > len(self.head) + len(self.end)

    def text(self) -> str:
        if not self.cut:
            return (self.head + self.end).decode(errors="replace")
        gap = f"\n... {human_size(self.total)} of output, {human_size(self.total - len(self.head) - len(self.end))} not kept ...\n"
        return self.head.decode(errors="replace") + gap + self.end.decode(errors="replace")


def kept_result(text: str, returncode: int, out: OutputKeeper, err: OutputKeeper, duration_s: float, **extra) -> RunResult:
    """A RunResult from two kept streams, with notes on what was cut."""
    result = RunResult(text, returncode, out.text(), err.text(), duration_s, stdout_bytes=out.total,
                       stderr_bytes=err.total, output_cut=out.cut or err.cut, **extra)
    for name, stream in (("stdout", out), ("stderr", err)):
        if stream.cut:
            result.notes.append(f"{name}: {human_size(stream.total)} printed; its first and last "
                                f"{human_size(stream.keep)} kept")
    if out.copy_cut:
        result.notes.append(f"the stdout file was cut at {human_size(out.copy_limit)} (the file-size limit)")
    return result


@runtime_checkable
class Sandbox(Protocol):
    kind: str  # "local" or "docker"
    mode: str  # human description of the isolation in force

    def put(self, files: Mapping[str, str | bytes]) -> None:
        """Write files (paths relative to the working directory)."""

    def put_path(self, src: Path, dest: str = "") -> None:
        """Copy a host file or directory into the working directory."""

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout_s: float | None = None,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str = "",
        stdout_file: Path | None = None,
    ) -> RunResult:
        """Run a command in the working directory; kill it and its children on timeout.
        `stdout_file`: a host file that receives the whole of stdout (up to the file-size
        limit), for a caller that reads all a program prints; the result keeps only its ends."""

    def get(self, path: str) -> bytes:
        """Read a file back from the working directory."""

    def exists(self, path: str) -> bool: ...

    def close(self) -> None: ...
