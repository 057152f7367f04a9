"""Traces: JSON Lines, append-only, one event per line, flushed as the run goes.

The first line is a header `{"trace_version": 1, "run_id", "started", "argv", "config",
"versions"}`; every later line is an event `{"seq", "t", "kernel", "node", "type", "data"}`
(docs/formats.md). Secrets never reach the file: every known secret value is replaced wherever
it occurs, and fields named like credentials are blanked whatever they hold.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

TRACE_VERSION = 1
EVENT_TYPES = (
    "node_start", "node_end", "llm_request", "llm_response", "tool_call", "tool_result",
    "observation", "artifact", "decision", "error",
)
REDACTED = "[redacted]"
# Field names whose values are credentials, whatever they hold (compared lower-case, '-' as '_').
SECRET_FIELDS = {"authorization", "api_key", "x_api_key", "openai_api_key", "anthropic_api_key", "proxy_authorization"}
MIN_SECRET_LEN = 4  # shorter "secrets" would blank ordinary text


class TraceError(Exception):
    """A trace file that cannot be read; the message names the file and the cause."""


def scrub(value: Any, secrets: Iterable[str]) -> Any:
    """A copy of `value` with secret values and credential fields replaced by REDACTED."""
    secrets = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LEN}, key=len, reverse=True)
    return _scrub(value, secrets)


def _scrub(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            name = str(key).lower().replace("-", "_")
            out[_scrub(str(key), secrets)] = REDACTED if name in SECRET_FIELDS and item else _scrub(item, secrets)
        return out
    if isinstance(value, (list, tuple)):
        return [_scrub(item, secrets) for item in value]
    return value


def _jsonable(value: Any) -> Any:
    """Records to plain JSON data (pydantic models, dataclasses, paths)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    return str(value)


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version(), "platform": platform.platform()}
    for dist in ("cuda2cpu-agent", "langgraph", "openai", "anthropic"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


class TraceWriter:
    """Appends events to a trace file; an existing trace is continued (a resumed run)."""

    def __init__(
        self,
        path: Path | str,
        *,
        argv: list[str] | None = None,
        config: dict[str, Any] | None = None,
        secrets: Iterable[str] = (),
        run_id: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.secrets = [s for s in secrets if s]
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.resumed = self.path.is_file() and self.path.stat().st_size > 0
        if self.resumed:
            existing = read_trace(self.path)
            self.header = existing.header
            self.run_id = existing.header.get("run_id", "")
            self._seq = max((e.get("seq", 0) for e in existing.events), default=0)
            self._file = self.path.open("a", encoding="utf-8")
            if not _ends_with_newline(self.path):  # a line cut off by a kill: end it so ours stay whole
                self._file.write("\n")
        else:
            self.run_id = run_id or uuid.uuid4().hex[:12]
            self.header = {
                "trace_version": TRACE_VERSION,
                "run_id": self.run_id,
                "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "argv": list(argv if argv is not None else sys.argv),
                "config": config or {},
                "versions": versions(),
            }
            self._seq = 0
            self._file = self.path.open("a", encoding="utf-8")
            self._write(self.header)
        self._t0 = time.monotonic()
        self._started_wall = time.time()

    def event(self, type: str, *, kernel: str | None = None, node: str | None = None, data: Any = None) -> dict:
        if type not in EVENT_TYPES:
            raise ValueError(f"unknown trace event type {type!r}")
        with self._lock:
            self._seq += 1
            record = {
                "seq": self._seq,
                "t": round(time.time(), 3),
                "kernel": kernel,
                "node": node,
                "type": type,
                "data": data if data is not None else {},
            }
            self._write(record)
            return record

    def _write(self, record: dict) -> None:
        clean = scrub(json.loads(json.dumps(record, default=_jsonable)), self.secrets)
        self._file.write(json.dumps(clean, ensure_ascii=False) + "\n")
        self._file.flush()  # a killed run keeps every event written so far

    def close(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.close()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


@dataclass
class Trace:
    path: Path
    header: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    bad_lines: list[int] = field(default_factory=list)  # line numbers that are not JSON (a cut-off write)

    def kernels(self) -> list[str]:
        seen: dict[str, None] = {}
        for event in self.events:
            if event.get("kernel"):
                seen.setdefault(event["kernel"], None)
        return list(seen)

    def of(self, kernel: str | None = None, *, type: str | None = None, node: str | None = None) -> list[dict]:
        return [
            e for e in self.events
            if (kernel is None or e.get("kernel") == kernel)
            and (type is None or e.get("type") == type)
            and (node is None or e.get("node") == node)
        ]


def read_trace(path: Path | str) -> Trace:
    """Read a trace; a line cut off by a kill is skipped and counted, not fatal."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"{path}: cannot read ({exc})") from None
    if not lines:
        raise TraceError(f"{path}: empty trace (no header line)")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        raise TraceError(f"{path}: line 1 is not a JSON trace header") from None
    if not isinstance(header, dict) or header.get("trace_version") != TRACE_VERSION:
        raise TraceError(f"{path}: not an agent trace (line 1 has no trace_version {TRACE_VERSION})")
    trace = Trace(path, header)
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            trace.bad_lines.append(number)
            continue
        if isinstance(event, dict) and "type" in event:
            trace.events.append(event)
        else:
            trace.bad_lines.append(number)
    return trace
