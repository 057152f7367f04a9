"""Lower every shipped HPCTransEval task with the deterministic compiler and check it.

    .venv/bin/python scripts/check_bench_lowering.py [--category C ...] [--limit N] [--only NAME ...]
        [--lower-only] [--json OUT] [--data DIR] [--seeds N] [--threads 1,2]

For each task (bench/data/*.json converted by bench.convert) the faithful lowering
(`tools.cuda.lower_task`) is checked against the task's C reference with `tools.verify.check`.
Statuses: lowered (with --lower-only), unsupported, lowering error, compile error, runtime
error, wrong, correct; each non-correct task prints the first lines of its cause. A table per
category follows; --json writes every task's status and cause.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.convert import convert_file  # noqa: E402
from sandboxes import open_sandbox  # noqa: E402
from tools.cuda import CudaParseError, LoweringError, lower_task  # noqa: E402
from tools.spec import load_task  # noqa: E402
from tools.verify import check  # noqa: E402

STATUSES = ["correct", "lowered", "unsupported", "lowering error", "compile error", "runtime error", "wrong"]
_FROM_CHECK = {"correct": "correct", "incorrect": "wrong", "compile_error": "compile error",
               "runtime_error": "runtime error", "timeout": "runtime error"}
CAUSE_LINES = 4


def _first_lines(text: str, n: int = CAUSE_LINES) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[:n])


def convert_all(data: Path, out: Path, categories: list[str] | None, limit: int | None) -> list[Path]:
    paths: list[Path] = []
    for f in sorted(data.glob("*.json")):
        if f.name == "manifest.json" or (categories and f.stem not in categories):
            continue
        paths += convert_file(f, out / f.stem, limit=limit)
    return paths


def check_one(path: Path, sandbox, *, lower_only: bool, seeds: int, threads: list[int]) -> dict:
    task = load_task(path)
    row = {"name": task.name, "category": task.category or path.parent.name, "status": "", "cause": "", "seconds": 0.0}
    start = time.perf_counter()
    try:
        code = lower_task(task)
    except LoweringError as exc:
        row["status"] = "unsupported" if exc.unsupported else "lowering error"
        row["cause"] = _first_lines(str(exc))
    except (CudaParseError, Exception) as exc:  # a bug of the compiler: report it, go on with the next task
        row["status"] = "lowering error"
        row["cause"] = _first_lines(f"{type(exc).__name__}: {exc}")
    else:
        if lower_only:
            row["status"] = "lowered"
        else:
            report = check(task, code, sandbox, seeds=[task.inputs.seed + i for i in range(seeds)], threads=threads)
            row["status"] = _FROM_CHECK[report.status]
            if report.status != "correct":
                row["cause"] = _first_lines("\n".join(str(o) for o in report.observations) or report.summary())
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def summary_table(rows: list[dict]) -> str:
    cats = sorted({r["category"] for r in rows})
    head = "| category | tasks | correct | unsupported | failures |"
    lines = [head, "|---|---:|---:|---:|---:|"]

    def line(name: str, group: list[dict]) -> str:
        c = Counter(r["status"] for r in group)
        failures = len(group) - c["correct"] - c["unsupported"] - c["lowered"]
        return f"| {name} | {len(group)} | {c['correct']} | {c['unsupported']} | {failures} |"

    lines += [line(cat, [r for r in rows if r["category"] == cat]) for cat in cats]
    lines.append(line("**all**", rows))
    return "\n".join(lines)


def status_counts(rows: list[dict]) -> str:
    c = Counter(r["status"] for r in rows)
    return ", ".join(f"{s}: {c[s]}" for s in STATUSES if c[s])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data", help="directory of benchmark JSON files")
    ap.add_argument("--category", action="append", help="only these categories (repeatable)")
    ap.add_argument("--limit", type=int, help="at most N tasks per category")
    ap.add_argument("--only", action="append", help="only tasks with these names (repeatable)")
    ap.add_argument("--lower-only", action="store_true", help="lower, do not compile or run")
    ap.add_argument("--seeds", type=int, default=1, help="seeds per task (default 1)")
    ap.add_argument("--threads", default="1,2", help="thread counts (default 1,2)")
    ap.add_argument("--json", type=Path, help="write every task's result here")
    args = ap.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",")]
    rows: list[dict] = []
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-lowering-") as tmp:
        paths = convert_all(args.data, Path(tmp), args.category, args.limit)
        if args.only:
            paths = [p for p in paths if p.stem in set(args.only)]
        if not paths:
            print("no tasks selected", file=sys.stderr)
            return 2
        with open_sandbox("local") as sandbox:
            for i, path in enumerate(paths, 1):
                row = check_one(path, sandbox, lower_only=args.lower_only, seeds=args.seeds, threads=threads)
                rows.append(row)
                print(f"[{i}/{len(paths)}] {row['category']}/{row['name']}: {row['status']} ({row['seconds']} s)", flush=True)
                if row["cause"]:
                    print("    " + row["cause"].replace("\n", "\n    "), flush=True)
    print()
    print(summary_table(rows))
    print(f"\n{status_counts(rows)}; {time.perf_counter() - began:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "table": summary_table(rows)}, indent=1) + "\n")
    return 0 if all(r["status"] in ("correct", "lowered") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
