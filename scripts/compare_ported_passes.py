"""A pass ported from text to the IR applies where its text version did, in the search's order too.

    python scripts/compare_ported_passes.py PASS [PASS ...] [--against REV] [--hte]

For each snapshot kernel (scripts/snapshot_passes.py's tasks), the lowering alone and the output of
each pass P that the pipeline tries before PASS (a step the search may have kept) are given to
PASS (today's, through the search's own `Code` bookkeeping: tools/optimize/base.py) and to the
text version of PASS at git revision REV (default: main); each (kernel, P, PASS) whose outputs
differ is listed, with whether the IR was stale (a text pass changed the kernel), and the exit
status is 1. scripts/snapshot_passes.py checks the passes alone; this checks them in sequence,
which the snapshot does not: an IR pass after a text pass that rewrote its kernel says
NotApplicable, where its text version may have applied.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import snapshot_passes as S  # noqa: E402
from tools.cuda import LoweringError, lower_task  # noqa: E402
from tools.optimize.base import Code, Context, NotApplicable, Transform  # noqa: E402
from tools.optimize.pipeline import TRANSFORMS  # noqa: E402
from tools.optimize.search import _apply  # noqa: E402
from tools.spec import load_task  # noqa: E402


def old_transform(name: str, rev: str) -> tuple[Transform, types.ModuleType]:
    """Pass `name` as module tools/optimize/passes/<module>.py defined it at `rev` (its imports of
    the package made absolute, so that it runs on today's analysis and base)."""
    here = next(t for t in TRANSFORMS if t.name == name)
    path = (here.rewrite or here.apply).__module__.replace(".", "/") + ".py"
    text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    text = (text.replace("from ..", "from tools.optimize.").replace("from .", "from tools.optimize.passes.")
            .replace("Path(__file__).parent", f"Path({str(ROOT / 'tools' / 'optimize' / 'passes')!r})"))
    module = types.ModuleType(f"old_{name}")
    module.__file__ = str(ROOT / path)
    exec(compile(text, f"{rev}:{path}", "exec"), module.__dict__)
    return next(v for v in module.__dict__.values() if isinstance(v, Transform) and v.name == name), module


def _out(t: Transform, ctx, code):
    try:
        return t.apply(ctx, code)
    except (NotApplicable, ValueError, IndexError):
        return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("passes", nargs="+")
    ap.add_argument("--against", default="main", help="the git revision of the text versions")
    ap.add_argument("--hte", action="store_true", help="the shipped HPCTransEval tasks too")
    args = ap.parse_args(argv)
    names = [t.name for t in TRANSFORMS]
    ported = {name: next(t for t in TRANSFORMS if t.name == name) for name in args.passes}
    old = {name: old_transform(name, args.against) for name in args.passes}
    same, lines = 0, []
    with tempfile.TemporaryDirectory(prefix="compare-") as tmp:
        for kernel, path in S.task_sets(args.hte, Path(tmp)).items():
            task = load_task(path)
            try:
                lowered = lower_task(task)
            except LoweringError:
                continue
            ctx = Context(task)
            with S.pinned_machine():
                for module in (m for _, m in old.values()):  # the old modules' machine queries pinned too
                    for query, value in S.PINNED_MACHINE.items():
                        if hasattr(module, query):
                            setattr(module, query, value)
                code = Code.of(task, lowered)
                for name, new_pass in ported.items():
                    for before in [None, *TRANSFORMS[:names.index(name)]]:
                        try:
                            start = code if before is None else _apply(before, ctx, code)
                        except NotApplicable:
                            start = None
                        if start is None:
                            continue
                        start = start[0] if isinstance(start, list) else start
                        a, b = _out(old[name][0], ctx, str(start)), _out(new_pass, ctx, start)
                        if (a is None) != (b is None) or (a is not None and str(a) != str(b)):
                            lines.append(f"{kernel}: {before.name if before else 'the lowering'} then {name}: "
                                         f"{'applied' if a is not None else 'did not apply'} at {args.against}, "
                                         f"{'applies' if b is not None else 'does not apply'} now"
                                         + (f" (IR stale: changed by {', '.join(sorted(set(start.changed_by.values())))})"
                                            if start.changed_by else "")
                                         + ("" if (a is None) != (b is None) else " (other output)"))
                        else:
                            same += 1
    for line in lines:
        print(line)
    print(f"{same} (kernel, earlier step, pass) the same, {len(lines)} different")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
