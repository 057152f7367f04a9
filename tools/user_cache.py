"""The user's cache directory for files the tools derive once per machine (precompiled headers)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agent" / "pch"


def keep_newest(pattern: str, count: int) -> None:
    """Of the cached files matching `pattern`, the newest `count` stay: every edit of the files a
    cached one derives from makes another, which nothing reads again."""
    found = []
    for path in cache_dir().glob(pattern):
        try:
            found.append((path.stat().st_mtime, path))
        except FileNotFoundError:  # pruned by a process beside this one
            pass
    for _, old in sorted(found, reverse=True)[count:]:
        old.unlink(missing_ok=True)
