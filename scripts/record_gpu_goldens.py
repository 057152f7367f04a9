"""Record golden outputs of CUDA tasks on a GPU: each task's original kernels run on its seeded inputs.

    python scripts/record_gpu_goldens.py PATH... [--seeds 42,43 | --count N] [--jobs N] [--out DIR] [--json FILE]

PATH is a task file (the docs/formats.md task format) or a directory searched for `*.json` task
files. For each task the `cuda` reference (tools.verify.references.CudaReference: the generated
driver built with nvcc, run once per seed) writes `<name>.golden.npz` beside the task, or into
DIR with --out. Without --seeds each task gets its verifier's default seeds (the task's seed and
the next ones: three, or --count). Later runs on machines without a GPU read these files: the
`cuda` reference falls back to them, and tests/test_gpu_goldens.py checks the compiler and the
corpus references against them.

Prints one line per task (recorded, or the cause of failure) and a count; exits 1 when any task
failed, 2 when no GPU answers here.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic import ValidationError  # noqa: E402

from sandboxes import LocalSandbox, SandboxError  # noqa: E402
from tools.spec import load_task  # noqa: E402
from tools.verify import VerifyError, generate_inputs, gpu_available  # noqa: E402
from tools.verify.check import default_seeds  # noqa: E402
from tools.verify.references import CudaReference  # noqa: E402


def task_files(paths: list[Path]) -> list[Path]:
    """Task files named or found under the directories named, each once, in a stable order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += [p for p in sorted(path.rglob("*.json")) if _is_task_file(p)]
        else:
            found.append(path)
    return list(dict.fromkeys(p.resolve() for p in found))


def _is_task_file(path: Path) -> bool:
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and "cuda" in raw and "buffers" in raw and "launches" in raw


def record_one(path: Path, seeds: list[int] | None, count: int, out: Path | None) -> dict:
    """Run one task's original on the GPU for each seed and write its golden file."""
    start = time.monotonic()
    entry = {"task": str(path), "name": path.stem, "status": "failed", "seeds": [], "seconds": 0.0}
    try:
        task = load_task(path)
        entry["name"] = task.name
        use = seeds or default_seeds(task, count)
        golden = out / f"{task.name}.golden.npz" if out else None
        with LocalSandbox() as box:
            ref = CudaReference(task, box, golden=golden)
            try:
                for seed in use:
                    ref.outputs(seed, generate_inputs(task, seed))
                    entry["seeds"].append(seed)
            finally:
                ref.close()  # records the seeds that ran, even when a later one failed
        entry.update(status="recorded", golden=str(ref.golden))
    except (VerifyError, SandboxError, ValidationError, ValueError, OSError) as exc:
        entry["error"] = f"{type(exc).__name__}: {exc}".strip()
    entry["seconds"] = round(time.monotonic() - start, 2)
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, help="task files or directories holding them")
    parser.add_argument("--seeds", help="comma-separated seeds (default: each task's verifier seeds)")
    parser.add_argument("--count", type=int, default=3, help="without --seeds: how many of each task's seeds")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="tasks built and run at once")
    parser.add_argument("--out", type=Path, help="write every golden file here instead of beside its task")
    parser.add_argument("--json", type=Path, help="write each task's outcome here")
    args = parser.parse_args(argv)

    ok, why = gpu_available()
    if not ok:
        print(f"record_gpu_goldens: {why}; goldens can only be recorded where a GPU runs the CUDA", file=sys.stderr)
        return 2
    print(f"GPU: {why}", flush=True)
    try:
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
    except ValueError:
        parser.error(f"--seeds must be comma-separated integers, not {args.seeds!r}")
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        parser.error(f"no such file or directory: {', '.join(missing)}")
    files = task_files(args.paths)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)

    results = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for entry in pool.map(record_one, files, [seeds] * len(files), [args.count] * len(files), [args.out] * len(files)):
            results.append(entry)
            detail = f"seeds {entry['seeds']}" if entry["status"] == "recorded" else entry["error"].splitlines()[0][:300]
            print(f"{entry['status']:9} {entry['name']:40} {entry['seconds']:7.1f}s  {detail}", flush=True)
            more = [line for line in entry.get("error", "").splitlines()[1:8] if line.strip()]
            if more:
                print("          " + "\n          ".join(more), flush=True)
    failed = [r for r in results if r["status"] != "recorded"]
    print(f"{len(results) - len(failed)} of {len(results)} tasks recorded, {len(failed)} failed")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
