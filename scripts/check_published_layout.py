"""The shipped records rewritten in the published HPCTransEval layout, through the eval path.

Every record of bench/data is rewritten as the published files have it (bench/as_published.py:
no launches, scratch buffers, dtypes or ranges; bare C `default_function_kernel` with its inputs
`ph`, `ph_1`, ...; TVMScript `main`; CUDA kernels `default_function_kernel_k` defined out of
launch order, each naming its parameters itself), written as IndependentOperator.json,
ComputationGraph.json and ModelBuildingBlock.json, and read back as `agent eval` reads them:
bench.convert (published.repair and the reference repairs), launch inference as the agent's
toolbox does it (scratch buffers, padding), the deterministic lowering, and verification against
the C reference in a local sandbox (1 seed, 2 threads). Counts per category:
correct / incorrect / not lowered / not inferred / invalid (the converter refused the record).

    nice -n 10 .venv/bin/python scripts/check_published_layout.py --categories graph block --limit 20
    nice -n 10 .venv/bin/python scripts/check_published_layout.py --names keep   # buffers keep their names
    ... --write DIR    # also keep the three published-layout files (for `agent eval DIR/X.json`)
    ... --files ../shared/hpctranseval-dev/*.json   # the published files themselves, same path
    ... --search       # where the inferred launches verify incorrect, verify inference's other
                       # answers in turn (as the agent's loop does): "correct" then names the one
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.as_published import as_published, file_of  # noqa: E402
from bench.convert import convert_records  # noqa: E402
from bench.format import load_records  # noqa: E402
from tools.cuda import CudaParseError, parse_cuda  # noqa: E402
from tools.spec import load_task  # noqa: E402

CATEGORIES = ("elementwise", "reduction", "layout", "logic", "compute", "graph", "block")


def evaluate(path: Path, sandbox, verify: bool, search: bool = False) -> tuple[str, str]:
    """(outcome, detail) of one converted task; with `search`, inference's other answers are
    verified in turn where the first is incorrect."""
    from agent.toolbox import answered_task
    from tools.cuda.launch_inference import MAX_ALTERNATIVES, infer

    task = load_task(path)
    try:
        module = parse_cuda(task.source(), str(task.source_path()))
    except CudaParseError as exc:
        return "not parsed", str(exc)[:200]
    found = infer(task, module, alternatives=MAX_ALTERNATIVES if search else 0)
    candidate, how = answered_task(task, found)
    if not candidate.launches:
        return "not inferred", how[:300]
    outcome, detail = _verify(candidate, how, sandbox, verify)
    if outcome != "incorrect" or not found.alternatives:
        return outcome, detail
    for k, alternative in enumerate(found.alternatives, 1):
        candidate, alt_how = answered_task(task, alternative)
        if _verify(candidate, alt_how, sandbox, verify)[0] == "correct":
            return "correct", f"alternative {k} of {len(found.alternatives)}: {alt_how.split(' | ')[0]}"[:300]
    return outcome, f"{len(found.alternatives)} alternative(s) also incorrect | {detail}"[:700]


def _verify(task, how: str, sandbox, verify: bool) -> tuple[str, str]:
    from tools.cuda import LoweringError, lower_task
    from tools.verify import VerifyError, check

    if not verify:
        return "inferred", how[:300]
    try:
        code = lower_task(task)
    except LoweringError as exc:
        return "not lowered", str(exc)[:200]
    try:
        report = check(task, code, sandbox, seeds=[1], threads=[2])
    except VerifyError as exc:
        return "not verified", str(exc)[:200]
    if report.status == "correct":
        return "correct", ""
    return "incorrect", f"{report.summary()}"[:300] + f" | {how[:400]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--categories", nargs="*", default=list(CATEGORIES))
    parser.add_argument("--limit", type=int, default=None, help="records per category (the first N)")
    parser.add_argument("--only", nargs="*", default=None, help="record names")
    parser.add_argument("--names", choices=("stem", "keep"), default="stem")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-verify", action="store_true", help="inference only")
    parser.add_argument("--search", action="store_true", help="verify inference's other answers where the first is incorrect")
    parser.add_argument("--write", type=Path, default=None, help="keep the published-layout files here")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    parser.add_argument("--files", nargs="*", type=Path, default=None,
                        help="published files to read as they are instead (e.g. ../shared/hpctranseval-dev/*.json)")
    args = parser.parse_args()

    from sandboxes import open_sandbox

    sandbox = None if args.no_verify else open_sandbox("local")
    rng = random.Random(args.seed)
    files: dict[str, list[dict]] = defaultdict(list)
    for category in args.categories if args.files is None else ():
        records = load_records(args.data / f"{category}.json")
        if args.only:
            records = [r for r in records if r.name in args.only]
        for rec in records[:args.limit]:
            files[file_of(category)].append(as_published(rec, rng, names=args.names))
    table: dict[str, Counter] = defaultdict(Counter)
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = args.write or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for path in args.files or []:
            files[path.stem] = json.loads(path.read_text())
        for stem, records in files.items():
            path = out / f"{stem}.json"
            path.write_text(json.dumps(records, indent=1))
            paths, invalid = convert_records(path, Path(tmp) / "tasks" / stem)
            for bad in invalid:
                table[bad.category or stem]["invalid"] += 1
                rows.append({"category": bad.category, "name": bad.name, "outcome": "invalid", "detail": bad.reason})
                print(f"{bad.category or stem:12s} {bad.name:40s} invalid     {bad.reason[:200]}", flush=True)
            for p in paths:
                category = json.loads(p.read_text())["category"]
                outcome, detail = evaluate(p, sandbox, not args.no_verify, args.search)
                table[category][outcome] += 1
                rows.append({"category": category, "name": p.stem, "outcome": outcome, "detail": detail})
                print(f"{category:12s} {p.stem:40s} {outcome:12s} {detail[:300]}", flush=True)
    kinds = ["correct", "incorrect", "not lowered", "not verified", "not inferred", "not parsed", "invalid", "inferred"]
    kinds = [k for k in kinds if any(c[k] for c in table.values())]
    print(f"\n{'category':12s} {'tasks':>5s} " + " ".join(f"{k:>12s}" for k in kinds))
    total = Counter()
    for category in [c for c in CATEGORIES if c in table]:
        c = table[category]
        total.update(c)
        print(f"{category:12s} {sum(c.values()):5d} " + " ".join(f"{c[k]:12d}" for k in kinds))
    print(f"{'all':12s} {sum(total.values()):5d} " + " ".join(f"{total[k]:12d}" for k in kinds))
    searched = [r for r in rows if r["outcome"] == "correct" and r["detail"].startswith("alternative ")]
    if args.search:
        print(f"correct by an alternative answer of launch inference: {len(searched)}")
    print(f"wall {time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
