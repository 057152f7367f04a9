"""Compare tasks' own references, and the compiler's output, with outputs recorded on a GPU.

    python scripts/compare_gpu_goldens.py PATH... [--goldens DIR] [--compiler] [--jobs N] [--json FILE]

PATH is a task file or a directory searched for task files (as for scripts/record_gpu_goldens.py,
which records the goldens). For each task with a golden file (`<name>.golden.npz` beside it, or in
DIR), on every recorded seed: the task's reference (c, python, ...) against the GPU at the task's
tolerance, and with --compiler the deterministic lowering (tools.cuda.lower_task, 1 and 2 threads)
too. No GPU is needed. Prints one line per task and a count per outcome; exits 1 when any task
disagrees with its GPU outputs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from record_gpu_goldens import task_files  # noqa: E402

from sandboxes import LocalSandbox, SandboxError  # noqa: E402
from tools.cuda import LoweringError, lower_task  # noqa: E402
from tools.spec import Reference, load_task  # noqa: E402
from tools.verify import VerifyError, check, generate_inputs, open_reference  # noqa: E402
from tools.verify.check import compare_outputs  # noqa: E402
from tools.verify.references import GoldenReference, golden_path  # noqa: E402


def _worst(mismatches) -> str:
    m = max(mismatches, key=lambda m: m.max_abs_err)
    return f"{m.buffer}: {m.count} of {m.total} differ, max abs err {m.max_abs_err:.3g}, max rel err {m.max_rel_err:.3g}"


def compare_one(path: Path, goldens: Path | None, compiler: bool) -> dict:
    entry: dict = {"task": str(path), "name": path.stem}
    try:
        task = load_task(path)
        entry["name"] = task.name
        gold_file = goldens / f"{task.name}.golden.npz" if goldens else golden_path(task)
        if not gold_file.is_file():
            return entry | {"reference": "no golden", "detail": f"{gold_file} does not exist"}
        golden = GoldenReference(task, gold_file, kind="cuda")
        seeds = golden.recorded_seeds()
        entry["seeds"] = seeds
        with tempfile.TemporaryDirectory() as tmp, LocalSandbox(root=Path(tmp)) as box:
            with open_reference(task, box) as reference:
                bad = []
                for seed in seeds:
                    inputs = generate_inputs(task, seed)
                    bad += compare_outputs(task, golden.outputs(seed, inputs), reference.outputs(seed, inputs),
                                           seed=seed, threads=1, run="reference vs GPU")
            entry["reference"] = "disagrees" if bad else "agrees"
            if bad:
                entry["detail"] = _worst(bad)
            if compiler:
                against_gpu = task.model_copy(update={"reference": Reference(kind="golden", path=str(gold_file))})
                report = check(against_gpu, lower_task(task), box, seeds=seeds, threads=[1, 2])
                entry["compiler"] = "agrees" if report.status == "correct" else report.status
                if report.status != "correct":
                    entry["compiler_detail"] = report.summary()
    except LoweringError as exc:
        entry["compiler"] = f"not lowered: {exc}"
    except (VerifyError, SandboxError, ValueError, OSError) as exc:
        entry.setdefault("reference", "error")
        entry["detail"] = f"{type(exc).__name__}: {exc}"
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, help="task files or directories holding them")
    parser.add_argument("--goldens", type=Path, help="the folder holding the golden files (default: beside each task)")
    parser.add_argument("--compiler", action="store_true", help="also check the deterministic lowering against the GPU")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write each task's outcome here")
    args = parser.parse_args(argv)
    files = task_files(args.paths)
    results = []
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for entry in pool.map(compare_one, files, [args.goldens] * len(files), [args.compiler] * len(files)):
            results.append(entry)
            line = f"{entry['name']:40} reference {entry.get('reference', '-'):10}"
            if args.compiler:
                line += f" compiler {entry.get('compiler', '-'):10}"
            print(line + (f"  {entry['detail'][:300]}" if "detail" in entry else ""), flush=True)
            if "compiler_detail" in entry:
                print("    " + entry["compiler_detail"].replace("\n", "\n    ")[:1200], flush=True)
    counts = Counter(r.get("reference", "-") for r in results)
    print("reference vs GPU: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    if args.compiler:
        print("compiler vs GPU: " + ", ".join(f"{n} {k}" for k, n in sorted(Counter(r.get("compiler", "-") for r in results).items())))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    disagree = [r for r in results if r.get("reference") in ("disagrees", "error")
                or (args.compiler and r.get("compiler", "agrees") != "agrees")]
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
