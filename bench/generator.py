"""Generate benchmark records: catalog operators, random graphs and model blocks.

Every record is verified before it is kept: its self-contained C reference (compiled
with gcc) and TVM's own LLVM build of the same computation agree on seeded random
inputs. The output statistics of that run are stored in the record (`check`) so that
the shipped references can be re-checked without TVM.

With a trial budget (`GenConfig.tune_trials`), each C reference follows the best CPU
schedule MetaSchedule finds on this machine; a tuned reference that does not verify is
replaced by the default one (the manifest says which and why).
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
from .check import CheckError, compare, compile_batch, make_inputs, run_reference, stats, time_in_child
from .format import CheckRecord, LaunchRecord, Record, ScratchRecord, save_records
from .tvmgen import CpuTuning, LoweringError, Workload, check_tuning, cpu_target, lower, param_names, run_llvm

CPU_SCHEDULE_NOTE = (
    "C reference: TVM C target over TVM's default (unscheduled, serial) CPU loop nest; "
    "MetaSchedule CPU tuning not applied (generated with --tune-trials 0)"
)
TUNED_CPU_SCHEDULE_NOTE = (
    "C reference: TVM C target over the best CPU schedule of {trials} MetaSchedule trials per workload "
    "(x86 design space, replay-trace search, measured on the generating machine: see cpu_tuning); "
    "parallel loops as OpenMP loops, vectorised loops as plain loops"
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
    tune_trials: int = 0  # MetaSchedule trials per workload for the C reference (0: untuned)


@dataclass
class GenResult:
    records: dict[str, list[Record]]  # by category
    dropped: dict[str, str]  # name -> why
    seconds: float
    by_category_seconds: dict[str, float]
    tuning: dict[str, CpuTuning] = field(default_factory=dict)  # by workload name, with tune_trials

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


# Runs `prepare_workload` over (config, category, index) triples elsewhere (`agent bench generate
# --ray`: a Ray cluster) and returns their results in order, an exception in place of a call that
# could not run. Without one, each workload is prepared in this process.
WorkloadMap = Callable[[Callable, list[tuple]], list]


@dataclass
class Prepared:
    """One workload lowered by TVM and run by TVM's LLVM build: a candidate record and its expected
    outputs, or the reason it was dropped; and the lines it logged."""

    name: str
    record: Record | None = None
    expected: list | None = None
    tuning: CpuTuning | None = None
    dropped: str | None = None
    log: list[str] = field(default_factory=list)


def generate(cfg: GenConfig, log: Log = lambda _: None, map_workloads: WorkloadMap | None = None) -> GenResult:
    """Raises TuningUnavailable (before any work) where tuning is asked for and cannot run. The
    expensive part of each workload (TVM's lowering, tuning and LLVM run) goes through
    `map_workloads`; the C references are then compiled and verified here, in one batch."""
    if cfg.tune_trials:
        check_tuning()
    start = time.perf_counter()
    records: dict[str, list[Record]] = {}
    dropped: dict[str, str] = {}
    per_cat: dict[str, float] = {}
    tuning: dict[str, CpuTuning] = {}
    for category, works in workloads(cfg).items():
        t0 = time.perf_counter()
        candidates = []
        if map_workloads is None:
            results = [_prepare(work, cfg) for work in works]
        else:
            results = map_workloads(prepare_workload, [(cfg, category, i) for i in range(len(works))])
        for work, prepared in zip(works, results):
            if isinstance(prepared, BaseException):  # the map could not run it (a cluster's worker died past its retries)
                dropped[work.name] = f"{work.name}: not prepared: {prepared}"
                log(f"  dropped {dropped[work.name]}")
                continue
            for line in prepared.log:
                log(line)
            if prepared.tuning is not None:
                tuning[prepared.name] = prepared.tuning
            if prepared.dropped is not None:
                dropped[prepared.name] = prepared.dropped
            else:
                candidates.append((prepared.record, prepared.expected))
        kept = _verify(candidates, cfg.seed, dropped, log)
        per_cat[category] = round(time.perf_counter() - t0, 2)
        log(f"{category}: {len(kept)}/{len(works)} verified in {per_cat[category]:.1f}s")
        if kept:
            records[category] = kept
    return GenResult(records, dropped, round(time.perf_counter() - start, 2), per_cat, tuning)


_WORKLOADS: dict[str, dict[str, list[Workload]]] = {}  # a worker's workloads, by configuration


def prepare_workload(cfg: GenConfig, category: str, index: int) -> Prepared:
    """The `index`-th workload of `category`, prepared on a worker: rebuilt from the configuration
    (deterministic for its seed, so that only these three values travel), once per configuration
    and worker process."""
    key = repr(cfg)
    if key not in _WORKLOADS:
        _WORKLOADS[key] = workloads(cfg)
    return _prepare(_WORKLOADS[key][category][index], cfg)


def _prepare(work: Workload, cfg: GenConfig) -> Prepared:
    """One workload lowered by TVM (tuned with cfg.tune_trials) and run by TVM's LLVM build."""
    out = Prepared(work.name)
    try:
        low, tuned = lower(work, cfg.tune_trials, cfg.seed)
        rec = to_record(work, low)
        _check_outputs_written(rec)
        expected = run_llvm(work, _inputs(rec, cfg.seed))
        if tuned is not None:
            out.tuning = tuned
            _choose_tuned(rec, low.tuned_c_codes, tuned, expected, cfg.seed)
            out.log.append(f"  tuned {work.name}: {_describe(tuned)}")
        out.record, out.expected = rec, expected
    except LoweringError as exc:
        out.dropped = str(exc)
        out.log.append(f"  dropped {work.name}: {exc}")
    except Exception as exc:  # TVM's LLVM build of an exotic workload
        out.dropped = f"{work.name}: TVM LLVM run failed: {str(exc).strip().splitlines()[-1] if str(exc).strip() else exc}"
        out.log.append(f"  dropped {out.dropped}")
    return out


def _check_outputs_written(rec: Record) -> None:
    """Every output must be an argument of some kernel launch: TVM sometimes schedules a graph
    into fewer kernels than it has outputs, and such a CUDA program never computes the rest."""
    passed = {arg for launch in rec.launches or [] for arg in launch.args}
    missing = [name for name in rec.output_name if name not in passed]
    if missing:
        raise LoweringError(f"{rec.name}: no CUDA kernel writes output(s) {', '.join(missing)}")


def _choose_tuned(rec: Record, tuned_codes: list[str], tuning: CpuTuning, expected: list, seed: int) -> None:
    """Make the fastest verified C of the tuned schedules the reference, where it beats the default.

    MetaSchedule ranks its candidates by TVM's LLVM builds; the reference is C built by gcc,
    where the order can differ and the default loop nest can win (recomputed producers,
    OpenMP overhead on tiny operators). So the C of its best few schedules is verified
    against TVM's LLVM build and timed with the default C.
    """
    if not tuned_codes:
        return
    inputs = _inputs(rec, seed)
    verified, failures = {}, []
    with tempfile.TemporaryDirectory(prefix="bench-tuned-") as tmp:
        for rank, code in enumerate(tuned_codes):
            try:
                lib = compile_batch({rec.c_function: code}, _subdir(tmp, f"check{rank}"))
                compare(run_reference(lib, rec.c_function, inputs, rec.output_shape, rec.output_dtype), expected)
                verified[rank] = code
            except CheckError as exc:
                failures.append(f"schedule {rank}: {str(exc)[-200:]}")
        if not verified:
            tuning.note = f"no tuned C reference verified, default kept: {'; '.join(failures)}"
            return
        versions = {"default": rec.c_code, **{f"tuned{rank}": code for rank, code in verified.items()}}
        try:
            times = time_in_child(versions, rec.c_function, inputs, rec.output_shape, rec.output_dtype,
                                  _subdir(tmp, "timing"))
        except CheckError as exc:
            tuning.note = f"tuned C references not timed, default kept: {str(exc)[-300:]}"
            return
    rank = min(verified, key=lambda r: times[f"tuned{r}"])
    tuning.rank = rank
    tuning.c_us, tuning.default_c_us = round(times[f"tuned{rank}"] * 1e6, 2), round(times["default"] * 1e6, 2)
    if tuning.c_us < tuning.default_c_us:
        rec.c_code = verified[rank]
        tuning.applied = True
    else:
        tuning.note = "no tuned C reference faster than the default one, default kept"


def _subdir(parent: str, name: str) -> Path:
    path = Path(parent) / name
    path.mkdir()
    return path


def _describe(tuning: CpuTuning) -> str:
    best = f"best {tuning.best_us:.1f} us (LLVM)" if tuning.best_us is not None else "no candidate ran"
    c_times = (f", C {tuning.c_us:.1f} us (schedule {tuning.rank}) vs default {tuning.default_c_us:.1f} us"
               if tuning.c_us is not None else "")
    applied = "applied" if tuning.applied else f"not applied ({tuning.note})"
    return f"{tuning.trials} trials in {tuning.seconds:.1f}s, {best}{c_times}, {applied}"


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
        "cpu_schedule": TUNED_CPU_SCHEDULE_NOTE.format(trials=cfg.tune_trials) if cfg.tune_trials else CPU_SCHEDULE_NOTE,
        "gpu_schedule": GPU_SCHEDULE_NOTE,
        "verification": "C reference (gcc -O2 -fopenmp) vs TVM LLVM build on seeded random inputs, rtol=atol=1e-4",
    }
    if cfg.tune_trials:
        manifest["cpu_tuning"] = _tuning_manifest(result, cfg)
    path = out / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    files.append(path)
    return files


def _tuning_manifest(result: GenResult, cfg: GenConfig) -> dict:
    """Trials, machine and per-workload outcome of the CPU tuning (timings vary run to run)."""
    return {
        "trials": cfg.tune_trials,
        "target": cpu_target(),
        "machine": _cpu_model(),
        "applied": sum(t.applied for t in result.tuning.values()),
        "seconds": round(sum(t.seconds for t in result.tuning.values()), 2),
        "workloads": {name: asdict(t) for name, t in sorted(result.tuning.items())},
    }


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    names = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
    return f"{names[0]} x{len(names)}" if names else "unknown"
