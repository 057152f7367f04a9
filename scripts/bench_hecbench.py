#!/usr/bin/env python3
"""Port every application of folders laid out like HeCBench's `src/` (NAME-cuda/, and NAME-omp/
where a hand-written OpenMP twin exists) as a user would, and compare speed with the twins.

    .venv/bin/python scripts/bench_hecbench.py ../shared/hecbench-dev/src [-o OUT] [--runs FILE]
        [--only NAME ...] [--jobs N] [--no-speed] [--no-tune] [--repeats 3] [--speed-budget 60] [--reuse]

Per app: kernels, build, check, the command that ran, port time (not counting the app's own
runs), and the cause of a failure. `agent port NAME-cuda -o OUT/NAME` runs with nothing else,
except for the apps listed in the runs file (default bench/hecbench_runs.tsv: name, command),
whose own run takes more than 5 minutes on 2 cores: those get `--run` with smaller arguments of
the same command, and are listed as such.

Speed: for each app whose port passed and whose twin builds with `g++ -O3 -march=native
-fopenmp` (the twin's sources and -D/-I flags read from its Makefile) and passes its own check,
the port's run time over the twin's with the same command, with 1 and 2 OpenMP threads
(medians of --repeats runs, the two timed alternately; a pair past 30 s is timed once; a twin
run past 20 times the port's, or 60 s, is stopped there, its ratio a lower bound), and the
geomean. A ratio above 1 means the port is faster. Results are appended to docs/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.project.buildsys import read_build_system  # noqa: E402
from tools.project.check import failure_line  # noqa: E402

RUNS_FILE = ROOT / "bench" / "hecbench_runs.tsv"
RUN_TIMEOUT_S = 600
TWIN_LIMIT = 20  # a twin's run is stopped past this many times the port's (or 60 s): its ratio is then a lower bound
SINGLE_SAMPLE_S = 30.0  # a pair of runs past this is timed once (a twin may take minutes where the port takes seconds)


@dataclass
class AppRow:
    name: str
    kernels: int = 0
    build: bool = False
    check: bool = False
    command: str = ""
    port_s: float = 0.0
    run_s: float = 0.0
    cause: str = ""
    smaller: bool = False
    speed: dict[int, float] = field(default_factory=dict)  # threads -> twin time / port time
    twin: str = ""  # why there is no speed figure
    single_sample: bool = False  # some run took past SINGLE_SAMPLE_S: timed once, not a median
    twin_stopped: bool = False  # a twin's run was stopped at its limit: the ratio is a lower bound
    timings_differ: str = ""  # the twin reports other timings than the port: it may not do the same work


def read_runs(path: Path) -> dict[str, list[str]]:
    runs: dict[str, list[str]] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, _, command = line.partition("\t")
                runs.setdefault(name.strip(), []).append(command.strip())
    return runs


def port_app(app: Path, out: Path, runs: list[str] | None, timeout_s: float, tune: bool = True) -> AppRow:
    name = app.name.removesuffix("-cuda")
    row = AppRow(name, smaller=bool(runs))
    cmd = [sys.executable, "-m", "agent", "port", str(app), "-o", str(out), *([] if tune else ["--no-tune"])]
    for run in runs or []:
        cmd += ["--run", run]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        row.cause, row.port_s = f"the port ran past {timeout_s:.0f}s", time.monotonic() - started
        return row
    wall = time.monotonic() - started
    out.mkdir(parents=True, exist_ok=True)
    (out / "port_wall_s.txt").write_text(f"{wall:.1f}\n")
    return read_row(row, out, f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}")


def read_row(row: AppRow, out: Path, no_report: str = "") -> AppRow:
    """The row of an app from its port's report (OUT/NAME/port_report.json)."""
    try:
        report = json.loads((out / "port_report.json").read_text())
        wall = float((out / "port_wall_s.txt").read_text())
    except (OSError, ValueError):
        row.cause = f"no report ({no_report or 'not ported'})"
        return row
    row.kernels = len(report["kernels"])
    row.build = report["build_ok"]
    row.check = report["check"]["passed"]
    row.command = report["check"]["command"] or ""
    passed = [r["command"] for r in report["check"].get("runs", []) if r["passed"]]
    if row.check and passed and " && ".join(passed) != row.command:  # the check's own smaller runs
        row.command, row.smaller = " && ".join(passed), True
    row.run_s = sum(r["seconds"] for r in report["check"].get("runs", []))
    row.port_s = max(0.0, wall - report.get("app_runs_s", 0.0))
    if not row.check:
        errors = report.get("build_errors") or []
        row.cause = (errors[0] if errors and not row.build else report["check"]["detail"]).replace("\n", " ")[:240]
        bad = [k for k in report["kernels"] if k["status"] == "unsupported"]
        if bad and bad[0]["unsupported"]:
            row.cause += f" | {bad[0]['name']}: {bad[0]['unsupported'][0][:160]}"
    return row


def build_twin(twin: Path, out: Path) -> tuple[Path | None, str]:
    """The twin built with g++ from the sources and preprocessor flags its Makefile compiles."""
    build = read_build_system(twin)
    if not build.targets:
        return None, "its Makefile names no executable we can read"
    target = build.targets[0]
    out.mkdir(parents=True, exist_ok=True)
    binary = out / "twin"
    flags: list[str] = []
    for unit in target.units:
        i = 0
        while i < len(unit.flags):
            f = unit.flags[i]
            if f in ("-I", "-include") and i + 1 < len(unit.flags):
                flags += [f, str(twin / unit.flags[i + 1]) if f == "-I" else unit.flags[i + 1]]
                i += 1
            elif f.startswith(("-D", "-U")):
                flags.append(f)
            i += 1
    flags = list(dict.fromkeys(flags))
    cmd = ["g++", "-O3", "-march=native", "-fopenmp", "-std=c++17", *flags, "-I", str(twin),
           *[str(twin / u.source) for u in target.units], "-o", str(binary), *[f"-l{lib}" for lib in target.libraries]]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=twin, timeout=600)
    if proc.returncode != 0:
        first = next((l for l in proc.stderr.splitlines() if "error" in l), proc.stderr.strip()[:200])
        return None, f"does not build with g++: {first[:200]}"
    return binary, ""


def timed(command: str, binary: Path, cwd: Path, threads: int, timeout_s: float = RUN_TIMEOUT_S) -> tuple[float, str, int | None]:
    """Wall time of `command` with its program replaced by `binary`, run in `cwd`; past
    `timeout_s` the run is stopped and its time is that limit, with no exit status (None)."""
    words = shlex.split(command.split("&&")[-1])
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OMP_PROC_BIND": "false"}
    started = time.monotonic()
    try:
        proc = subprocess.run([str(binary), *words[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return timeout_s, "", None
    return time.monotonic() - started, proc.stdout, proc.returncode


def compare_speed(row: AppRow, app: Path, twin: Path, out: Path, runs: list[str] | None, repeats: int) -> None:
    binary, why = build_twin(twin, out / "twin")
    if binary is None:
        row.twin = why
        return
    commands = runs or [c.strip() for c in row.command.split(" && ") if c.strip()]
    build = read_build_system(app)
    port_dir = out / "src" / build.check_dir
    twin_dir = twin / read_build_system(twin).check_dir
    # The port was built and checked in a sandbox; build it again here, as a user would.
    made = subprocess.run(["make", "-f", "Makefile.cpu", "-j2"], cwd=out / "src", capture_output=True, text=True)
    program = (out / "src" / build.targets[0].name) if build.targets else None
    if made.returncode != 0 or program is None or not program.is_file():
        row.twin = f"the port's Makefile.cpu did not build here: {made.stderr.strip()[-200:]}"
        return
    for threads in (1, 2):
        port_total = twin_total = 0.0
        for command in commands:
            port_times, twin_times = [], []
            for _ in range(repeats):
                t, port_out, code = timed(command, program, port_dir, threads)
                if code != 0:  # checked in the sandbox, yet it fails or runs too long here: no time to compare
                    ended = f"ran past {RUN_TIMEOUT_S:g} s" if code is None else f"exits {code}"
                    row.twin = f"the port's run of `{command}` {ended} here, outside the sandbox: not timed"
                    return
                port_times.append(t)
                # a twin far slower than the port is stopped: its time is then a lower bound
                t, stdout, code = timed(command, binary, twin_dir, threads, max(60.0, TWIN_LIMIT * port_times[-1]))
                if code is None:
                    row.twin_stopped = True
                elif code != 0 or failure_line(stdout) is not None:
                    row.twin = f"the twin fails its own check with g++ (`{command}`, exit {code})"
                    return
                elif (counts := (timing_lines(port_out), timing_lines(stdout)))[0] != counts[1]:
                    row.timings_differ = (f"the twin reports {counts[1]} timings, the port {counts[0]} "
                                          f"(`{command}`): they may not do the same work")
                twin_times.append(t)
                if max(port_times[-1], t) > SINGLE_SAMPLE_S:  # noise is small against such a run
                    row.single_sample = True
                    break
            port_total += statistics.median(port_times)
            twin_total += statistics.median(twin_times)
        row.speed[threads] = twin_total / port_total if port_total else float("nan")


def timing_lines(output: str) -> int:
    """Lines of a program's output that report a time (`Average execution time: 3.2 (us)`)."""
    return sum(1 for line in output.splitlines() if re.search(r"\btime\b", line, re.I) and re.search(r"\d", line))


def geomean(values: list[float]) -> float:
    good = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, good)) / len(good)) if good else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+", type=Path, help="folders of NAME-cuda (and NAME-omp) applications")
    parser.add_argument("-o", "--out", type=Path, default=Path("bench-hecbench-out"))
    parser.add_argument("--runs", type=Path, default=RUNS_FILE, help="smaller runs: name TAB command per line")
    parser.add_argument("--only", nargs="*", default=None, help="these apps only (names without -cuda)")
    parser.add_argument("--jobs", type=int, default=1, help="ports at once (speed is timed alone afterwards)")
    parser.add_argument("--no-speed", action="store_true", help="port and check only")
    parser.add_argument("--no-tune", action="store_true", help="ports without tuning (a faster sweep of build and check)")
    parser.add_argument("--reuse", action="store_true", help="apps already ported into OUT are read, not ported again "
                                                              "(a speed pass after a sweep)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--speed-budget", type=float, default=60,
                        help="time only apps whose checked run took at most this many seconds (each is run "
                             "4 x repeats times more)")
    parser.add_argument("--port-timeout", type=float, default=1800)
    args = parser.parse_args()
    runs = read_runs(args.runs)
    apps = sorted(p for d in args.dirs for p in d.resolve().glob("*-cuda") if p.is_dir())
    if args.only is not None:
        apps = [a for a in apps if a.name.removesuffix("-cuda") in args.only]
    out = args.out.resolve()

    def port(app: Path) -> AppRow:
        name = app.name.removesuffix("-cuda")
        if args.reuse and (out / name / "port_wall_s.txt").is_file():
            row = read_row(AppRow(name, smaller=bool(runs.get(name))), out / name)
        else:
            row = port_app(app, out / name, runs.get(name), args.port_timeout, tune=not args.no_tune)
        print(f"  {name}: {'PASS' if row.check else 'FAIL'} ({row.port_s:.0f}s) {row.cause[:120]}", flush=True)
        return row

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(port, apps))
    if not args.no_speed:
        for app, row in zip(apps, rows):
            twin = app.with_name(app.name.removesuffix("-cuda") + "-omp")
            if not twin.is_dir():
                row.twin = "no -omp twin"
            elif not row.check:
                row.twin = "the port did not pass"
            elif row.run_s > args.speed_budget:
                row.twin = f"not timed: its run took {row.run_s:.0f}s (--speed-budget {args.speed_budget:g})"
            else:
                compare_speed(row, app, twin, out / row.name, runs.get(row.name), args.repeats)
    lines = ["| app | kernels | build | check | port s | run s | command | twin/port 1T | twin/port 2T | cause |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bound = ">= " if r.twin_stopped else ""
        speed = [f"{bound}{r.speed[t]:.2f}x" if t in r.speed else "-" for t in (1, 2)]
        notes = [f"timed once (runs past {SINGLE_SAMPLE_S:.0f}s)"] if r.single_sample else []
        notes += [f"the twin stopped at {TWIN_LIMIT}x the port's time (or 60 s)"] if r.twin_stopped else []
        notes += [r.timings_differ] if r.timings_differ else []
        cause = r.cause or r.twin or "; ".join(notes)
        command = r.command + (" (smaller)" if r.smaller else "")
        lines.append(f"| {r.name} | {r.kernels} | {'ok' if r.build else 'FAIL'} | {'PASS' if r.check else 'FAIL'} "
                     f"| {r.port_s:.0f} | {r.run_s:.0f} | `{command[:80]}` | {speed[0]} | {speed[1]} | {cause[:200]} |")
    passed = sum(r.check for r in rows)
    built = sum(r.build for r in rows)
    timed_rows = [r for r in rows if 2 in r.speed]
    # a ratio that is a lower bound, or between programs that report different timings, says little
    like_for_like = [r for r in timed_rows if not r.twin_stopped and not r.timings_differ]
    summary = [f"apps: {len(rows)}, built: {built}, passed their own check: {passed} ({100 * passed / max(1, len(rows)):.0f}%), "
               f"with smaller runs: {', '.join(r.name for r in rows if r.smaller) or 'none'}",
               f"port time (not counting the app's runs): median {statistics.median([r.port_s for r in rows] or [0]):.0f}s, "
               f"max {max([r.port_s for r in rows] or [0]):.0f}s",
               (f"speed over the hand-written OpenMP twins ({len(timed_rows)} apps): geomean "
                f"{geomean([r.speed[1] for r in timed_rows]):.2f}x with 1 thread, {geomean([r.speed[2] for r in timed_rows]):.2f}x "
                f"with 2 threads (above 1: the port is faster); over the {len(like_for_like)} whose twin reports the same "
                f"timings and ran to its end: {geomean([r.speed[1] for r in like_for_like]):.2f}x with 1 thread, "
                f"{geomean([r.speed[2] for r in like_for_like]):.2f}x with 2" if timed_rows else
                "speed over the hand-written OpenMP twins: not measured (--no-speed, or no twin passed)")]
    print("\n".join(lines + [""] + summary))
    results = ROOT / "docs" / "RESULTS.md"
    stamp = time.strftime("%Y-%m-%d %H:%M")
    with results.open("a") as f:
        f.write(f"\n## HeCBench ports, {stamp} (`scripts/bench_hecbench.py {' '.join(map(str, args.dirs))}`)\n\n")
        f.write("\n".join(summary) + "\n\n" + "\n".join(lines) + "\n")
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
