"""Snapshots of the lowering and of every optimizer pass: what issue 29's rewrite must keep.

    python scripts/snapshot_passes.py [--write] [--show KERNEL [PASS]]

For each corpus kernel (tests/kernels), optimizer fixture (tests/optimize_fixtures) and shipped
HPCTransEval task (bench/data, converted), the faithful lowering (`tools.cuda.lower_task`) and
each transformation of `tools.optimize.pipeline.TRANSFORMS` applied alone to it, with what
passes read from the machine pinned (PINNED_MACHINE): a digest of each output (null where the pass does not apply; a list where it offers alternatives). The
digests are kept in tests/snapshots/passes.json. Without --write, the outputs of today's code
are compared with them: each (kernel, pass) whose output changed is listed, and the exit status
is 1. --show prints one output (the lowering, or a pass's first alternative) to read the change.
tests/test_snapshot_passes.py checks the corpus and the fixtures on every test run.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.cuda import LoweringError, lower_task  # noqa: E402
from tools.optimize.base import Context, apply_or_none  # noqa: E402
from tools.optimize.pipeline import TRANSFORMS  # noqa: E402
from tools.spec import Task, load_task  # noqa: E402

SNAPSHOT = ROOT / "tests" / "snapshots" / "passes.json"
LOWERING = "lowering"


def task_sets(include_hte: bool, scratch: Path) -> dict[str, Path]:
    """name -> task file: the corpus, the fixtures and (optionally) the shipped HPCTransEval tasks."""
    tasks = {f"corpus/{p.parent.name}": p for p in sorted((ROOT / "tests" / "kernels").glob("*/task.json"))}
    tasks |= {f"fixture/{p.parent.name}": p for p in sorted((ROOT / "tests" / "optimize_fixtures").glob("*/task.json"))}
    if include_hte:
        from bench.convert import convert_file

        for records in sorted((ROOT / "bench" / "data").glob("*.json")):
            if records.name == "manifest.json":
                continue
            for path in convert_file(records, scratch / records.stem):
                tasks[f"hte/{path.stem}"] = path
    return tasks


def _digest(output) -> str | list[str] | None:
    if output is None:
        return None
    if isinstance(output, list):
        return [hashlib.sha256(o.encode()).hexdigest()[:20] for o in output]
    return hashlib.sha256(output.encode()).hexdigest()[:20]


# What some passes read from the machine, pinned so that the snapshot is the same on every machine:
# the SIMD width, the CPU g++ -march=native resolves to, the core count.
PINNED_MACHINE = {"vector_bytes": lambda: 64, "native_cpu": lambda: ("x86-64-v4", "generic"), "cores": lambda: 2}


@contextlib.contextmanager
def pinned_machine():
    """Every tools.optimize module's binding of a machine query replaced by PINNED_MACHINE's, for the block."""
    saved = []
    for module in [m for name, m in sys.modules.items() if name.startswith("tools.optimize.")]:
        for name, value in PINNED_MACHINE.items():
            if hasattr(module, name):
                saved.append((module, name, getattr(module, name)))
                setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def outputs(task: Task) -> dict[str, object]:
    """The lowering and each pass's output on it (strings, lists of strings, None, or why it raised),
    on the pinned machine."""
    try:
        code = lower_task(task)
    except LoweringError as exc:
        return {LOWERING: f"not lowered: {str(exc).splitlines()[0]}"}
    found: dict[str, object] = {LOWERING: code}
    with pinned_machine():
        for transform in TRANSFORMS:
            try:
                found[transform.name] = apply_or_none(transform, Context(task), code)
            except Exception as exc:  # a pass that raises is a fact to keep, not a crash of the harness
                found[transform.name] = f"raised {type(exc).__name__}"
    return found


def snapshot(task: Task) -> dict[str, object]:
    """The digests of `outputs`, with the task's directory (which the lowering names in its
    comments) written as `<task>`: the same snapshot in any checkout."""
    here = str(task.source_path().parent) if task.source_path() else None

    def placed(out):
        if here is None or out is None:
            return out
        return [o.replace(here, "<task>") for o in out] if isinstance(out, list) else out.replace(here, "<task>")

    return {name: out if isinstance(out, str) and out.startswith(("raised ", "not lowered: ")) else _digest(placed(out))
            for name, out in outputs(task).items()}


def compare(old: dict, new: dict) -> list[str]:
    """Lines naming each (kernel, output) that changed, appeared or went."""
    lines = []
    for kernel in sorted(set(old) | set(new)):
        if kernel not in new:
            lines.append(f"{kernel}: no longer snapshotted")
            continue
        if kernel not in old:
            lines.append(f"{kernel}: new")
            continue
        for name in sorted(set(old[kernel]) | set(new[kernel])):
            before, after = old[kernel].get(name, "absent"), new[kernel].get(name, "absent")
            if before != after:
                what = ("now applies" if before is None else "no longer applies" if after is None else "output changed")
                lines.append(f"{kernel}: {name}: {what}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="record today's outputs as the snapshot")
    ap.add_argument("--no-hte", action="store_true", help="the corpus and the fixtures only")
    ap.add_argument("--show", nargs="+", metavar=("KERNEL", "PASS"), help="print one output, e.g. corpus/saxpy specialize")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="snapshot-") as tmp:
        tasks = task_sets(not args.no_hte, Path(tmp))
        if args.show:
            kernel, name = args.show[0], (args.show[1] if len(args.show) > 1 else LOWERING)
            if kernel not in tasks:
                print(f"no kernel {kernel} (names look like corpus/saxpy, fixture/..., hte/...)", file=sys.stderr)
                return 2
            out = outputs(load_task(tasks[kernel])).get(name, f"no pass {name}")
            print(out[0] if isinstance(out, list) else "does not apply" if out is None else out)
            return 0
        new = {kernel: snapshot(load_task(path)) for kernel, path in tasks.items()}
    if args.write:
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(json.dumps(new, indent=1, sort_keys=True) + "\n")
        applied = sum(1 for row in new.values() for name, v in row.items() if name != LOWERING and v is not None)
        print(f"wrote {SNAPSHOT.relative_to(ROOT)}: {len(new)} kernels, {len(TRANSFORMS)} passes, {applied} applications")
        return 0
    old = json.loads(SNAPSHOT.read_text())
    if args.no_hte:
        old = {k: v for k, v in old.items() if not k.startswith("hte/")}
    changes = compare(old, new)
    for line in changes:
        print(line)
    print(f"{len(new)} kernels: {len(changes)} changes against {SNAPSHOT.relative_to(ROOT)}")
    return 1 if changes else 0


if __name__ == "__main__":
    sys.exit(main())
