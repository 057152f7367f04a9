"""How well launch inference recovers the launches of the shipped HPCTransEval records.

Every record of bench/data carries the launches TVM's host code makes. This converts the records
into tasks, removes `launches` (with --published also the `scratch` buffers, as in the published
HPCTransEval records), infers them with tools.cuda.launch_inference and counts, per category:

- exact:     the recorded launches (kernels, order, grid, block, arguments);
- different: another configuration; for a sample (--verify N per category) the deterministic
             lowering with the inferred launches is checked against the task's C reference in a
             local sandbox (correct / incorrect);
- none:      inference refused (the reasons are listed).

With --published, tasks whose intermediates had to be inferred as new scratch buffers are in the
verified sample too, whatever their launches.

    nice -n 10 .venv/bin/python scripts/check_launch_inference.py [--verify 5] [--limit N] [--published]
    nice -n 10 .venv/bin/python scripts/check_launch_inference.py --tasks tests/kernels   # hand-written kernels
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.convert import convert_file  # noqa: E402
from tools.cuda import CudaParseError, parse_cuda  # noqa: E402
from tools.cuda.launch_inference import infer  # noqa: E402
from tools.spec import load_task  # noqa: E402

CATEGORIES = ("elementwise", "reduction", "layout", "logic", "compute", "graph", "block")


def _launches(launches) -> list[dict]:
    return [launch.model_dump(mode="json") for launch in launches or []]


def classify(path: Path, published: bool) -> dict:
    """One task: its inference outcome, and the task with the inferred launches (for verifying)."""
    task = load_task(path)
    recorded = _launches(task.launches)
    stripped = {"launches": None}
    if published:
        stripped["buffers"] = [b for b in task.buffers if b.role != "scratch"]
    bare = task.model_copy(update=stripped)
    try:
        module = parse_cuda(bare.source(), str(bare.source_path()))
    except CudaParseError as exc:
        return {"name": task.name, "outcome": "none", "why": f"CUDA front end: {exc}"}
    start = time.perf_counter()
    found = infer(bare, module)
    seconds = time.perf_counter() - start
    row = {"name": task.name, "seconds": round(seconds, 3), "why": found.explanation}
    if found.launches is None:
        return {**row, "outcome": "none"}
    row["outcome"] = "exact" if _launches(found.launches) == recorded else "different"
    row["task"] = bare.model_copy(update={"launches": found.launches, "buffers": [*bare.buffers, *found.scratch]})
    row["new_scratch"] = [f"{b.name}[{b.size}]" for b in found.scratch]
    if row["outcome"] == "different":
        row["recorded"] = recorded
        row["inferred"] = _launches(found.launches)
    return row


def verify(task, sandbox) -> str:
    """correct / incorrect / the reason it could not be checked: the lowering with these launches
    against the task's C reference."""
    from tools.cuda import LoweringError, lower_task
    from tools.verify import VerifyError, check

    try:
        code = lower_task(task)
    except LoweringError as exc:
        return f"not lowered: {str(exc)[:120]}"
    try:
        report = check(task, code, sandbox, seeds=[1], threads=[2])
    except VerifyError as exc:
        return f"not verified: {str(exc)[:120]}"
    return "correct" if report.status == "correct" else f"incorrect ({report.status})"


def _task_files(args, tmp: Path):
    """(category, task paths): converted bench records, or the task files of a directory."""
    if args.tasks is None:
        for category in args.categories:
            yield category, convert_file(args.data / f"{category}.json", tmp / category, limit=args.limit)
        return
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(args.tasks.glob("*/task.json"))[:args.limit]:
        groups[json.loads(path.read_text()).get("category") or "tasks"].append(path)
    yield from sorted(groups.items())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--categories", nargs="*", default=list(CATEGORIES))
    parser.add_argument("--limit", type=int, default=None, help="records per category")
    parser.add_argument("--verify", type=int, default=5, help="different configurations verified per category")
    parser.add_argument("--published", action="store_true", help="also remove the scratch buffers")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    parser.add_argument("--tasks", type=Path, default=None, help="task files (DIR/*/task.json) instead of bench records")
    args = parser.parse_args()

    from sandboxes import open_sandbox

    sandbox = open_sandbox("local") if args.verify else None
    table, reasons, rows_out = {}, Counter(), []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for category, paths in _task_files(args, Path(tmp)):
            counts: dict[str, int] = defaultdict(int)
            for path in paths:
                row = classify(path, args.published)
                counts[row["outcome"]] += 1
                checked = row["outcome"] == "different" or row.get("new_scratch")
                if checked and counts["verified"] < args.verify:
                    counts["verified"] += 1
                    row["verified"] = verify(row["task"], sandbox)
                    counts["verified correct" if row["verified"] == "correct" else "verified not correct"] += 1
                if row["outcome"] == "none":
                    reasons[row["why"].split(":")[0][:80]] += 1
                row.pop("task", None)
                rows_out.append({"category": category, **row})
                print(f"{category:12s} {row['name']:28s} {row['outcome']:9s} {row.get('verified', '')}", flush=True)
            table[category] = (len(paths), dict(counts))
    print(f"\n{'category':12s} {'tasks':>5s} {'exact':>5s} {'diff':>5s} {'(ok)':>5s} {'(bad)':>5s} {'none':>5s}")
    total = Counter()
    for category, (n, c) in table.items():
        cells = [n, c.get("exact", 0), c.get("different", 0), c.get("verified correct", 0), c.get("verified not correct", 0), c.get("none", 0)]
        total.update(dict(zip(("n", "e", "d", "ok", "bad", "none"), cells)))
        print(f"{category:12s} " + " ".join(f"{v:5d}" for v in cells))
    print(f"{'all':12s} " + " ".join(f"{total[k]:5d}" for k in ("n", "e", "d", "ok", "bad", "none")))
    print("(ok)/(bad): verified on a sample (different launches, or new scratch buffers): correct / not against the C reference")
    infer_s = sum(r.get("seconds", 0) for r in rows_out)
    print(f"inference {infer_s:.1f} s in all; wall {time.perf_counter() - started:.0f} s (most of it the libclang front end)")
    for why, n in reasons.most_common(10):
        print(f"none: {n} x {why}")
    for r in rows_out:
        if r["outcome"] == "different":
            print(f"different: {r['name']}: {r.get('verified', 'not verified')}: {r['why'][:300]}")
    if args.json:
        args.json.write_text(json.dumps(rows_out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
