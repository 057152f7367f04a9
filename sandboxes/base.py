"""The Sandbox protocol: where generated code and compilers run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Protocol, Sequence, runtime_checkable


@dataclass(frozen=True)
class Limits:
    """Resource limits for one command. None means the sandbox default."""

    timeout_s: float = 120.0
    memory_mb: int = 4096
    cpu_s: int = 600
    file_mb: int = 1024
    max_procs: int = 512


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

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def tail(self, chars: int = 2000) -> str:
        text = (self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr).strip()
        return text[-chars:]


class SandboxError(Exception):
    """The sandbox itself failed (not the command inside it)."""


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
    ) -> RunResult:
        """Run a command in the working directory; kill it and its children on timeout."""

    def get(self, path: str) -> bytes:
        """Read a file back from the working directory."""

    def exists(self, path: str) -> bool: ...

    def close(self) -> None: ...
