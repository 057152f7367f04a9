"""The harness that runs a compiled kernel library: a C++ driver generated per task.

Why a generated C++ driver and not ctypes: the candidate must run only inside the sandbox,
and a Docker sandbox need not have Python or numpy. A small native driver runs anywhere g++
runs, keeps the timer in code the candidate cannot reach by name (the library is dlopen'ed
RTLD_LOCAL after the clock is bound, so it cannot interpose clock_gettime), measures the call
alone (no Python or ctypes overhead in the numbers, which matters for short kernels), and the
same binary calls the candidate, the C reference and the baseline the same way.

The driver reads each input/inout buffer from `INDIR/<name>.bin` (raw, native byte order),
poisons outputs before every call (NaN with a recognizable payload for floats, 0xA5 bytes for
integers), surrounds every buffer with guard zones, checks inputs unchanged after every call,
compares every later call's outputs with the first call's, and writes the first call's outputs
(plus the last call's when timing) to `OUTDIR/<name>.bin` / `<name>.last.bin`. `check` mode calls
the entry twice (fresh poison in between), `time` mode warms up and repeats until its budget.
"""

from __future__ import annotations

import math
import os
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from sandboxes import Limits, RunResult, Sandbox
from tools.spec import Task, is_float, numpy_dtype

TEMPLATE = Path(__file__).with_name("harness_template.cpp")
_ROLE = {"input": "IN", "output": "OUT", "inout": "INOUT", "scratch": "SCRATCH"}
_KIND = {"float32": "F32", "float64": "F64", "float16": "F16", "bfloat16": "BF16", "bool": "BOOL"}
# The C type a scalar is passed as (by value): half types travel as their 16 bits.
_SCALAR_C = {
    "float32": "float", "float64": "double", "float16": "uint16_t", "bfloat16": "uint16_t", "bool": "bool",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
}

# Poison bit patterns written by the driver (see harness_template.cpp: poison()).
POISON_BITS = {"float32": 0x7FC5A5A5, "float64": 0x7FF8A5A5A5A5A5A5, "float16": 0x7E5A, "bfloat16": 0x7FC5}
POISON_BYTE = 0xA5


def _scalar_literal(dtype: str, value: float | int | bool) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if dtype == "float16":
        return f"(uint16_t){int(np.array(value, dtype=np.float16).view(np.uint16))}u"
    if dtype == "bfloat16":
        from .inputs import float32_to_bfloat16_bits

        return f"(uint16_t){int(float32_to_bfloat16_bits(np.array([value], dtype=np.float32))[0])}u"
    if is_float(dtype):
        v = float(value)
        if math.isnan(v):
            return "NAN"
        if math.isinf(v):
            return "INFINITY" if v > 0 else "-INFINITY"
        return f"({_SCALAR_C[dtype]}){v!r}"
    suffix = "ULL" if dtype.startswith("uint") else "LL"
    return f"({_SCALAR_C[dtype]}){int(value)}{suffix}"


def harness_source(task: Task, call_args: Sequence[str] | None = None) -> str:
    """Driver source calling the library's entry with `call_args` (buffer/scalar names in the
    callee's parameter order; default: the candidate convention, buffers then scalars)."""
    names = list(call_args) if call_args is not None else [b.name for b in task.buffers] + [s.name for s in task.scalars]
    index = {b.name: i for i, b in enumerate(task.buffers)}
    scalars = {s.name: s for s in task.scalars}
    rows = []
    for b in task.buffers:
        kind = _KIND.get(b.dtype, "INT")
        init_zero = 1 if b.init == "zeros" else 0
        rows.append(
            f'  {{"{b.name}", {b.size}u, {b.padding}u, {numpy_dtype(b.dtype).itemsize}u, {_ROLE[b.role]}, {kind}, {init_zero}, '
            "nullptr, nullptr, nullptr, nullptr},"
        )
    params, values = [], []
    for name in names:
        if name in index:
            params.append("void*")
            values.append(f"B[{index[name]}].p")
        elif name in scalars:
            s = scalars[name]
            params.append(_SCALAR_C[s.dtype])
            values.append(_scalar_literal(s.dtype, s.value))
        else:
            raise ValueError(f"argument {name!r} is neither a buffer nor a scalar of task {task.name}")
    block = "\n".join(
        [
            f"static const double RTOL = {task.tolerance.rtol!r};",
            f"static const double ATOL = {task.tolerance.atol!r};",
            "static Buf B[] = {",
            *rows,
            "};",
            f"typedef void (*entry_t)({', '.join(params) or 'void'});",
            f"static void call(void* fn) {{ ((entry_t)fn)({', '.join(values)}); }}",
        ]
    )
    if not task.buffers:
        raise ValueError(f"task {task.name} has no buffers")
    return TEMPLATE.read_text().replace("/*@BUFFERS@*/", block)


@dataclass
class HarnessRun:
    """What one driver invocation reported."""

    result: RunResult
    done: bool = False
    runs: int = 0
    times: list[float] = field(default_factory=list)
    input_modified: list[tuple[str, int, int, int]] = field(default_factory=list)  # name, first, count, run
    out_of_bounds: list[tuple[str, str, int]] = field(default_factory=list)  # name, side, run
    run_differs: list[tuple[str, int, int, int]] = field(default_factory=list)  # name, run, first, count

    @property
    def crashed(self) -> bool:
        return not self.result.ok or not self.done


_LINE = re.compile(r"^(INPUT_MODIFIED|OUT_OF_BOUNDS|RUN_DIFFERS|TIMES|DONE)\b(.*)$")
_NUMBER = re.compile(r"[0-9.]+(?:e[-+][0-9]+)?")


def parse_harness_output(result: RunResult, libraries: int = 1) -> list[HarnessRun] | HarnessRun:
    """What the driver printed: one HarnessRun, or with several libraries one per library (each
    with its own times and run-to-run differences; the rest, the process's, shared)."""
    runs = [HarnessRun(result) for _ in range(libraries)]
    for line in result.stdout.splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        tag, rest = m[1], m[2].split()
        try:
            if libraries > 1 and tag in ("TIMES", "RUN_DIFFERS"):
                k = int(rest.pop(0) if tag == "TIMES" else rest.pop(4))
                mine = [runs[k]]
            else:
                mine = runs
            for run in mine:
                if tag == "DONE":
                    run.done, run.runs = True, int(rest[0])
                elif tag == "TIMES":
                    # A sandbox keeps the head and the tail of a long output: the line then ends where the
                    # kept head does, its last number perhaps cut short; the tail is no TIMES line.
                    whole = rest[:-1] if result.output_cut else rest
                    run.times = [float(t) for t in whole if _NUMBER.fullmatch(t)]
                elif tag == "INPUT_MODIFIED":
                    run.input_modified.append((rest[0], int(rest[1]), int(rest[2]), int(rest[3])))
                elif tag == "OUT_OF_BOUNDS":
                    run.out_of_bounds.append((rest[0], rest[1], int(rest[2])))
                else:
                    run.run_differs.append((rest[0], int(rest[1]), int(rest[2]), int(rest[3])))
        except (IndexError, ValueError):
            continue  # a line the candidate printed that merely looks like ours
    return runs if libraries > 1 else runs[0]


def machine_busy(threads: int, samples: int = 9, interval_s: float = 0.004) -> tuple[bool, float]:
    """Whether other runnable work plus our threads exceeds the cores, and the 1-minute load.
    The work is counted now where Linux tells it (runnable tasks in /proc/loadavg, less this
    process): the load average lags a minute behind, so the compiles that just finished would
    make every timing that follows them run with passive OpenMP threads. The count is the median
    of a few samples: one sample caught a compile's exiting processes often enough to time a
    12 us kernel with sleeping threads (2.7x where 16x was true, warp_vote with 2 threads)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False, 0.0
    counts = []
    for i in range(samples):
        try:
            counts.append(int(Path("/proc/loadavg").read_text().split()[3].split("/")[0]) - 1)
        except (OSError, ValueError, IndexError):
            counts = [load]
            break
        if i + 1 < samples:
            time.sleep(interval_s)
    others = statistics.median(counts)
    return others + threads > 1.5 * (os.cpu_count() or 1), load


def omp_env(threads: int, mode: str, passive: bool | None = None) -> dict[str, str]:
    """OpenMP settings for a run. Correctness runs, and timing runs on a busy machine, make idle
    threads sleep at once (passive): spinning threads on an oversubscribed machine steal the time
    slices of the working ones, which measured 30 ms per call for a 2 us kernel here."""
    env = {"OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "false"}
    if passive is None:
        passive = mode == "check" or machine_busy(threads)[0]
    if threads > 1 and passive:
        env["OMP_WAIT_POLICY"] = "passive"
    return env


def run_harness(
    sandbox: Sandbox,
    exe: str,
    lib: str,
    symbol: str,
    indir: str,
    outdir: str,
    *,
    threads: int,
    mode: str = "check",
    budget_s: float = 0.1,
    max_runs: int = 20000,
    warmups: int = 2,
    min_times: int = 3,
    timeout_s: float | None = None,
    limits: Limits | None = None,
    passive: bool | None = None,
) -> HarnessRun:
    sandbox.run(["mkdir", "-p", outdir])
    argv = [f"./{exe}", mode, f"./{lib}", symbol, indir, outdir, repr(budget_s), str(max_runs), str(warmups),
            str(min_times)]
    result = sandbox.run(argv, timeout_s=timeout_s, limits=limits, env=omp_env(threads, mode, passive))
    return parse_harness_output(result)


def time_together(
    sandbox: Sandbox,
    exe: str,
    libs: Sequence[str],
    symbol: str,
    indir: str,
    outdirs: Sequence[str],
    *,
    threads: int,
    budget_s: float = 0.1,
    max_runs: int = 20000,
    warmups: int = 2,
    passive: bool | None = None,
) -> list[HarnessRun]:
    """Time several libraries in one driver process, their calls alternating (order rotated every
    round): all of them see the same machine at the same moments, which separate processes on a
    shared machine whose speed drifts by 2x within seconds do not. One HarnessRun per library."""
    if not 1 < len(libs) <= 8 or len(outdirs) != len(libs) or any("," in p for p in [*libs, *outdirs]):
        raise ValueError("time_together: 2 to 8 libraries, one output directory each, no commas in their paths")
    sandbox.run(["mkdir", "-p", *outdirs])
    argv = [f"./{exe}", "time", ",".join(f"./{lib}" for lib in libs), symbol, indir, ",".join(outdirs), repr(budget_s),
            str(max_runs), str(warmups)]
    result = sandbox.run(argv, env=omp_env(threads, "time", passive))
    return parse_harness_output(result, libraries=len(libs))
