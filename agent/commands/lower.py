"""`agent lower FILE [-o OUT] [-k KERNEL]`: the deterministic CUDA-to-OpenMP compiler.

FILE is a CUDA source (its kernels and device code are lowered to C++; host functions are
left out, and listed) or a kernel task file (.json: a complete translation unit with the task's
entry function). The C++ goes to OUT or stdout; what was left out and the unsupported constructs
(with file and line) go to stderr, and unsupported constructs make the exit status 1. A file
with syntax errors is refused: `file:line:col: message`, exit status 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from tools.cuda import CudaParseError, LoweringError, lower_source, lower_task
from tools.spec import TaskError, load_task

from ..errors import UserError


def run(cuda: Path, *, out: Path | None = None, kernels: list[str] | None = None, console: Console | None = None) -> int:
    console = console or Console(stderr=True)
    warnings = Console(stderr=True)  # never beside the C++ on stdout
    dropped: list[str] = []
    try:
        if cuda.suffix == ".json":
            if kernels:
                raise UserError(f"{cuda}: --kernel applies to CUDA sources, not to task files")
            cpp, problems = lower_task(load_task(cuda)), []
        else:
            try:
                source = cuda.read_text()
            except (OSError, UnicodeDecodeError) as exc:
                raise UserError(f"{cuda}: cannot read ({exc})") from None
            lowered = lower_source(source, str(cuda), kernels=kernels or None)
            cpp, problems, dropped = lowered.cpp, lowered.unsupported, lowered.host_dropped
    except (TaskError, CudaParseError, LoweringError) as exc:
        raise UserError(str(exc)) from None
    if out is not None:
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(cpp)
        except OSError as exc:
            raise UserError(f"{out}: cannot write ({exc.strerror})") from None
        console.print(f"wrote {out}", highlight=False)
    else:
        sys.stdout.write(cpp)
    if dropped:
        warnings.print(f"left out (host code): {escape(', '.join(dropped))}", highlight=False, soft_wrap=True)
    for p in problems:
        warnings.print(f"[yellow]{escape(str(p))}[/yellow]", highlight=False, soft_wrap=True)
    return 1 if problems else 0
