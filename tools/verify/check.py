"""check(): is a CPU candidate correct? Seeds x thread counts, every element, every output.

Guards (HONEST_TIMING.md): outputs poisoned before every call; several seeds with fresh buffers;
two calls per run (a result cached across calls shows); inputs and guard zones checked after
every call; 1 thread and several threads; the reference runs in a separate sandbox and a local
bwrap sandbox masks the task's directory while candidate code runs, so the candidate never sees
the reference's files or outputs; a reference output that is constant is pointed out (a
constant-returning candidate would pass on it).

Reference outputs are cached in memory per (task, reference files, seed) for c, python and
lowered references: the agent checks many candidates of one task.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
from collections import OrderedDict
from contextlib import contextmanager
from typing import Iterator, Literal, Protocol, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from sandboxes import Sandbox
from tools.build import DEFAULT_CXXFLAGS, BuildResult, compile_args, compile_cpp
from tools.observations import Observation
from tools.spec import Task, numpy_dtype

from .compare import Mismatch, compare_buffer, error_stats
from .harness import HarnessRun, harness_source, run_harness
from .inputs import generate_inputs, inputs_from_files
from .references import Reference, VerifyError, open_reference, output_buffers
from .runtime_headers import install_precompiled_runtime, put_runtime_headers

WORK = "verify"  # the subdirectory of the candidate's sandbox this module uses
MISSING_ENTRY = 4  # the harness's exit status when dlsym finds no entry
CheckStatus = Literal["correct", "incorrect", "compile_error", "runtime_error", "timeout"]


class VerifyReport(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    status: CheckStatus
    reference_kind: str | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatches: list[Mismatch] = Field(default_factory=list)
    build: BuildResult | None = None
    observations: list[Observation] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    threads: list[int] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    def summary(self) -> str:
        head = f"{self.status} (reference: {self.reference_kind}, seeds {self.seeds}, threads {self.threads})"
        return "\n".join([head, *(str(o) for o in self.observations[:6])])


def default_seeds(task: Task, count: int = 3) -> list[int]:
    """`count` seeds from the task's; one where every initial value comes from a data file (a
    captured launch): the others would run the same inputs again, at the same cost."""
    if inputs_from_files(task):
        count = 1
    return [task.inputs.seed + i for i in range(count)]


def default_threads(all_threads: int | None = None) -> list[int]:
    """One thread, and all cores (at least 2, so that races between threads can show)."""
    many = all_threads or os.cpu_count() or 2
    return [1, max(2, many)]


def candidate_filename(task: Task) -> str:
    """The candidate's file in the sandbox (diagnostics name it so, unless the caller's name is given)."""
    return f"{task.name}.cpp"


class _Report(Protocol):  # a VerifyReport or a ProfileReport
    observations: list[Observation]
    build: BuildResult | None


def show_candidate_as(report: _Report, task: Task, candidate_name: str | None) -> None:
    """Observations and compiler diagnostics that name the candidate's file in the sandbox name it
    as the caller does (the user's own file), not as the task's name."""
    if not candidate_name:
        return
    internal = candidate_filename(task)
    for obs in report.observations:
        if obs.file == internal:
            obs.file = candidate_name
    for diag in report.build.diagnostics if report.build else []:
        if diag.file == internal:
            diag.file = candidate_name


# Libraries built in each sandbox, by all that determines them (file name, source, compiler,
# flags), newest last: the search checks a variant (libcand.so), then times it (opt_<hash>.so),
# and the second is a copy. Reused only while the library is the one built: candidate code runs
# in the same directory and could replace it.
_BUILT: OrderedDict[tuple[int, str], tuple[str, str, BuildResult]] = OrderedDict()
_BUILT_MAX = 64


def build_candidate(
    sandbox: Sandbox, task: Task, source: str, *, lib: str, cxx: str = "g++", cxxflags: Sequence[str] | None = None,
    extra: Sequence[str] = (), name: str | None = None,
) -> BuildResult:
    """Compile C++ source to a shared library in the sandbox's WORK dir; diagnostics name the bare file."""
    fname = name or candidate_filename(task)
    flags = list(cxxflags or DEFAULT_CXXFLAGS)
    out = f"{WORK}/{lib}"
    key = (id(sandbox), hashlib.sha256("\0".join([fname, source, cxx, *flags, "", *extra]).encode()).hexdigest())
    reused = _reuse_build(sandbox, key, out)
    if reused is not None:
        return reused
    includes = put_runtime_headers(sandbox, f"{WORK}/include") if not sandbox.exists(f"{WORK}/include") else [f"{WORK}/include"]
    if includes:
        install_precompiled_runtime(sandbox, includes[0], cxx=cxx, args=compile_args(cxx, flags, shared=True))
    sandbox.put({f"{WORK}/{fname}": source})
    build = compile_cpp(sandbox, [f"{WORK}/{fname}"], out, cxx=cxx, flags=flags, shared=True, include_dirs=includes,
                        extra=extra)
    for d in build.diagnostics:
        if d.file.startswith(f"{WORK}/"):
            d.file = d.file[len(WORK) + 1:]
    reports = any(f.startswith("-fopt-info") for f in flags)  # a side effect a copy would not repeat
    digest = _file_digest(sandbox, out) if build.ok and not reports else None
    if digest:
        _BUILT[key] = (out, digest, copy.deepcopy(build))
        while len(_BUILT) > _BUILT_MAX:
            _BUILT.popitem(last=False)
    return build


def _reuse_build(sandbox: Sandbox, key: tuple[int, str], out: str) -> BuildResult | None:
    """The build recorded under `key`, its library copied to `out`, while it is unchanged."""
    if key not in _BUILT:
        return None
    path, digest, build = _BUILT[key]
    data = sandbox.get(path) if sandbox.exists(path) else None
    if data is None or hashlib.sha256(data).hexdigest() != digest:
        del _BUILT[key]
        return None
    if path != out:
        sandbox.put({out: data})
    _BUILT.move_to_end(key)
    return copy.deepcopy(build)


@contextmanager
def task_dir_hidden(sandbox: Sandbox, task: Task) -> Iterator[None]:
    """While candidate code runs, a local bwrap sandbox masks the task's directory, so the
    candidate cannot read the reference, its recorded outputs or the task's other files."""
    hide = getattr(sandbox, "hide", None)
    if task.base_dir is None or not isinstance(hide, list):
        yield
        return
    entry = str(task.base_dir.resolve())
    added = entry not in hide
    if added:
        hide.append(entry)
    try:
        yield
    finally:
        if added and entry in hide:
            hide.remove(entry)


# Digest of each harness binary as built, per sandbox: candidate code runs in the same working
# directory and could replace the binary (say, with one that reports fake times) for later runs.
_HARNESS_DIGEST: dict[tuple[int, str], str] = {}


def _file_digest(sandbox: Sandbox, path: str) -> str | None:
    return hashlib.sha256(sandbox.get(path)).hexdigest() if sandbox.exists(path) else None


def build_harness(sandbox: Sandbox, task: Task) -> str:
    """Compile the driver for the candidate convention (reused while its digest is the one built); returns its path."""
    source = harness_source(task)
    exe = f"{WORK}/harness_{hashlib.sha256(source.encode()).hexdigest()[:12]}"
    key = (id(sandbox), exe)
    if key in _HARNESS_DIGEST and _file_digest(sandbox, exe) == _HARNESS_DIGEST[key]:
        return exe
    sandbox.put({f"{exe}.cpp": source})
    hb = compile_cpp(sandbox, [f"{exe}.cpp"], exe, flags=["-O2", "-std=c++17"], extra=["-ldl", "-Wl,-z,now"])
    if not hb.ok:
        raise VerifyError(f"the verification harness does not compile (a bug in tools/verify):\n{hb.summary(8)}")
    _HARNESS_DIGEST[key] = _file_digest(sandbox, exe) or ""
    return exe


def harness_tampered(sandbox: Sandbox, task: Task, exe: str) -> Observation | None:
    """Before a run: the harness binary is still the one built; else rebuild it and say so."""
    if _file_digest(sandbox, exe) == _HARNESS_DIGEST.get((id(sandbox), exe)):
        return None
    _HARNESS_DIGEST.pop((id(sandbox), exe), None)
    build_harness(sandbox, task)
    return Observation(kind="runtime", message=f"the candidate modified the verification harness ({exe}) during an "
                       "earlier run: the harness belongs to the verifier", data={"tampered": exe})


def compile_observations(build: BuildResult) -> list[Observation]:
    shown = build.errors[:10] or [d for d in build.diagnostics if d.severity == "error"][:10]
    obs = [Observation(kind="compile", message=d.message, file=d.file, line=d.line, data={"column": d.column}) for d in shown]
    if not obs:
        obs.append(Observation(kind="compile", message=f"compilation failed: {build.output[-1500:]}"))
    return obs


def signature_observation(task: Task, source: str) -> Observation | None:
    """The entry defined with a different parameter count than the task's signature (a likely ABI mismatch)."""
    m = re.search(rf'extern\s+"C"\s+void\s+{re.escape(task.entry_name)}\s*\(([^)]*)\)\s*\{{', source)
    if not m:
        return None
    params = [p for p in (x.strip() for x in m[1].split(",")) if p and p != "void"]
    want = len(task.buffers) + len(task.scalars)
    if len(params) == want:
        return None
    return Observation(kind="runtime", severity="warning",
                       message=f"the entry takes {len(params)} parameters, the task's signature has {want}: "
                               f"{task.entry_signature()}", line=source[: m.start()].count("\n") + 1,
                       file=candidate_filename(task))


def put_inputs(sandbox: Sandbox, indir: str, inputs: dict[str, np.ndarray]) -> None:
    sandbox.put({f"{indir}/{k}.bin": np.ascontiguousarray(v).tobytes() for k, v in inputs.items()})


def read_outputs(sandbox: Sandbox, task: Task, outdir: str, suffix: str = "") -> dict[str, np.ndarray]:
    out = {}
    for b in output_buffers(task):
        path = f"{outdir}/{b.name}{suffix}.bin"
        if not sandbox.exists(path):
            raise FileNotFoundError(path)
        out[b.name] = np.frombuffer(sandbox.get(path), dtype=numpy_dtype(b.dtype)).reshape(b.shape)
    return out


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def harness_observations(task: Task, run: HarnessRun, *, seed: int, threads: int, who: str = "candidate") -> tuple[str | None, list[Observation]]:
    """Status ('timeout', 'runtime_error', 'incorrect' or None) and observations from one driver run."""
    obs: list[Observation] = []
    ctx = {"seed": seed, "threads": threads}
    res = run.result
    if res.timed_out:
        obs.append(Observation(kind="runtime", message=f"the {who} did not finish within the time limit "
                               f"(seed {seed}, {_plural(threads, 'thread')}); {'; '.join(res.notes)}", data=ctx))
        return "timeout", obs
    if res.returncode == MISSING_ENTRY:
        obs.append(Observation(kind="compile", file=candidate_filename(task),
                               message=f"the library defines no function '{task.entry_name}' with C linkage: "
                                       f"define {task.entry_signature()}"))
        return "compile_error", obs
    if run.crashed:
        if res.signal:
            import signal as _signal

            try:
                name = _signal.Signals(res.signal).name
            except ValueError:
                name = f"signal {res.signal}"
            why = f"crashed with {name}"
        elif res.returncode != 0:
            why = f"exited with status {res.returncode}"
        else:
            why = "ended the process before the harness finished (exit() or similar in the entry)"
        tail = res.tail(600)
        obs.append(Observation(kind="runtime", message=f"the {who} {why} (seed {seed}, {_plural(threads, 'thread')})"
                               + (f":\n{tail}" if tail else ""), data=ctx))
        return "runtime_error", obs
    status = None
    modified = {name: (first, count, call) for name, first, count, call in reversed(run.input_modified)}  # first call's
    for name, (first, count, call) in modified.items():
        idx = list(np.unravel_index(first, task.buffer(name).shape))
        obs.append(Observation(kind="runtime", message=f"the {who} wrote into input buffer '{name}' "
                               f"({_plural(count, 'element')} changed, first at {[int(i) for i in idx]}; call {call + 1}, seed {seed}, "
                               f"{_plural(threads, 'thread')}): inputs must stay unchanged", data={**ctx, "buffer": name}))
        status = "incorrect"
    for name, (side, call) in {name: (side, call) for name, side, call in reversed(run.out_of_bounds)}.items():
        where = "past the end of" if side == "after" else "before the start of"
        obs.append(Observation(kind="runtime", message=f"the {who} wrote {where} buffer '{name}' "
                               f"({task.buffer(name).size} elements; call {call + 1}, seed {seed}, {_plural(threads, 'thread')})",
                               data={**ctx, "buffer": name}))
        status = "incorrect"
    for name, call, first, count in run.run_differs:
        idx = list(np.unravel_index(first, task.buffer(name).shape))
        obs.append(Observation(kind="mismatch", message=f"output '{name}' changed between calls on the same inputs: call {call + 1} "
                               f"differs from call 1 in {_plural(count, 'element')}, first at {[int(i) for i in idx]} "
                               f"(seed {seed}, {_plural(threads, 'thread')}): results must not depend on earlier calls or timing",
                               data={**ctx, "buffer": name}))
        status = "incorrect"
    return status, obs


def mismatch_observation(task: Task, m: Mismatch) -> Observation:
    return Observation(kind="mismatch", message=m.describe(task.tolerance), data=m.model_dump(exclude={"excerpt"}))


def race_hint(mismatches: Sequence[Mismatch], threads: Sequence[int]) -> Observation | None:
    """When every mismatch is with several threads and one thread passes: say it looks like a race."""
    if not mismatches or 1 not in threads or any(m.threads == 1 for m in mismatches):
        return None
    many = sorted({m.threads for m in mismatches})
    return Observation(kind="mismatch", severity="warning",
                       message=f"correct with 1 thread, wrong with {', '.join(map(str, many))} threads: a data race "
                               "(shared writes without atomics/reduction, or a loop-carried dependence in a parallel loop)")


class _Errors:
    """Running max of abs/rel error over all compared outputs."""

    def __init__(self) -> None:
        self.abs = 0.0
        self.rel = 0.0
        self.seen = False

    def add(self, task: Task, expected: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> None:
        for b in output_buffers(task):
            a, r = error_stats(b, expected[b.name], got[b.name])
            self.abs, self.rel, self.seen = max(self.abs, a), max(self.rel, r), True

    def add_mismatch(self, m: Mismatch) -> None:
        self.abs, self.rel = max(self.abs, m.max_abs_err), max(self.rel, m.max_rel_err)


def compare_outputs(task: Task, expected: dict, got: dict, *, seed: int, threads: int, run: str = "check") -> list[Mismatch]:
    out = []
    for b in output_buffers(task):
        m = compare_buffer(b, expected[b.name], got[b.name], task.tolerance, seed=seed, threads=threads, run=run)
        if m:
            out.append(m)
    return out


def check(
    task: Task,
    candidate_cpp: str,
    sandbox: Sandbox,
    *,
    seeds: Sequence[int] | None = None,
    threads: Sequence[int] | None = None,
    cxx: str = "g++",
    cxxflags: Sequence[str] | None = None,
    reference: Reference | None = None,
    timeout_s: float | None = None,
    candidate_name: str | None = None,
) -> VerifyReport:
    """Compile the candidate in `sandbox`, run it on every seed with every thread count, compare
    every output element with the task's reference. Raises VerifyError when the task or its
    reference cannot be used (the candidate is not at fault then). `candidate_name`: the
    candidate's file as the user knows it, for the observations that name it."""
    thread_counts = list(dict.fromkeys(threads or default_threads()))
    build = build_candidate(sandbox, task, candidate_cpp, lib="libcand.so", cxx=cxx, cxxflags=cxxflags)
    if not build.ok:
        failed = VerifyReport(status="compile_error", build=build, observations=compile_observations(build),
                              reference_kind=task.reference.kind, threads=thread_counts)
        show_candidate_as(failed, task, candidate_name)
        return failed
    exe = build_harness(sandbox, task)
    wanted = list(seeds) if seeds else default_seeds(task)
    key = reference_key(task)
    ref = None
    if reference is not None or task.reference.kind not in CACHEABLE_KINDS or any((key, s) not in _EXPECTED for s in wanted):
        ref = reference or open_reference(task, sandbox)
    try:
        with task_dir_hidden(sandbox, task):
            report = _check_runs(task, sandbox, exe, ref, ref.seeds(wanted) if ref else wanted, thread_counts, build, timeout_s)
    finally:
        if ref is not None and reference is None:
            ref.close()
    mismatch = signature_observation(task, candidate_cpp)
    if mismatch:
        report.observations.insert(0, mismatch)
    show_candidate_as(report, task, candidate_name)
    return report


# Reference outputs are deterministic per (task, seed): kept in memory, least recently used out first.
CACHEABLE_KINDS = ("c", "python", "lowered")
_EXPECTED: OrderedDict[tuple[str, int], tuple[dict[str, np.ndarray], str, str]] = OrderedDict()
_CACHE_BYTES = 256 * 1024 * 1024


def reference_key(task: Task) -> str:
    """Identifies the task and the contents of its reference's files."""
    h = hashlib.sha256(task.model_dump_json().encode() + str(task.base_dir).encode())
    ref = task.reference
    files = [ref.path] if ref.path else []
    if ref.kind == "python" and ref.function and ":" in ref.function:
        files.append(ref.function.split(":", 1)[0].replace(".", "/") + ".py")
    for rel in files:
        path = task.path_of(rel)
        h.update(path.read_bytes() if path.is_file() else b"-")
    return h.hexdigest()


def expected_outputs(task: Task, ref: Reference | None, key: str, seed: int, inputs: dict) -> tuple[dict, str, str]:
    """(outputs, reference kind, note) of the reference on this seed, from the cache where it has them."""
    if ref is None or (key, seed) in _EXPECTED:
        _EXPECTED.move_to_end((key, seed))
        return _EXPECTED[(key, seed)]
    entry = (ref.outputs(seed, inputs), ref.kind, ref.note)
    if ref.kind in CACHEABLE_KINDS:
        _EXPECTED[(key, seed)] = entry
        while len(_EXPECTED) > 1 and sum(a.nbytes for v in _EXPECTED.values() for a in v[0].values()) > _CACHE_BYTES:
            _EXPECTED.popitem(last=False)
    return entry


def _check_runs(task, sandbox, exe, ref, use_seeds, thread_counts, build, timeout_s) -> VerifyReport:
    report = VerifyReport(status="correct", reference_kind=task.reference.kind, build=build, seeds=use_seeds, threads=thread_counts)
    key = reference_key(task)
    errors = _Errors()
    worst: str | None = None
    for seed in use_seeds:
        inputs = generate_inputs(task, seed)
        expected, report.reference_kind, note = expected_outputs(task, ref, key, seed, inputs)
        if note and note not in report.notes:
            report.notes.append(note)
        report.notes += [n for n in constant_output_notes(task, expected, seed) if n not in report.notes]
        indir = f"{WORK}/s{seed}/in"
        put_inputs(sandbox, indir, inputs)
        for t in thread_counts:
            outdir = f"{WORK}/s{seed}/t{t}"
            tampered = harness_tampered(sandbox, task, exe)
            if tampered:
                report.observations.append(tampered)
                report.status = "incorrect"
                return report
            run = run_harness(sandbox, exe, f"{WORK}/libcand.so", task.entry_name, indir, outdir, threads=t, timeout_s=timeout_s)
            status, obs = harness_observations(task, run, seed=seed, threads=t)
            seen = {_gist(o) for o in report.observations}
            report.observations += [o for o in obs if _gist(o) not in seen]  # the same fault once, not per run
            if status in ("timeout", "runtime_error", "compile_error"):
                report.status = status  # type: ignore[assignment]
                _finish(report, errors)
                return report
            worst = worst or status
            try:
                got = read_outputs(sandbox, task, outdir)
            except FileNotFoundError as exc:
                report.observations.append(Observation(kind="runtime", message=f"output file {exc} is missing after the "
                                                       "run: the candidate removed or replaced the harness's files"))
                report.status = "runtime_error"
                return report
            errors.add(task, expected, got)
            found = compare_outputs(task, expected, got, seed=seed, threads=t)
            for m in found:
                errors.add_mismatch(m)
                if not any(prev.buffer == m.buffer for prev in report.mismatches):
                    report.observations.append(mismatch_observation(task, m))
            report.mismatches += found
        sandbox.run(["rm", "-rf", f"{WORK}/s{seed}"])
    if report.mismatches or worst:
        report.status = "incorrect"
        hint = race_hint(report.mismatches, thread_counts)
        if hint:
            report.observations.append(hint)
        extra = len(report.mismatches) - len({m.buffer for m in report.mismatches})
        if extra > 0:
            runs = sorted({(m.seed, m.threads) for m in report.mismatches})
            report.observations.append(Observation(kind="mismatch", severity="info",
                                                   message=f"mismatches in {len(runs)} of {len(use_seeds) * len(thread_counts)} "
                                                           f"runs (seed, threads): {runs}"))
    _finish(report, errors)
    return report


def constant_output_notes(task: Task, expected: dict[str, np.ndarray], seed: int) -> list[str]:
    """A reference output that is the same value everywhere lets a constant-returning candidate pass."""
    notes = []
    for b in output_buffers(task):
        values = expected[b.name].reshape(-1)
        if values.size < 2:
            continue
        if np.all(values == values[0]):
            notes.append(f"the reference's output '{b.name}' is {values[0].item()!r} everywhere for seed {seed}: a candidate "
                         "that returns a constant passes; choose inputs whose outputs vary")
    return notes


def _gist(obs: Observation) -> tuple:
    """What makes two harness observations the same fault (seed, thread count and call aside)."""
    return obs.kind, obs.data.get("buffer"), obs.message.split(" (", 1)[0]


def _finish(report: VerifyReport, errors: _Errors) -> None:
    if errors.seen or report.mismatches:
        report.max_abs_err, report.max_rel_err = errors.abs, errors.rel
