"""Lower every shipped HPCTransEval task with the deterministic compiler and check it.

    nice -n 10 .venv/bin/python scripts/check_bench_lowering.py [--category C ...] [--limit N]
        [--only NAME ...] [--lower-only] [--json OUT] [--data DIR] [--seed S] [--seeds N] [--threads 1,2]

For each task (bench/data/*.json converted by bench.convert) the faithful lowering
(`tools.cuda.lower_task`) is checked against the task's C reference with `tools.verify.check`.
Statuses: lowered (with --lower-only), unsupported, lowering error, compile error, runtime
error, wrong, reference error (the task's reference could not be run), correct; each task
that is not correct prints the first lines of its cause. A table per category follows; --json
writes every task's status and cause. All 335 shipped tasks take about 45 minutes on 2 cores.

A failure can be the record's, not the compiler's; each failing task is diagnosed (`record`):
"output never written" when no launch passes an output buffer (the CUDA lacks its kernel), and
"scratch too small" when the task is correct once every scratch buffer is made larger (TVM's
storage rewrite merges intermediates into one allocation bigger than the recorded shape).
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
from tools.cuda import LoweringError, lower_task  # noqa: E402
from tools.spec import Task, load_task  # noqa: E402
from tools.verify import VerifyError, check  # noqa: E402

SCRATCH_GROWTH = 4  # a grown scratch buffer holds this many times the task's largest buffer
STATUSES = ["correct", "lowered", "unsupported", "lowering error", "compile error", "runtime error", "wrong",
            "reference error"]
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


def _seeds(task: Task, first: int | None, count: int) -> list[int]:
    start = task.inputs.seed if first is None else first
    return [start + i for i in range(count)]


def _verify(task: Task, code: str, sandbox, seeds: list[int], threads: list[int]) -> tuple[str, str]:
    try:
        report = check(task, code, sandbox, seeds=seeds, threads=threads)
    except VerifyError as exc:  # the task's reference could not be used: not the candidate's fault
        return "reference error", _first_lines(str(exc))
    cause = "" if report.correct else _first_lines("\n".join(str(o) for o in report.observations) or report.summary())
    return _FROM_CHECK[report.status], cause


def _unlaunched_outputs(task: Task) -> list[str]:
    passed = {str(a) for launch in task.launches for a in launch.args}
    return [b.name for b in task.buffers if b.role in ("output", "inout") and b.name not in passed]


def _with_grown_scratch(task: Task) -> Task | None:
    if not any(b.role == "scratch" for b in task.buffers):
        return None
    largest = max(b.size for b in task.buffers)
    buffers = [b.model_copy(update={"shape": [SCRATCH_GROWTH * largest]}) if b.role == "scratch" else b
               for b in task.buffers]
    grown = task.model_copy(update={"buffers": buffers})
    grown.base_dir = task.base_dir
    return grown


def diagnose(task: Task, code: str, sandbox, seeds: list[int], threads: list[int]) -> str:
    """Whether a failing task fails because of its record rather than the lowering."""
    missing = _unlaunched_outputs(task)
    if missing:
        return f"output never written: no launch passes {', '.join(missing)}"
    grown = _with_grown_scratch(task)
    if grown is not None and _verify(grown, code, sandbox, seeds, threads)[0] == "correct":
        return "scratch too small: correct with every scratch buffer grown to " \
               f"{SCRATCH_GROWTH}x the largest buffer"
    return ""


def check_one(path: Path, sandbox, *, lower_only: bool, seed: int | None, seeds: int, threads: list[int]) -> dict:
    task = load_task(path)
    row = {"name": task.name, "category": task.category or path.parent.name, "status": "", "cause": "",
           "record": "", "seconds": 0.0}
    start = time.perf_counter()
    try:
        code = lower_task(task)
    except LoweringError as exc:
        row["status"] = "unsupported" if exc.unsupported else "lowering error"
        row["cause"] = _first_lines(str(exc))
    except Exception as exc:  # CudaParseError or a bug of the compiler: report it, go on with the next task
        row["status"] = "lowering error"
        row["cause"] = _first_lines(f"{type(exc).__name__}: {exc}")
    else:
        if lower_only:
            row["status"] = "lowered"
        else:
            wanted = _seeds(task, seed, seeds)
            row["status"], row["cause"] = _verify(task, code, sandbox, wanted, threads)
            if row["status"] in ("runtime error", "wrong"):
                row["record"] = diagnose(task, code, sandbox, wanted, threads)
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def summary_table(rows: list[dict]) -> str:
    cats = sorted({r["category"] for r in rows})
    head = "| category | tasks | correct | unsupported | failures | of which the record's |"
    lines = [head, "|---|---:|---:|---:|---:|---:|"]

    def line(name: str, group: list[dict]) -> str:
        c = Counter(r["status"] for r in group)
        failures = len(group) - c["correct"] - c["unsupported"] - c["lowered"]
        bad_records = sum(1 for r in group if r.get("record"))
        return f"| {name} | {len(group)} | {c['correct']} | {c['unsupported']} | {failures} | {bad_records} |"

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
    ap.add_argument("--seed", type=int, help="first seed (default: the task's own)")
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
                row = check_one(path, sandbox, lower_only=args.lower_only, seed=args.seed, seeds=args.seeds,
                                threads=threads)
                rows.append(row)
                print(f"[{i}/{len(paths)}] {row['category']}/{row['name']}: {row['status']} ({row['seconds']} s)", flush=True)
                if row["cause"]:
                    print("    " + row["cause"].replace("\n", "\n    "), flush=True)
                if row["record"]:
                    print(f"    the record's fault: {row['record']}", flush=True)
    print()
    print(summary_table(rows))
    print(f"\n{status_counts(rows)}; {time.perf_counter() - began:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "table": summary_table(rows)}, indent=1) + "\n")
    return 0 if all(r["status"] in ("correct", "lowered") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
