#!/usr/bin/env python3
"""Speed benchmark of the optimizer (issue 8): optimized output vs the faithful lowering and vs
the task's timeable reference (HPCTransEval: TVM's C reference, built -O3 -march=native -fopenmp),
with 1 thread and all threads, medians of interleaved rounds measured in the same run
(tools.verify.profile: candidate = optimized, baseline = faithful, plus the reference).

    .venv/bin/python scripts/bench_speed.py --corpus --hte --per-category 3 [--only-sync] [--json out.json]
    .venv/bin/python scripts/bench_speed.py --hte --per-category 0 --applies memo_calls   # where one step applies

Prints one line per task and per-category geomeans; a task counts only where the optimized code
is correct on two fresh seeds (1 and all threads) and after timing. Speed is asserted nowhere else: these printed figures are the evidence.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandboxes import open_sandbox  # noqa: E402
from tools.cuda import CudaParseError, LoweringError, lower_task  # noqa: E402
from tools.optimize import TRANSFORMS, Budget, search  # noqa: E402
from tools.optimize.base import Context, apply_or_none  # noqa: E402
from tools.spec import load_task  # noqa: E402
from tools.verify import VerifyError, check, profile  # noqa: E402

FRESH_SEEDS = [90001, 90002]  # not among the seeds the search checks with
SYNC = re.compile(r"__syncthreads|__syncwarp|__shfl|__ballot_sync|__any_sync|__all_sync")


def corpus_tasks(only_sync: bool, limit: int | None, names: list[str] | None = None) -> list:
    tasks = []
    for path in sorted((ROOT / "tests" / "kernels").glob("*/task.json")):
        if names and path.parent.name not in names:
            continue
        task = load_task(path)
        sync = bool(SYNC.search(task.source()))
        if only_sync and not sync:
            continue
        tasks.append(("corpus", ("barrier/shuffle" if sync else "no barrier"), task))
    return tasks[:limit] if limit else tasks


def hte_tasks(per_category: int | None, workdir: Path, names: list[str] | None = None) -> list:
    """The shipped HPCTransEval set: per_category tasks of each category spread over its operators
    (every task when None), or the tasks named."""
    from bench.evaluate import resolve

    found = resolve(ROOT / "bench" / "data", workdir, per_category=None if names else per_category)
    return [("hpctranseval", t.task.category, t.task) for t in found.tasks if not names or t.task.name in names]


def measure(task, sandbox, threads_all: int, budget: Budget, timing_s: float) -> dict:
    row: dict = {"name": task.name}
    started = time.monotonic()
    try:
        faithful = lower_task(task)
    except (LoweringError, CudaParseError) as exc:
        return {**row, "status": "unsupported", "detail": str(exc)[:200]}
    result = search(task, faithful, sandbox, budget=budget, threads=threads_all)
    row["applied"] = result.applied
    fresh = check(task, result.code, sandbox, seeds=FRESH_SEEDS, threads=sorted({1, threads_all}))
    if not fresh.correct:  # seeds the search never saw
        return {**row, "status": "incorrect on fresh seeds", "detail": fresh.summary()[:200]}
    for label, threads in (("1t", 1), ("nt", threads_all)):
        try:
            rep = profile(task, result.code, sandbox, baseline_cpp=faithful, threads=threads, min_time_s=timing_s, perf=False)
        except VerifyError as exc:
            return {**row, "status": "error", "detail": str(exc)[:200]}
        if rep.status != "correct" or not rep.correct_after_timing:
            return {**row, "status": rep.status if rep.status != "correct" else "incorrect"}
        row[f"vs_faithful_{label}"] = rep.speedup_vs_baseline
        row[f"vs_reference_{label}"] = rep.speedup_vs_reference
        if rep.reference and rep.baseline:
            row[f"faithful_vs_reference_{label}"] = rep.reference.median_s / rep.baseline.median_s
        if any(note.startswith("machine busy") for note in rep.notes):
            row.setdefault("busy", []).append(label)  # timed with passive OpenMP threads: a tiny kernel's figure suffers
    row["status"] = "correct"
    row["seconds"] = round(time.monotonic() - started, 1)
    return row


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def fmt(v: float | None) -> str:
    return f"{v:6.2f}x" if v else "   -   "


def summarize(rows: list[dict]) -> list[str]:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r["set"], r["category"])].append(r)
        groups[(r["set"], "ALL")].append(r)
    keys = ["vs_faithful_1t", "vs_faithful_nt", "vs_reference_1t", "vs_reference_nt", "faithful_vs_reference_nt"]
    out = [f"{'set':13} {'category':16} {'ok/n':>6} " + " ".join(f"{k:>24}" for k in keys) + "   faster than ref (nt)"]
    for (bench, cat), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] == "ALL", kv[0][1])):
        ok = [r for r in members if r["status"] == "correct"]
        cells = " ".join(f"{fmt(geomean([r.get(k) for r in ok])):>24}" for k in keys)
        timed = [r for r in ok if r.get("vs_reference_nt")]
        share = f"{sum(r['vs_reference_nt'] > 1 for r in timed)}/{len(timed)}" if timed else "-"
        out.append(f"{bench:13} {cat:16} {len(ok):>3}/{len(members):<3}{cells}   {share}")
    return out


def applies(task, transform: str) -> bool:
    """Does the named transformation apply to the task's lowering as the search reaches it: after
    sync_together and specialize where those come first in the search's order and apply?"""
    order = [t.name for t in TRANSFORMS]
    ctx = Context(task=task)
    try:
        code = lower_task(task)
        for earlier in ("sync_together", "specialize"):
            if order.index(earlier) < order.index(transform):
                code = apply_or_none(TRANSFORMS[order.index(earlier)], ctx, code) or code
        return apply_or_none(TRANSFORMS[order.index(transform)], ctx, code) is not None
    except (CudaParseError, LoweringError, ValueError, IndexError):
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", action="store_true", help="the compiler corpus tests/kernels")
    ap.add_argument("--hte", action="store_true", help="the shipped HPCTransEval set bench/data")
    ap.add_argument("--only-sync", action="store_true", help="corpus: only kernels with barriers or warp intrinsics")
    ap.add_argument("--limit", type=int, default=None, help="corpus: at most N kernels")
    ap.add_argument("--names", nargs="*", default=None, help="only these kernels or tasks (by name)")
    ap.add_argument("--per-category", type=int, default=3, help="HPCTransEval: N tasks of each category, spread over its operators (0: all)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="'all threads' (default: all cores)")
    ap.add_argument("--timing-s", type=float, default=0.3, help="measured time per version and thread count")
    ap.add_argument("--max-variants", type=int, default=Budget().max_variants)
    ap.add_argument("--applies", default=None, metavar="TRANSFORM",
                    help="only the tasks where this transformation applies (e.g. memo_calls)")
    ap.add_argument("--json", type=Path, default=None, help="write the rows here")
    ap.add_argument("--summarize", type=Path, nargs="*", default=None, help="only print the summary of earlier --json files")
    args = ap.parse_args()
    if args.summarize:
        rows = [r for path in args.summarize for r in json.loads(path.read_text())]
        print("\n".join(summarize(rows)))
        return 0
    if not (args.corpus or args.hte):
        ap.error("choose --corpus and/or --hte")
    if args.applies and args.applies not in {t.name for t in TRANSFORMS}:
        ap.error(f"no transformation {args.applies!r}; there are: {', '.join(t.name for t in TRANSFORMS)}")
    print("command:", " ".join([Path(sys.executable).name, *sys.argv]), flush=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; all threads = {args.threads}", flush=True)
    budget = Budget(max_variants=args.max_variants, seeds=2, timing_s=args.timing_s)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-speed-") as tmp:
        tasks = (corpus_tasks(args.only_sync, args.limit, args.names) if args.corpus else []) + \
                (hte_tasks(args.per_category or None, Path(tmp), args.names) if args.hte else [])
        if args.applies:
            tasks = [(bench, category, task) for bench, category, task in tasks if applies(task, args.applies)]
        with open_sandbox("local") as box:
            for bench, category, task in tasks:
                row = {"set": bench, "category": category, **measure(task, box, args.threads, budget, args.timing_s)}
                rows.append(row)
                print(f"{bench:13} {category:16} {task.name:28} {row['status']:12} "
                      f"faithful 1t {fmt(row.get('vs_faithful_1t'))} nt {fmt(row.get('vs_faithful_nt'))}  "
                      f"ref 1t {fmt(row.get('vs_reference_1t'))} nt {fmt(row.get('vs_reference_nt'))}  "
                      f"{','.join(row.get('applied', [])) or '-'} {row.get('detail', '')}"
                      f"{'  (machine busy: ' + ','.join(row['busy']) + ')' if row.get('busy') else ''}", flush=True)
                if args.json:
                    args.json.write_text(json.dumps(rows, indent=1))
    print("\nper category: geomean speedups of the optimized code (correct tasks only; ratios = other time / optimized time)")
    for line in summarize(rows):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
