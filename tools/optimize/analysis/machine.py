"""What passes read from the machine they run on: the CPU g++ -march=native resolves to, its SIMD
width, the core count (scripts/snapshot_passes.py pins these to compare outputs across machines)."""

from __future__ import annotations

import functools
import os
import re
import subprocess


@functools.cache
def native_cpu() -> tuple[str, str] | None:
    """(arch, tune) that `g++ -march=native` resolves to on this machine; None without g++."""
    try:
        out = subprocess.run(["g++", "-march=native", "-Q", "--help=target"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    arch, tune = (re.search(rf"^\s*-m{o}=\s+(\S+)\s*$", out, re.M) for o in ("arch", "tune"))
    return (arch[1], tune[1]) if arch and tune else None


@functools.cache
def vector_bytes() -> int:
    """The widest SIMD registers `g++ -march=native` uses here: 64 (AVX-512), 32 (AVX) or 16."""
    try:
        macros = subprocess.run(["g++", "-march=native", "-dM", "-E", "-x", "c++", "/dev/null"], capture_output=True,
                                text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 16
    return 64 if "__AVX512F__" in macros else 32 if "__AVX__" in macros else 16


def cores() -> int:
    """The logical cores the OpenMP team spreads over."""
    return os.cpu_count() or 1
