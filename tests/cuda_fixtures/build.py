"""Compile lowered CUDA with a small C++ main and run it (real g++, real OpenMP)."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from sandboxes import LocalSandbox
from tools.cuda import lower_source, runtime_include_dir
from tools.verify.runtime_headers import HEADER, precompiled_runtime

FLAGS = ["-O2", "-fopenmp", "-std=c++17", "-Wall"]


@functools.cache
def include_args() -> tuple[str, ...]:
    """The runtime's headers, copied beside their main header precompiled for FLAGS (the
    product's own, tools/verify/runtime_headers.py), as a sandbox has them: g++ reads that first
    where it fits (and, having found it, takes the header from the same directory)."""
    with LocalSandbox() as box:
        pch = precompiled_runtime(box, "g++", FLAGS)
    if pch is None:
        return ("-I", str(runtime_include_dir()))
    copy = Path(tempfile.mkdtemp(prefix="runtime-pch-")) / "include"
    atexit.register(shutil.rmtree, copy.parent, True)
    shutil.copytree(runtime_include_dir(), copy)
    (copy / f"{HEADER}.gch").mkdir()
    (copy / f"{HEADER}.gch" / pch.name).symlink_to(pch)
    return ("-I", str(copy))


def build_and_run(cpp: str, main: str, workdir: Path, *, threads: int = 2, name: str = "prog") -> str:
    """Compile `cpp` + `main` with -Wall (no warning may name the lowered file) and run it."""
    src = workdir / f"{name}.cpp"
    src.write_text(cpp + "\n\n// ---- test driver ----\n" + main)
    exe = workdir / name
    build = subprocess.run(["g++", *FLAGS, *include_args(), str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, f"g++ failed:\n{build.stderr[-4000:]}"
    warnings = [line for line in build.stderr.splitlines() if "warning:" in line and src.name in line]
    assert not warnings, "warnings in the lowered code:\n" + "\n".join(warnings[:10])
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, f"exit {run.returncode}:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
    return run.stdout


def lowered(source: str, name: str = "k.cu") -> str:
    """The lowering of `source`, every kernel of which must lower (no unsupported feature)."""
    mod = lower_source(source, name)
    assert mod.unsupported == [], [str(u) for u in mod.unsupported]
    return mod.cpp


def kernels_code(cpp: str) -> str:
    """The lowered kernels' code (their namespace), without comment lines: what must not call
    what the lowering rewrites."""
    body = cpp.split("namespace cudacpu_kernels", 1)[1]
    return "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("//"))


def named_rows(out: str) -> dict[str, list[int]]:
    """A driver's output lines `name v1 v2 ...`, by name."""
    return {line.split()[0]: [int(x) for x in line.split()[1:]] for line in out.strip().splitlines()}


def assert_rows(out: str, want: dict[str, list[int]]) -> None:
    """The driver printed the rows `want` names, each as `want` has it (the first that differs named)."""
    got = named_rows(out)
    assert set(got) == set(want)
    for name in want:
        assert got[name] == want[name], name
