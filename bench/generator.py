"""Generate benchmark records: catalog operators, random graphs and model blocks.

Every record is verified before it is kept: its self-contained C reference (compiled
with gcc) and TVM's own LLVM build of the same computation agree on seeded random
inputs. The output statistics of that run are stored in the record (`check`) so that
the shipped references can be re-checked without TVM.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from . import catalog
from .check import CheckError, compare, compile_batch, make_inputs, run_reference, stats
from .format import CheckRecord, LaunchRecord, Record, ScratchRecord, save_records
from .tvmgen import LoweringError, Workload, lower, param_names, run_llvm

CPU_SCHEDULE_NOTE = (
    "C reference: TVM C target over TVM's default (unscheduled, serial) CPU loop nest; "
    "MetaSchedule CPU tuning is not applied (tune_tir segfaults in apache-tvm 0.27.0.post1, in "
    "tvm::ffi::ToJSONGraph, and the 2 shared cores of the build machine leave no tuning budget)"
)
GPU_SCHEDULE_NOTE = "CUDA: TVM dlight default GPU schedules (Matmul, GEMV, Reduction, GeneralReduction, Fallback), sm_80; not tuned"


@dataclass
class GenConfig:
    seed: int = 0
    ops: list[str] = field(default_factory=list)  # names or categories; empty: all
    per_op: int = 1  # random instances of each operator
    graphs: int = 0
    blocks: int = 0  # model building blocks (0: none; at most the number of block kinds, cycled beyond)
    bounds: catalog.Bounds = field(default_factory=catalog.Bounds)
    graph_nodes: tuple[int, int] = (3, 7)


@dataclass
class GenResult:
    records: dict[str, list[Record]]  # by category
    dropped: dict[str, str]  # name -> why
    seconds: float
    by_category_seconds: dict[str, float]

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.records.items()}


Log = Callable[[str], None]


def workloads(cfg: GenConfig) -> dict[str, list[Workload]]:
    """All workloads of a configuration, grouped by category, deterministic for the seed."""
    from . import blocks, graphs

    out: dict[str, list[Workload]] = {}
    for spec in catalog.select(cfg.ops):
        for k in range(cfg.per_op):
            rng = random.Random(f"{cfg.seed}:{spec.name}:{k}")
            out.setdefault(spec.category, []).append(catalog.instantiate(spec, rng, cfg.bounds, k))
    for g in range(cfg.graphs):
        rng = random.Random(f"{cfg.seed}:graph:{g}")
        out.setdefault("graph", []).append(graphs.random_graph(rng, cfg.bounds, g, cfg.graph_nodes))
    for b in range(cfg.blocks):
        rng = random.Random(f"{cfg.seed}:block:{b}")
        out.setdefault("block", []).append(blocks.build(b, rng))
    return out


def generate(cfg: GenConfig, log: Log = lambda _: None) -> GenResult:
    start = time.perf_counter()
    records: dict[str, list[Record]] = {}
    dropped: dict[str, str] = {}
    per_cat: dict[str, float] = {}
    for category, works in workloads(cfg).items():
        t0 = time.perf_counter()
        kept = _generate_category(works, cfg.seed, dropped, log)
        per_cat[category] = round(time.perf_counter() - t0, 2)
        log(f"{category}: {len(kept)}/{len(works)} verified in {per_cat[category]:.1f}s")
        if kept:
            records[category] = kept
    return GenResult(records, dropped, round(time.perf_counter() - start, 2), per_cat)


def _generate_category(works: list[Workload], seed: int, dropped: dict[str, str], log: Log) -> list[Record]:
    candidates: list[tuple[Record, list]] = []
    for work in works:
        try:
            rec = to_record(work, lower(work))
            inputs = _inputs(rec, seed)
            expected = run_llvm(work, inputs)
        except LoweringError as exc:
            dropped[work.name] = str(exc)
            log(f"  dropped {work.name}: {exc}")
            continue
        except Exception as exc:  # TVM's LLVM build of an exotic workload
            dropped[work.name] = f"{work.name}: TVM LLVM run failed: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"
            log(f"  dropped {dropped[work.name]}")
            continue
        candidates.append((rec, expected))
    return _verify(candidates, seed, dropped, log)


def _inputs(rec: Record, seed: int) -> list:
    return make_inputs(rec.input_shape, rec.input_dtype or [], rec.input_range or [], _record_seed(seed, rec.name or ""))


def _record_seed(seed: int, name: str) -> int:
    return (seed * 1_000_003 + sum((i + 1) * ord(c) for i, c in enumerate(name))) % (2**31)


def _verify(candidates: list[tuple[Record, list]], seed: int, dropped: dict[str, str], log: Log) -> list[Record]:
    kept = []
    with tempfile.TemporaryDirectory(prefix="bench-gen-") as tmp:
        libs = _compile(candidates, Path(tmp), dropped, log)
        for rec, expected in candidates:
            lib = libs.get(rec.name)
            if lib is None:
                continue
            inputs = _inputs(rec, seed)
            try:
                got = run_reference(lib, rec.c_function, inputs, rec.output_shape, rec.output_dtype)
                err = compare(got, expected)
            except CheckError as exc:
                dropped[rec.name] = f"C reference disagrees with TVM's LLVM build: {exc}"
                log(f"  dropped {rec.name}: {dropped[rec.name]}")
                continue
            rec.check = CheckRecord(seed=_record_seed(seed, rec.name), outputs=stats(got), max_abs_err=err)
            kept.append(rec)
    return kept


def _compile(candidates, workdir: Path, dropped: dict[str, str], log: Log) -> dict:
    """One gcc run for the batch; on failure, one per record to find the culprits."""
    sources = {rec.c_function: rec.c_code for rec, _ in candidates}
    if not sources:
        return {}
    try:
        lib = compile_batch(sources, workdir)
        return {rec.name: lib for rec, _ in candidates}
    except CheckError:
        pass
    libs = {}
    for rec, _ in candidates:
        sub = workdir / rec.name
        sub.mkdir()
        try:
            libs[rec.name] = compile_batch({rec.c_function: rec.c_code}, sub)
        except CheckError as exc:
            dropped[rec.name] = str(exc)[-500:]
            log(f"  dropped {rec.name}: C reference does not compile")
    return libs


def to_record(work: Workload, low) -> Record:
    names = param_names(work)
    inputs, outputs = names[: len(work.inputs)], names[len(work.inputs):]
    known = set(inputs) | set(outputs)
    used = {a for launch in low.launches for a in launch.args}
    scratch = [ScratchRecord(**s) for s in low.scratch if s["name"] in used and s["name"] not in known]
    unknown = used - known - {s.name for s in scratch}
    if unknown:
        raise LoweringError(f"{work.name}: kernels use buffers of unknown shape: {sorted(unknown)}")
    return Record(
        op_name=work.op_name,
        op_args=work.op_args,
        input_shape=[[int(d) for d in t.shape] for t in work.inputs],
        output_shape=[[int(d) for d in t.shape] for t in work.outputs],
        input_name=inputs,
        output_name=outputs,
        cuda_code=low.cuda_code,
        c_code=low.c_code,
        ir_code=low.ir_code,
        name=work.name,
        category=work.category,
        input_dtype=[str(t.dtype) for t in work.inputs],
        output_dtype=[str(t.dtype) for t in work.outputs],
        input_range=[list(work.input_ranges[t.name]) if t.name in work.input_ranges else None for t in work.inputs],
        launches=[LaunchRecord(**asdict(launch)) for launch in low.launches],
        scratch=scratch,
        c_function=work.name,
    )


def write(result: GenResult, cfg: GenConfig, out: Path) -> list[Path]:
    """One JSON per category plus manifest.json; returns the files written."""
    import tvm

    out.mkdir(parents=True, exist_ok=True)
    files = []
    for category, recs in sorted(result.records.items()):
        path = out / f"{category}.json"
        save_records(recs, path)
        files.append(path)
    manifest = {
        "generator": "bench.generator",
        "tvm_version": tvm.__version__,
        "seed": cfg.seed,
        "ops": cfg.ops,
        "per_op": cfg.per_op,
        "graphs": cfg.graphs,
        "blocks": cfg.blocks,
        "bounds": asdict(cfg.bounds),
        "counts": result.counts(),
        "dropped": result.dropped,
        "seconds": result.seconds,
        "seconds_by_category": result.by_category_seconds,
        "cpu_schedule": CPU_SCHEDULE_NOTE,
        "gpu_schedule": GPU_SCHEDULE_NOTE,
        "verification": "C reference (gcc -O2) vs TVM LLVM build on seeded random inputs, rtol=atol=1e-4",
    }
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    files.append(path)
    return files
