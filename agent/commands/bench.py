"""`agent bench generate`: build HPCTransEval records with TVM (see bench/generator.py)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from rich.console import Console

from ..configuration import Settings, load_settings
from ..errors import UserError


def generate(out: Path, *, ops: list[str], graphs: int, seed: int, pairs: bool, console: Console,
             per_op: int = 2, blocks: int | None = None, tune_trials: int = 0, ray: str | None = None,
             settings: Settings | None = None) -> int:
    """Write one JSON per category (plus manifest.json, and pairs.jsonl with --pairs) into `out`.

    With no --ops, every catalog operator and every model building block is generated;
    with --ops, only those operators (names or categories; 'block' selects the blocks).
    With tune_trials > 0, every C reference follows the best of that many MetaSchedule
    CPU schedules measured on this machine. With a Ray cluster (`ray`, else the ray_address
    setting, else RAY_ADDRESS), each workload's TVM lowering, tuning and LLVM run is a Ray task.
    """
    try:
        import tvm  # noqa: F401
    except ImportError:
        raise UserError('TVM is not installed: pip install "apache-tvm>=0.27,<0.28"') from None
    from bench import blocks as block_kinds
    from bench import catalog
    from bench.generator import GenConfig, generate as run_generator, write
    from bench.pairs import write_pairs
    from bench.tvmgen import TuningUnavailable

    if graphs < 0:
        raise UserError(f"--graphs must be >= 0, got {graphs}")
    if tune_trials < 0:
        raise UserError(f"--tune-trials must be >= 0, got {tune_trials}")
    names = [n for n in ops if n != "block"]
    if blocks is None:
        blocks = len(block_kinds.KINDS) if not ops or "block" in ops else 0
    try:
        catalog.select(names)
    except KeyError as exc:
        raise UserError(str(exc.args[0])) from None
    only_blocks = bool(ops) and not names  # `--ops block`: no catalog operator at all
    gen = GenConfig(seed=seed, ops=names, per_op=0 if only_blocks else per_op, graphs=graphs, blocks=blocks,
                    tune_trials=tune_trials)
    tuned = f", C references tuned with {tune_trials} MetaSchedule trials each" if tune_trials else ""
    from agent.ray_runner import ray_address, workload_map

    cluster: contextlib.AbstractContextManager = contextlib.nullcontext(None)
    address = ray_address(settings or load_settings(), ray)
    if address is not None:
        cluster = workload_map(address)  # Ray missing or unreachable: one line, before any work
        tuned += f", each workload a Ray task on {address}"
    with cluster as map_on_cluster:
        console.print(f"generating into {out} (seed {seed}{tuned}) ...")
        try:
            result = run_generator(gen, log=lambda line: console.print(line, highlight=False),
                                   **({"map_workloads": map_on_cluster} if map_on_cluster else {}))
        except TuningUnavailable as exc:
            raise UserError(str(exc)) from None
    files = write(result, gen, out)
    if pairs:
        records = [r for recs in result.records.values() for r in recs]
        n = write_pairs(records, out / "pairs.jsonl")
        files.append(out / "pairs.jsonl")
        console.print(f"{n} distinct CUDA/CPU pairs")
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(result.counts().items()))
    console.print(f"[green]verified[/] {counts} in {result.seconds:.0f}s; dropped {len(result.dropped)}")
    for f in files:
        console.print(f"  wrote {f}")
    return 0 if result.records else 1
