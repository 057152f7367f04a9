"""A per-category sample of a benchmark directory, for evaluations that must stay short.

    python -m bench.sample bench/data -n 2 -o /tmp/bench-sample
    agent eval /tmp/bench-sample -o eval-report

The sample takes every k-th record of each category file so that it spans the shapes
and operators of the category, and writes the same layout (one JSON per category).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .format import BenchFormatError, load_records, save_records


def sample(bench: Path, per_category: int, out: Path) -> dict[str, int]:
    counts = {}
    for path in sorted(bench.glob("*.json")):
        if path.name == "manifest.json":
            continue
        records = load_records(path)
        step = max(1, len(records) // per_category)
        chosen = records[::step][:per_category]
        save_records(chosen, out / path.name)
        counts[path.stem] = len(chosen)
    return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sample")
    parser.add_argument("bench", type=Path)
    parser.add_argument("-n", "--per-category", type=int, default=2)
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if not args.bench.is_dir():
        print(f"error: {args.bench}: not a benchmark directory", file=sys.stderr)
        return 1
    try:
        counts = sample(args.bench, args.per_category, args.out)
    except BenchFormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(", ".join(f"{k}: {v}" for k, v in counts.items()), f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
