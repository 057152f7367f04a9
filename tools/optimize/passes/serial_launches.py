"""serial_small_grids, serial_launches and parallel_small_grids: which launches run on the calling
thread, without waking the OpenMP team."""

from __future__ import annotations

import re
from typing import Callable

from ..analysis import code as C
from ..base import Context, Transform

SMALL_GRID_THREADS = 1 << 15  # below this many CUDA threads, waking a team costs more than it saves
_PARALLEL_FOR = re.compile(r"^(?P<ind>[ \t]*)#pragma omp parallel for\b[^\n]*\n", re.M)
_PARALLEL_REGION = re.compile(r"^(?P<ind>[ \t]*)#pragma omp parallel[ \t]*\n", re.M)
_TOTAL_THREADS = "1ull * gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z"
_SMALL = "// tools.optimize: small launches on the calling thread"


def serial_small_grids(ctx: Context, code: str) -> str | None:
    """Small launches run on the calling thread without entering OpenMP at all: the parallel
    loop nest gets a serial twin taken below SMALL_GRID_THREADS CUDA threads (decided at run
    time, so large launches of the same kernel still spread over the cores). A parallel region
    with per-thread state gets an OpenMP `if` clause instead."""
    return _serial_below(ctx, code, lambda threads: SMALL_GRID_THREADS if max(threads) < SMALL_GRID_THREADS else None)


def serial_launches(ctx: Context, code: str) -> str | None:
    """The task's launches larger than SMALL_GRID_THREADS run on the calling thread too: where
    the cores share what bounds the kernel (memory bandwidth, one physical core behind two
    logical ones), waking the team costs more than the second thread saves, which only timing
    tells. Launches larger than the task's own still run in parallel."""
    return _serial_below(ctx, code, lambda threads: max(threads) + 1 if max(threads) >= SMALL_GRID_THREADS else None)


def _serial_below(ctx: Context, code: str, threshold: Callable[[list[int]], int | None]) -> str | None:
    """Each kernel's parallel loop nest with a serial twin taken below threshold(the CUDA threads
    of the kernel's launches) CUDA threads; kernels where it is None are left alone."""
    changed = False
    for k in reversed(C.kernels(code)):
        launches = ctx.launches_of(k.name)
        below = threshold([_threads(launch) for launch in launches]) if launches else None
        body = k.body(code)
        if below is None or _SMALL in body:
            continue
        new = _serial_twin(body, below)
        if new is None:
            new = _PARALLEL_REGION.sub(lambda m: f"{m[0][:-1]} if({_TOTAL_THREADS} >= {below}ull)"
                                       f"  {_SMALL}\n", body, count=1)
        if new != body:
            code = C.with_body(code, k, new)
            changed = True
    return code if changed else None


def _serial_twin(body: str, below: int) -> str | None:
    m = _PARALLEL_FOR.search(body)
    if not m:
        return None
    end = _for_statement_end(body, m.end())
    if end is None:
        return None
    nest, ind = body[m.end():end], m["ind"]
    indented = "\n".join("    " + line if line.strip() else line for line in nest.split("\n"))
    pragma = body[m.start():m.end()]
    # no other thread runs beside the serial twin: its atomics are plain loads and stores
    plain = f"{ind}    CUDA_CPU_ONE_THREAD_ATOMICS  // tools.optimize: no other thread to race\n" if "atomic" in nest else ""
    text = (f"{ind}if ({_TOTAL_THREADS} < {below}ull) {{  {_SMALL}\n{plain}"
            f"{indented}\n{ind}}} else {{\n    {pragma}{indented}\n{ind}}}")
    return body[:m.start()] + text + body[end:]


_IF_CLAUSE = re.compile(rf" if\({re.escape(_TOTAL_THREADS)} >= \d+ull\)  {_SMALL}")
_TWIN = re.compile(rf"^(?P<ind>[ \t]*)if \({re.escape(_TOTAL_THREADS)} < \d+ull\) \{{  {_SMALL}\n", re.M)


def parallel_small_grids(ctx: Context, code: str) -> str | None:
    """Undo serial_small_grids (taken with specialize) where a small launch still has enough work
    for its cores: the parallel loop nest alone, its serial twin and the OpenMP `if` clause gone.
    The threshold of serial_small_grids counts CUDA threads, not their work, so the search decides."""
    new = _IF_CLAUSE.sub("", code)
    while m := _TWIN.search(new):
        serial_end = C.matching_brace(new, m.end() - len(_SMALL) - 4)
        else_open = new.find("{", serial_end + 1)
        if not re.fullmatch(r"\s*else\s*", new[serial_end + 1:else_open]):
            return None
        else_close = C.matching_brace(new, else_open)
        parallel = new[else_open + 1:else_close].rstrip().lstrip("\n")
        lines = [line[4:] if line.strip() and line.startswith(m["ind"] + "    ") else line for line in parallel.split("\n")]
        new = new[:m.start()] + "\n".join(lines) + new[else_close + 1:]
    return new if new != code else None


def _for_statement_end(text: str, pos: int) -> int | None:
    """End offset of the `for` statement (loops nested without braces included) starting at pos."""
    m = re.match(r"\s*for\s*\(", text[pos:])
    if not m:
        return None
    depth, i = 1, pos + m.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    rest = text[i:]
    stripped = rest.lstrip()
    j = i + len(rest) - len(stripped)
    while stripped.startswith("#pragma"):  # a pragma between nested loops
        nl = text.find("\n", j)
        stripped = text[nl + 1:].lstrip()
        j = nl + 1 + len(text[nl + 1:]) - len(stripped)
    if stripped.startswith("{"):
        return C.matching_brace(text, j) + 1
    if stripped.startswith("for"):
        return _for_statement_end(text, j)
    end = C.statement_end(text[j:])
    return None if end is None else j + end + 1


def _threads(launch) -> int:
    (gx, gy, gz), (bx, by, bz) = launch.dims()
    return gx * gy * gz * bx * by * bz


SERIAL_SMALL_GRIDS = Transform("serial_small_grids", "small launches run on the calling thread (OpenMP if clause)",
                               serial_small_grids)
SERIAL_LAUNCHES = Transform("serial_launches", "the task's larger launches run on the calling thread too (where the second "
                            "core does not pay for waking it)", serial_launches)
PARALLEL_SMALL_GRIDS = Transform("parallel_small_grids", "small launches parallel again (their serial twin from specialize "
                                 "gone: enough work per thread for the cores)", parallel_small_grids)
