"""Compile lowered CUDA with a small C++ main and run it (real g++, real OpenMP)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tools.cuda import runtime_include_dir

FLAGS = ["-O2", "-fopenmp", "-std=c++17", "-Wall"]


def build_and_run(cpp: str, main: str, workdir: Path, *, threads: int = 2, name: str = "prog") -> str:
    """Compile `cpp` + `main` with -Wall (no warning may name the lowered file) and run it."""
    src = workdir / f"{name}.cpp"
    src.write_text(cpp + "\n\n// ---- test driver ----\n" + main)
    exe = workdir / name
    build = subprocess.run(["g++", *FLAGS, "-I", str(runtime_include_dir()), str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, f"g++ failed:\n{build.stderr[-4000:]}"
    warnings = [line for line in build.stderr.splitlines() if "warning:" in line and src.name in line]
    assert not warnings, "warnings in the lowered code:\n" + "\n".join(warnings[:10])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    return run.stdout
