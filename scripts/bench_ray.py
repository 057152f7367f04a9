"""Throughput of `agent eval` on this machine: locally, and on a local Ray head of 1 and 2 CPUs.

    python scripts/bench_ray.py [BENCH] [--per-category N] [--limit N] [--workers 1,2] [--no-results]

Each run is the command a user types (`agent eval BENCH -o OUT [--ray ADDRESS]`) in a fresh output
directory, one kernel per CPU (threads=1, so that Ray's CPU count is the number of kernels at a
time; the local run likewise takes --jobs 1 and 2). Prints the tasks per minute of each run and
whether its verdicts are the local run's, and appends the table to docs/RESULTS.md. Wall time
includes each run's start (Ray's connection, the driver's imports), as a user waits for it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agent.ray_runner import HeadError, local_head  # noqa: E402

AGENT = [sys.executable, "-m", "agent"]


def run_eval(bench: str, out: Path, selection: list[str], env: dict[str, str], ray: str | None = None) -> tuple[float, list]:
    """Wall seconds of one `agent eval` and its verdicts (name, status) in report order."""
    cmd = [*AGENT, "eval", bench, "-o", str(out), *selection, *(["--ray", ray] if ray else [])]
    started = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    took = time.monotonic() - started
    report = out / "report.json"
    if not report.is_file():
        raise SystemExit(f"{' '.join(cmd)} wrote no report (exit {done.returncode}):\n{done.stdout[-1500:]}{done.stderr[-1500:]}")
    return took, [(t["name"], t["status"]) for t in json.loads(report.read_text())["tasks"]]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", nargs="?", default="bench/data")
    ap.add_argument("--per-category", type=int, default=1)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--workers", default="1,2", help="CPUs of the local Ray heads, comma-separated")
    ap.add_argument("--no-results", action="store_true", help="do not append to docs/RESULTS.md")
    args = ap.parse_args()
    selection = [f"--per-category={args.per_category}"] + ([f"--limit={args.limit}"] if args.limit else [])
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(AGENT_THREADS="1", AGENT_SANDBOX="local")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-ray-", dir="/tmp") as tmp:
        tmp = Path(tmp)
        baseline = None
        for jobs in (1, 2):
            took, verdicts = run_eval(args.bench, tmp / f"local{jobs}", selection, {**env, "AGENT_JOBS": str(jobs)})
            baseline = baseline or verdicts
            rows.append((f"local, --jobs {jobs}", len(verdicts), took, verdicts == baseline))
            print(f"{rows[-1][0]:<24} {len(verdicts)} tasks in {took:6.1f} s: {60 * len(verdicts) / took:5.2f} tasks/min", flush=True)
        for cpus in (int(w) for w in args.workers.split(",")):
            head_dir = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths live under it
            try:
                with local_head(cpus, head_dir) as address:
                    took, verdicts = run_eval(args.bench, tmp / f"ray{cpus}", selection, env, ray=address)
            except HeadError as exc:
                print(f"Ray head of {cpus} CPUs: {exc}", file=sys.stderr)
                return 2
            rows.append((f"Ray, {cpus} worker CPU{'s' if cpus > 1 else ''}", len(verdicts), took, verdicts == baseline))
            print(f"{rows[-1][0]:<24} {len(verdicts)} tasks in {took:6.1f} s: {60 * len(verdicts) / took:5.2f} tasks/min"
                  f"{'' if rows[-1][3] else '  (verdicts differ from the local run)'}", flush=True)
    if not args.no_results:
        lines = [f"\n## Evaluation throughput, {datetime.now():%Y-%m-%d %H:%M} (`scripts/bench_ray.py {args.bench} "
                 f"{' '.join(selection)}`)\n", f"{os.cpu_count()} cores; threads=1 (one kernel per CPU); wall time of the whole "
                 "command, start included.\n", "| run | tasks | wall s | tasks/min | verdicts as the local run's |",
                 "|---|---:|---:|---:|---|"]
        lines += [f"| {name} | {n} | {took:.1f} | {60 * n / took:.2f} | {'yes' if same else 'no'} |" for name, n, took, same in rows]
        with open(ROOT / "docs" / "RESULTS.md", "a") as f:
            f.write("\n".join(lines) + "\n")
    return 0 if all(same for *_, same in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
