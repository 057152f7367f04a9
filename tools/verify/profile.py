"""profile(): honest timing of candidate, reference and baseline, plus profile observations.

Timing: the same generated driver times every library (the harness owns the clock; the call
alone is timed, outputs poisoned and inouts restored before each call outside the timed region).
Rounds are interleaved (candidate with baseline, reference, then rotated) so that machine drift
hits all of them; the candidate and the baseline share one driver process whose calls alternate
between them, since their ratio matters most; each round warms up, then repeats until its share
of `min_time_s`. Every call
is compared with the first call inside the driver, and the first and last timed calls' outputs
with the reference here: `correct_after_timing` is False when any of that fails.

Observations: g++'s vectorization report (-fopt-info-vec-optimized-missed) mapped to the
candidate's lines, the hottest source line (perf record, where perf works in the sandbox) and
perf stat software counters (task-clock, CPUs utilized, context switches, page faults).
Where perf does not work, those observations are replaced by one note saying so.
"""

from __future__ import annotations

import os
import re
from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sandboxes import Sandbox
from tools.build import DEFAULT_CXXFLAGS, BuildResult
from tools.observations import Observation
from tools.spec import Task

from .check import (
    WORK, build_candidate, build_harness, candidate_filename, compare_outputs, compile_observations, expected_outputs,
    harness_observations, harness_tampered, mismatch_observation, put_inputs, read_outputs, reference_key,
    show_candidate_as, task_dir_hidden,
)
from .harness import machine_busy, omp_env, run_harness, time_together
from .inputs import generate_inputs
from .references import Reference, VerifyError, open_reference

ROUNDS = 3


class TimingStats(BaseModel):
    median_s: float
    min_s: float
    max_s: float
    spread: float  # interquartile range / median
    runs: int

    @classmethod
    def of(cls, times: Sequence[float]) -> "TimingStats":
        arr = np.asarray(times, dtype=float)
        med = float(np.median(arr))
        q1, q3 = np.percentile(arr, [25, 75])
        return cls(median_s=med, min_s=float(arr.min()), max_s=float(arr.max()),
                   spread=float((q3 - q1) / med) if med > 0 else 0.0, runs=int(arr.size))


class ProfileReport(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    candidate: TimingStats | None = None
    reference: TimingStats | None = None
    baseline: TimingStats | None = None
    speedup_vs_reference: float | None = None
    speedup_vs_baseline: float | None = None
    threads: int
    correct_after_timing: bool = False
    reference_kind: str | None = None
    status: str = "correct"  # check-style status of the timed runs
    build: BuildResult | None = None
    observations: list[Observation] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.3g} us"


# vectorization report -----------------------------------------------------------------

_OPT = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<kind>optimized|missed): (?P<msg>.*)$")
_NOISE = ("no vectype", "unsupported data-type", "not enough data-refs")


def vectorization_observations(report: str, filename: str, limit: int = 8) -> list[Observation]:
    """One observation per loop line of the candidate: vectorized (how wide) or why not."""
    loops: dict[int, dict] = {}
    for raw in report.splitlines():
        m = _OPT.match(raw.strip())
        if not m or os.path.basename(m["file"]) != filename:
            continue
        line, msg = int(m["line"]), m["msg"].strip()
        entry = loops.setdefault(line, {"vectorized": None, "reasons": [], "loop": False})
        if m["kind"] == "optimized" and msg.startswith("loop vectorized"):
            entry["vectorized"], entry["loop"] = msg, True
        elif msg == "couldn't vectorize loop":
            entry["loop"] = True
        elif msg.startswith("not vectorized:"):
            # reasons that only restate the symptom go last
            entry["reasons"].append((any(n in msg for n in _NOISE), msg.removeprefix("not vectorized:").strip()))
    obs = []
    for line in sorted(loops):
        entry = loops[line]
        if not entry["loop"]:
            continue
        if entry["vectorized"]:
            obs.append(Observation(kind="vectorization", severity="info", file=filename, line=line, message=entry["vectorized"]))
        else:
            why = sorted(entry["reasons"])[0][1] if entry["reasons"] else "no reason given by g++"
            obs.append(Observation(kind="vectorization", severity="warning", file=filename, line=line,
                                   message=f"loop not vectorized: {why}"))
    return obs[:limit]


# perf -------------------------------------------------------------------------------------

def perf_works(sandbox: Sandbox) -> tuple[bool, str]:
    probe = sandbox.run(["perf", "stat", "-x,", "-e", "task-clock", "true"], timeout_s=30)
    if probe.ok and "task-clock" in probe.stderr:
        return True, ""
    return False, f"perf is not usable in the sandbox ({probe.tail(160) or 'exit status ' + str(probe.returncode)})"


def parse_perf_stat(text: str) -> dict[str, float]:
    """`perf stat -x,` CSV lines: value,unit,event,... -> {event: value}."""
    out = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) >= 3 and parts[2]:
            try:
                out[parts[2].split(":")[0]] = float(parts[0])
            except ValueError:
                continue
    return out


def perf_stat_observation(counters: dict[str, float], wall_s: float, threads: int, busy: bool = False) -> Observation | None:
    clock_ms = counters.get("task-clock")
    if clock_ms is None:
        return None
    used = clock_ms / 1e3 / wall_s if wall_s > 0 else 0.0
    parts = [f"task-clock {clock_ms:.1f} ms ({used:.2f} CPUs utilized with {threads} threads)"]
    for event, label in (("context-switches", "context switches"), ("cpu-migrations", "CPU migrations"), ("page-faults", "page faults")):
        if event in counters:
            parts.append(f"{int(counters[event])} {label}")
    # few CPUs used says little about the code when other work holds the cores
    severity = "warning" if threads > 1 and used < 0.5 * threads and not busy else "info"
    return Observation(kind="profile", severity=severity, message="perf stat over the timed runs: " + ", ".join(parts),
                       data={"counters": counters, "cpus_utilized": used})


_SRCLINE = re.compile(r"^\s*(?P<pct>[\d.]+)%\s+(?P<file>\S+):(?P<line>\d+)\s*$")


_LOOP = re.compile(r"^\s*(?:for|while|do)\b")


def _enclosing_loop(lines: list[str], line: int) -> int | None:
    """The innermost loop header around `line` (by braces, or a brace-less body's header)."""
    if not 0 < line <= len(lines):
        return None
    if _LOOP.match(lines[line - 1]):
        return line
    prev = line - 1
    while prev > 0 and not lines[prev - 1].strip():
        prev -= 1
    if prev > 0 and _LOOP.match(lines[prev - 1]) and not lines[prev - 1].rstrip().endswith((";", "{", "}")):
        return prev
    balance = 0
    for n in range(line - 1, 0, -1):
        text = lines[n - 1]
        balance += text.count("}") - text.count("{")
        if balance < 0:  # an unclosed '{' on line n encloses `line`
            if _LOOP.match(text):
                return n
            if text.strip() == "{" and n > 1 and _LOOP.match(lines[n - 2]):
                return n - 1
            balance = 0
    return None


def hottest_line(report: str, filename: str, source: str) -> Observation | None:
    for raw in report.splitlines():
        m = _SRCLINE.match(raw)
        if m and os.path.basename(m["file"]) == filename:
            line = int(m["line"])
            lines = source.splitlines()
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            loop = _enclosing_loop(lines, line)
            where = f" in the loop at line {loop}" if loop and loop != line else ""
            return Observation(kind="profile", severity="info", file=filename, line=line,
                               message=f"hottest candidate line{where}: {m['pct']}% of samples" + (f": `{text[:120]}`" if text else ""),
                               data={"share": float(m["pct"]) / 100, "loop_line": loop})
    return None


# timing -----------------------------------------------------------------------------------

def profile(
    task: Task,
    candidate_cpp: str,
    sandbox: Sandbox,
    *,
    baseline_cpp: str | None = None,
    threads: int | None = None,
    min_time_s: float = 0.2,
    cxxflags: Sequence[str] | None = None,
    cxx: str = "g++",
    reference: Reference | None = None,
    perf: bool = True,
    candidate_name: str | None = None,
) -> ProfileReport:
    """Time candidate, reference and baseline on the task's seed with `threads` OpenMP threads
    (default: all cores). Raises VerifyError when the reference cannot be used. `candidate_name`:
    the candidate's file as the user knows it, for the observations that name it."""
    nthreads = threads or os.cpu_count() or 1
    fname = candidate_filename(task)
    gcc = "g++" in cxx or "gcc" in cxx  # -fopt-info is g++'s
    flags = list(cxxflags or DEFAULT_CXXFLAGS) + ["-g"] + ([f"-fopt-info-vec-optimized-missed={WORK}/vec.txt"] if gcc else [])
    sandbox.run(["rm", "-f", f"{WORK}/vec.txt"])  # g++ appends to the report file
    build = build_candidate(sandbox, task, candidate_cpp, lib="libcand.so", cxx=cxx, cxxflags=flags)
    report = ProfileReport(threads=nthreads, build=build, reference_kind=task.reference.kind)
    if not build.ok:
        report.status = "compile_error"
        report.observations = compile_observations(build)
        show_candidate_as(report, task, candidate_name)
        return report
    if sandbox.exists(f"{WORK}/vec.txt"):
        report.observations += vectorization_observations(sandbox.get(f"{WORK}/vec.txt").decode(errors="replace"), fname)
    if baseline_cpp is not None:
        base_build = build_candidate(sandbox, task, baseline_cpp, lib="libbase.so", cxx=cxx, cxxflags=cxxflags, name="baseline.cpp")
        if not base_build.ok:
            raise VerifyError(f"the baseline does not compile:\n{base_build.summary(8)}")
    exe = build_harness(sandbox, task)
    ref = reference or open_reference(task, sandbox)
    try:
        with task_dir_hidden(sandbox, task):
            _timed_rounds(task, candidate_cpp, sandbox, exe, ref, report, baseline_cpp is not None, nthreads, min_time_s, perf)
    finally:
        if reference is None:
            ref.close()
    show_candidate_as(report, task, candidate_name)
    return report


def _timed_rounds(task, source, sandbox, exe, ref, report: ProfileReport, with_baseline, nthreads, min_time_s, perf) -> None:
    seed = task.inputs.seed
    inputs = generate_inputs(task, seed)
    expected = expected_outputs(task, ref, reference_key(task), seed, inputs)[0]  # often cached by the check
    report.reference_kind = ref.kind
    if ref.note:
        report.notes.append(ref.note)
    indir = f"{WORK}/p{seed}/in"
    put_inputs(sandbox, indir, inputs)
    share = min_time_s / ROUNDS
    times: dict[str, list[float]] = {"candidate": [], "reference": [], "baseline": []}
    # The candidate and the baseline run in one process, their calls alternating (time_together):
    # their ratio is what a shared machine's drift would otherwise blur most.
    players = [("candidate", "baseline")] if with_baseline else [("candidate",)]
    if ref.timeable:
        players.append(("reference",))
    else:
        report.notes.append(f"a {ref.kind} reference cannot be timed: no speedup against it")
    ok = True
    busy = machine_busy(nthreads)[0]  # decided once, so that every round runs the same way
    for r in range(ROUNDS):
        for group in players[r % len(players):] + players[: r % len(players)]:
            if group == ("reference",):
                times["reference"] += ref.time(seed, inputs, threads=nthreads, budget_s=share)
                continue
            tampered = harness_tampered(sandbox, task, exe)
            if tampered:
                report.observations.append(tampered)
                report.status = "incorrect"
                return
            who = group[r % len(group):] + group[:r % len(group)]
            libs = [f"{WORK}/{'libcand.so' if w == 'candidate' else 'libbase.so'}" for w in who]
            outdirs = [f"{WORK}/p{seed}/{w}{r}" for w in who]
            runs = []
            if len(who) > 1:
                runs = time_together(sandbox, exe, libs, task.entry_name, indir, outdirs, threads=nthreads,
                                     budget_s=share * len(who), passive=busy)
            if not runs or runs[0].crashed:  # alone, or alone again to tell which of the two failed
                runs = [run_harness(sandbox, exe, lib, task.entry_name, indir, outdir, threads=nthreads, mode="time",
                                    budget_s=share, passive=busy) for lib, outdir in zip(libs, outdirs)]
            for w, run, outdir in zip(who, runs, outdirs):
                status, obs = harness_observations(task, run, seed=seed, threads=nthreads, who=w)
                if w == "baseline":
                    if status:
                        raise VerifyError(f"the baseline failed while being timed: {'; '.join(o.message for o in obs)}")
                else:
                    report.observations += obs
                    if status:
                        report.status, ok = status, False
                        if status in ("timeout", "runtime_error", "compile_error"):
                            return
                    ok = _verify_timed(task, sandbox, outdir, expected, seed, nthreads, report) and ok
                times[w] += run.times
        if not ok:
            break  # wrong results: more rounds would only repeat the observations
    report.correct_after_timing = ok
    if busy:
        report.notes.append(machine_load_note(nthreads))
    if not ok and report.status == "correct":
        report.status = "incorrect"
    _summarize(report, times)
    if perf and ok:
        _perf_observations(task, source, sandbox, exe, indir, nthreads, min_time_s, report)


def machine_load_note(threads: int) -> str:
    """Timings taken on a busy machine are not worth much: say so (the rounds found it busy)."""
    waiting = "; OpenMP threads waited passively" if threads > 1 else ""
    return (f"machine busy while timing (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, "
            f"{threads} threads): timings are noisy{waiting}")


def _verify_timed(task, sandbox, outdir, expected, seed, nthreads, report: ProfileReport) -> bool:
    """The first and the last timed call's outputs against the reference."""
    good = True
    for suffix, label in (("", "first timed call"), (".last", "last timed call")):
        got = read_outputs(sandbox, task, outdir, suffix)
        for m in compare_outputs(task, expected, got, seed=seed, threads=nthreads, run=label):
            report.observations.append(mismatch_observation(task, m))
            good = False
    return good


def _summarize(report: ProfileReport, times: dict[str, list[float]]) -> None:
    stats = {k: TimingStats.of(v) for k, v in times.items() if v}
    report.candidate, report.reference, report.baseline = stats.get("candidate"), stats.get("reference"), stats.get("baseline")
    cand = report.candidate
    if not cand or cand.median_s <= 0:
        return
    for who, other in (("reference", report.reference), ("baseline", report.baseline)):
        if not other:
            continue
        speedup = other.median_s / cand.median_s
        setattr(report, f"speedup_vs_{who}", speedup)
        if speedup < 1:
            report.observations.append(Observation(
                kind="profile", severity="warning",
                message=f"the candidate is {1 / speedup:.2f}x SLOWER than the {who} (median {_ms(cand.median_s)} vs "
                        f"{_ms(other.median_s)}, {report.threads} threads)",
                data={"speedup": speedup, "candidate_s": cand.median_s, f"{who}_s": other.median_s}))
        else:
            report.observations.append(Observation(
                kind="profile", severity="info",
                message=f"{speedup:.2f}x faster than the {who} (median {_ms(cand.median_s)} vs {_ms(other.median_s)}, "
                        f"{report.threads} threads)", data={"speedup": speedup}))
    if cand.spread > 0.2:
        report.observations.append(Observation(kind="profile", severity="info",
                                               message=f"noisy timing: interquartile range is {cand.spread:.0%} of the median"))


def _perf_observations(task, source, sandbox, exe, indir, nthreads, min_time_s, report: ProfileReport) -> None:
    usable, why = perf_works(sandbox)
    if not usable:
        report.notes.append(why)
        return
    busy = machine_busy(nthreads)[0]
    env = omp_env(nthreads, "time", busy)
    outdir = f"{WORK}/perf"
    sandbox.run(["mkdir", "-p", outdir])
    harness = [f"./{exe}", "time", f"./{WORK}/libcand.so", task.entry_name, indir, outdir, repr(min_time_s / 2), "20000", "1"]
    stat = sandbox.run(["perf", "stat", "-x,", "-e", "task-clock,context-switches,cpu-migrations,page-faults", *harness], env=env)
    if stat.ok:
        obs = perf_stat_observation(parse_perf_stat(stat.stderr), stat.duration_s, nthreads, busy)
        if obs:
            report.observations.append(obs)
    rec = sandbox.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", f"{WORK}/perf.data", *harness], env=env)
    if not rec.ok:
        report.notes.append(f"perf record failed: {rec.tail(160)}")
        return
    rep = sandbox.run(["perf", "report", "-i", f"{WORK}/perf.data", "--stdio", "--sort", "srcline", "--no-children"], timeout_s=120)
    hot = hottest_line(rep.stdout, candidate_filename(task), source) if rep.ok else None
    if hot:
        report.observations.append(hot)
    else:
        report.notes.append("no samples attributable to a candidate line (perf report)")
