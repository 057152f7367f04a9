"""A repository port as a LangGraph graph, checkpointed in OUT/checkpoints.sqlite.

    discover -> translate (one Send per CUDA source) -> build -> check
        -> capture -> tune (one Send per captured kernel) -> link -> recheck -> report
    (a failed check or --no-tune goes from check to report; nothing tuned, from link to report)

Every step's outputs are part of the state, recorded with its completion and keyed by a hash of
the step's inputs (translations, build and check records, the capture's files, each kernel's
tuning with its tuned source). So a run killed anywhere resumes where it stopped (LangGraph's
resume: finished steps are kept, the interrupted one is redone), and a later run on the same
OUT redoes no step whose inputs did not change yet ends with everything that step produced:
the files under OUT are written from the state. One thread per OUT; a run on changed inputs
starts a new pass on it that reuses what still applies.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.types import Overwrite, Send
from rich.console import Console

from sandboxes import Limits, Sandbox, open_sandbox
from tools.project.capture import HEADER as LAUNCH_HEADER
from tools.project.capture import (LAUNCH_TIMES, Capture, capture_to_task, instrument, launched_kernels, read_captures,
                                   read_launch_times, standalone_source, tuned_dispatch_source)
from tools.build import Diagnostic
from tools.project.check import BuildOutcome, CheckOutcome, build_in_sandbox, run_check
from tools.project.discover import SKIP_DIRS, Project
from tools.project.inputs import CheckInputs, check_inputs, missing_inputs
from tools.project.smaller_runs import Elsewhere, SmallerRun, file_facts, problem_arguments, smaller_runs
from tools.project.tree import (RUNTIME_DIR, FileTranslation, PortTree, add_sources, build_port_tree,
                                unmapped_library_calls)
from tools.project.verdict_guards import failure_messages, verdict_guards
from tools.optimize import applied, exact_for_any_arguments
from tools.spec import TaskError

from .configuration import Settings
from .errors import UserError
from .port_report import CheckReport, CheckRun, KernelReport, PortReport, write_reports
from .trace import TraceWriter

THREAD_ID = "port"  # one thread per OUT: the output directory is the port's identity
KERNELS_DIR = "kernels"  # the kernels' tasks, results, trace and checkpoints (the per-kernel graphs')
MIN_TIME_SHARE = 0.01  # a kernel specialization that took less of the kernels' time in the check run is not tuned
# What checking one version of a kernel costs: it runs the captured launch about RUNS_PER_CHECK
# times, counted in launches of the port (thread counts, a serial reference build, timing rounds;
# measured when the faithful version was also checked on three seeds before the search: minkowski,
# 3 s a launch, 148 s; bh's ForceCalculationKernel, 1.5 s a launch, 153 s), and it makes, reads and
# compares every buffer of the launch at about CHECK_SECONDS_PER_GIB whatever the launch's own time
# (vadd: three 512 MiB buffers, 204 s for a launch of 0.1 s). A launch whose check would take more
# than half the tuning budget (less than two versions of it could be searched) is not tuned.
RUNS_PER_CHECK = 50
CHECK_SECONDS_PER_GIB = 140.0


def merge(old: dict, new: dict) -> dict:
    return {**old, **new}


class PortState(TypedDict, total=False):
    inputs: str  # fingerprint of this pass's inputs: a killed pass is resumed only on the same inputs
    # Records of finished steps, by a hash of each step's inputs; kept across passes.
    translations: Annotated[dict[str, dict], merge]  # -> FileTranslation fields
    builds: Annotated[dict[str, dict], merge]  # tree hash -> {ok, output, errors}
    checks: Annotated[dict[str, dict], merge]  # check key -> {report: CheckReport, output: what it printed}
    captures: Annotated[dict[str, dict], merge]  # capture key -> {files: {name: sha256}}
    tunings: Annotated[dict[str, dict], merge]  # kernel task id -> {status, speedup, note, file, beside, source, retry}
    # This pass.
    sources: list[dict]  # the CUDA sources: {path, key}
    faithful: dict  # the faithful port: {tree, check}
    tasks: dict[str, dict]  # specialization label -> {kernel, specialization, seconds, task and key | skipped: why}
    final: dict  # what ships: {linked: [tuning keys], tree, check, reverted: why or None}
    report: dict  # PortReport fields


def new_pass(inputs: str) -> dict:
    """The input of a pass: its fingerprint, and this pass's values emptied."""
    return {"inputs": inputs, "sources": [], "faithful": {}, "tasks": {}, "final": {}, "report": {}}


# --- hashes --------------------------------------------------------------------------


def content_hash(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def tree_hash(*roots: Path) -> str:
    parts: list[str | bytes] = []
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not SKIP_DIRS & set(p.relative_to(root).parts)):
            parts += [str(path.relative_to(root)), path.read_bytes()]
    return content_hash(*parts)


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compiler_version() -> str:
    """A hash of the deterministic compiler's own files: cached translations are redone when it changes."""
    import tools.cuda

    from tools.cuda.lowering import PRELUDE

    root = Path(tools.cuda.__file__).parent
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".h") and "runtime" not in p.parts)
    return content_hash(PRELUDE, *(p.read_bytes() for p in files))  # the support code each translation embeds


# --- steps' tools --------------------------------------------------------------------


def where(exc: BaseException) -> str:
    """The innermost frame of our own code that raised: what a bug report needs."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    return f"{Path(last.filename).name}:{last.lineno} {last.name}" if last else "no traceback"


def translate_with_compiler(source: str, path: str, include_dirs: list[str], options: list[str],
                            prelude: tuple[str, list[str]] | None = None) -> FileTranslation:
    """The deterministic translation of one file, its launches routed through cuda_cpu_launch.h
    (captures for tuning, and tuned versions where verified). `prelude`: what the file's includer
    has before including it, and where that text's includes are (Project.prelude): parsed first,
    as the compiler sees it, so that the file's code finds the macros and names it relies on."""
    if prelude is None:
        return _translated(source, path, include_dirs, options)
    text, dirs = prelude
    with tempfile.TemporaryDirectory(prefix="agent-prelude-") as tmp:
        (Path(tmp) / "prelude.h").write_text(text)
        options = [*options, *(arg for d in dirs for arg in ("-I", d)), "-include", str(Path(tmp) / "prelude.h")]
        return _translated(source, path, include_dirs, options)


def _translated(source: str, path: str, include_dirs: list[str], options: list[str]) -> FileTranslation:
    from tools.cuda import CudaParseError, LoweringError, translate_file

    try:
        lowered = translate_file(source, path, include_dirs, options)
    except (LoweringError, CudaParseError) as exc:
        return FileTranslation(path, None, [], str(exc))
    except Exception as exc:  # a defect of the compiler on this file: reported for the file, the rest goes on
        return FileTranslation(path, None, [], f"{path}: internal error of the CUDA compiler: "
                                                f"{type(exc).__name__}: {exc} ({where(exc)})")
    unsupported = [
        {"feature": u.feature, "file": u.file or path, "line": u.line, "message": u.message, "kernel": u.kernel}
        for u in lowered.unsupported
    ]
    cpp, _ = instrument(lowered.cpp)
    return FileTranslation(path, cpp, unsupported)


def header_dirs(project: Project, path: str) -> list[str]:
    """Where a source's own #include "..." may be found: its directory, then every project
    directory that holds headers (projects often include by a path relative to the root)."""
    dirs = [project.root / Path(path).parent, project.root]
    dirs += sorted({(project.root / s.path).parent for s in project.sources if Path(s.path).suffix in (".h", ".hpp", ".cuh")})
    return list(dict.fromkeys(str(d) for d in dirs))


# A check that never reached the program's own verdict says nothing of any kernel's correctness.
UNCHECKED = {"timeout": "timeout", "crashed": "runtime_error"}


def kernel_reports(project: Project, translations: list[FileTranslation], build: dict, check: CheckReport,
                   reference: str, launched: set[str] | None = None, checked: set[str] = frozenset()) -> list[KernelReport]:
    """Each kernel's status. `build`: the build record (its errors placed in kernels where g++ said so).
    `launched`: the kernels the check's run launched (None: not known); a
    kernel it never launched was not checked by it, whatever the verdict. `checked`: the kernels
    launched by check commands that passed, whose verdict stands where a later command never reached its own."""
    by_file = {t.path: t for t in translations}
    build_ok, places = build["ok"], build.get("error_places", [])
    reports = []
    for k in project.kernels:
        t = by_file.get(k.file)
        problems = [u for u in (t.unsupported if t else []) if u.get("kernel") in (None, k.name)]
        reasons = [f"{u['feature']} ({u['file']}:{u['line']}): {u['message']}" for u in problems]
        own_errors = [e for e, place in zip(build["errors"], places) if place == f"{k.file}:{k.name}"]
        errors = []
        if t is None or t.cpp is None:
            status = "unsupported"
            reasons = reasons or [t.error if t and t.error else "file not translated"]
        elif any(u.get("kernel") == k.name for u in problems) or (reasons and not build_ok):
            status = "unsupported"
        elif not build_ok and (own_errors or None in places or not places):
            status = "compile_error"  # its own code failed, or nothing says where the build failed
            errors = own_errors
        elif not build_ok:
            status = "not_built"  # the build failed in other code, which g++ named
            failed = sorted({place.rpartition(":")[2] for place in places if place})
            errors = ["not built: the build failed in " + (f"the lowered kernel {', '.join(failed)}" if failed else
                                                            "code outside the kernels") + " (see the build errors)"]
        elif check.verdict in UNCHECKED:
            status = "correct" if k.name in checked else UNCHECKED[check.verdict]
        elif launched is not None and k.name not in launched:
            status = "not_launched"
        elif check.verdict == "ran":
            status = "unverified"
        else:
            status = "correct" if check.passed else "incorrect"
        reports.append(KernelReport(name=k.name, file=k.file, line=k.line, status=status,
                                    reference_kind=reference if status in ("correct", "incorrect") else None,
                                    unsupported=reasons, errors=errors))
    return reports


class AppRuns:
    """Seconds spent running the project's own commands (checks, capture): the rest is the port's."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def run(self, sandbox: Sandbox, command: str, **kwargs):
        started = time.monotonic()
        try:
            return sandbox.run(command, **kwargs)
        finally:
            self.seconds += time.monotonic() - started


# Where a run of the port in its sandbox records each kernel specialization's first launch (relative to src/).
# The project's own runs are correctness runs, and run as the kernels' checks do (tools/verify/harness.py
# omp_env): idle OpenMP threads sleep at once. Spinning ones, on a machine busier than its cores, steal the
# time slices of the working ones at every launch: 1,500 launches of a 0.5 ms kernel took 15-28 s on 2 loaded
# cores with threads spinning, 1.3 s with them sleeping.
CAPTURE_ENV = {"CUDACPU_CAPTURE_DIR": "../captures", "OMP_WAIT_POLICY": "passive"}
# What kernels a check's run launches, with no capture of their data (a capture budget of 0 bytes)
LAUNCHES_ENV = {**CAPTURE_ENV, "CUDACPU_CAPTURE_BYTES": "0"}


def capture_launches(sandbox: Sandbox, commands: list[str], dest: Path, runs: AppRuns, memory_mb: int) -> None:
    """Run the checks once with capture on (each kernel specialization's first launch is recorded) and
    put what was captured in `dest`, in place of what was there."""
    reset_captures(sandbox)
    for command in commands:
        runs.run(sandbox, command, cwd="src", env=CAPTURE_ENV, limits=Limits(timeout_s=600, memory_mb=memory_mb, cpu_s=1200))
    collect_captures(sandbox, dest)


def reset_captures(sandbox: Sandbox) -> None:
    """An empty captures directory in the sandbox, for the runs about to capture into it."""
    sandbox.run(["rm", "-rf", "captures"])
    sandbox.run(["mkdir", "-p", "captures"])


def collect_captures(sandbox: Sandbox, dest: Path) -> None:
    """What the runs in `sandbox` captured, copied to `dest` in place of what was there."""
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():
        old.unlink()
    for name in sandbox.run(["ls", "captures"]).stdout.split():
        (dest / name).write_bytes(sandbox.get(f"captures/{name}"))


def speedup_of(result) -> float | None:
    """Faithful lowering time over tuned time, measured in the same profile run."""
    times = result.time_s
    return times.baseline / times.candidate if times.baseline and times.candidate else None


class KernelRuns:
    """The per-kernel graphs the tune fan-out runs: one trace (OUT/kernels/trace.jsonl) and one
    checkpointer (OUT/kernels/checkpoints.sqlite) for all, a fresh sandbox for each kernel. A
    kernel's graph resumes from its own checkpoint, and is not redone once finished."""

    def __init__(self, cfg: Settings, out: Path, ray_address: str | None = None) -> None:
        import sys

        from .runner import CHECKPOINT_DB, RunUsage, open_checkpointer, trace_config

        self.cfg, self.out = cfg, out
        self.trace = TraceWriter(out / "trace.jsonl", argv=sys.argv, config=trace_config(cfg), secrets=cfg.secrets())
        self.saver = open_checkpointer(out / CHECKPOINT_DB)
        self.usage = RunUsage(cfg)
        self._translators: dict[str, Any] = {}
        self.ray = None
        if ray_address is not None:  # each kernel's graph a Ray task (agent.ray_runner), recorded here as if run here
            from .ray_runner import connect, kernel_remote

            self.ray = connect(ray_address)
            self._remote = kernel_remote(self.ray, cfg.threads or 1)

    def translator(self, spec: str):
        from .translators.factory import make_translator

        if spec not in self._translators:
            self._translators[spec] = make_translator(spec, self.cfg)
        return self._translators[spec]

    def run(self, task_path: Path, on_step: Callable[[str, str, str], None], wall_s: float | None = None,
            again: bool = False):
        """`wall_s`: the seconds this kernel may take (what is left of the port's tuning budget);
        `again`: as run_kernel's."""
        from tools.spec import load_task

        from .runner import open_kernel_sandbox, run_kernel

        task = load_task(task_path)
        if self.ray is not None:
            return self._run_on_ray(task, task_path, on_step, wall_s, again)
        box = open_kernel_sandbox(self.cfg, task)
        try:
            return run_kernel(task, self.cfg, out=self.out, trace=self.trace, saver=self.saver, sandbox=box,
                              usage=self.usage, translator_for=self.translator, on_step=on_step, wall_s=wall_s,
                              again=again)
        finally:
            box.close()

    def _run_on_ray(self, task, task_path: Path, on_step: Callable[[str, str, str], None], wall_s: float | None,
                    again: bool):
        """The kernel's graph on a worker; its checkpoint, trace and result files recorded here (a new
        search in place of the one before). A worker's failure past Ray's retries raises (the tune node
        reports it and a rerun retries it)."""
        from .graph import build_graph
        from .ray_runner import cluster_error, finished_outcome, record_reply, task_payload
        from .runner import finished_earlier, stopped_by_budget, thread_config, thread_id_for

        graph = build_graph(None, checkpointer=self.saver)
        thread_id = thread_id_for(task, self.cfg.llm)
        snapshot = graph.get_state(thread_config(thread_id))
        if finished_earlier(snapshot) and not (again and stopped_by_budget(snapshot)):
            return finished_outcome(task, thread_id, graph=graph, out=self.out, trace=self.trace, skipped=True,
                                    node="earlier run")
        on_step(task.name, "ray", "sent to the Ray cluster")
        try:
            reply = self.ray.get(self._remote.remote(task_payload(task_path), self._settings_within(wall_s)))
        except self.ray.exceptions.RayError as exc:
            raise cluster_error(exc) from None
        on_step(task.name, "ray", f"ran on {reply['node']} ({reply['seconds']:.1f} s)")
        return record_reply(reply, task, graph=graph, saver=self.saver, trace=self.trace, out=self.out)

    def _settings_within(self, wall_s: float | None) -> Settings:
        """The settings a worker runs the kernel with: its wall time within `wall_s`."""
        if wall_s is None:
            return self.cfg
        budgets = self.cfg.budgets.model_copy(update={"max_wall_s": min(self.cfg.budgets.max_wall_s, wall_s)})
        return self.cfg.model_copy(update={"budgets": budgets})

    def close(self) -> None:
        self.trace.close()
        self.saver.conn.close()
        if self.ray is not None:
            self.ray.shutdown()


# --- the graph's context -----------------------------------------------------------


@dataclass
class PortContext:
    """What the nodes use besides the state; not checkpointed. The port tree on disk, the
    sandbox it is built in and the kernels' runs are made from the state when a node needs them."""

    project: Project
    cfg: Settings
    out: Path
    writer: TraceWriter
    console: Console
    commands: list[str]
    expected: str | None
    on_step: Callable[[str], None]
    started: float = field(default_factory=time.monotonic)
    runs: AppRuns = field(default_factory=AppRuns)
    compiler_id: str = field(default_factory=compiler_version)
    _tree: tuple[tuple[str, ...], PortTree, str] | None = None  # (linked tuning keys, tree, its hash)
    _sandbox: tuple[str, Sandbox] | None = None  # (hash of the tree built in it, sandbox)
    _kernels: KernelRuns | None = None
    _kernels_lock: threading.Lock = field(default_factory=threading.Lock)  # the tune fan-out may run kernels at once
    tuning_started: float = 0.0  # when this process began tuning (the budget counts from there)
    ray_address: str | None = None  # tune each kernel as a Ray task on this cluster (--jobs of them at once)
    # kernel -> the optimizer's transformations that paid on one of its specializations: tried first on the others
    recipes: dict[str, list[str]] = field(default_factory=dict)
    # check commands too big for the check that passed as a smaller run (and why the first was too big):
    # later checks run that at once
    run_smaller: dict[str, tuple[SmallerRun, str]] = field(default_factory=dict)
    _inputs: CheckInputs | None = None

    @property
    def inputs(self) -> CheckInputs:
        """What the check commands name beside the project (its input data): carried into each sandbox."""
        if self._inputs is None:
            self._inputs = check_inputs(self.commands, self.project.root)
        return self._inputs

    @property
    def limits(self) -> Limits:
        return Limits(timeout_s=self.cfg.limits.timeout_s, memory_mb=self.cfg.limits.memory_mb, cpu_s=self.cfg.limits.cpu_s)

    def smaller_runs(self, command: str) -> list[SmallerRun]:
        """Smaller runs of `command` to try in turn when it is too big for the check: its program's
        repetition arguments at 1, then its sizes cut (see tools/project/smaller_runs.py)."""
        from tools.cuda import CudaParseError

        def parsed(path: str, analysis):
            return analysis((self.project.root / path).read_text(errors="replace"), str(self.project.root / path),
                            header_dirs(self.project, path), self.project.preprocessor_options(path))

        for target in self.project.executables:
            mains = [s.path for s in self.project.sources if s.has_main and s.path in target.sources]
            if not mains:
                continue
            try:
                # what the program's other files do: the functions that launch kernels (a repetition loop in
                # main may call them), the struct fields they use (main may store a count in one); only where
                # one of those files launches at all
                elsewhere = Elsewhere()
                for other in self.project.sources:
                    if other.launches and other.path != mains[0] and other.path in target.sources:
                        try:
                            elsewhere |= parsed(other.path, file_facts)
                        except CudaParseError:
                            continue
                arguments = parsed(mains[0], lambda *a: problem_arguments(*a, elsewhere=elsewhere))
            except CudaParseError:
                continue
            except Exception as exc:  # a defect of the analysis: the timed-out run stays the verdict
                self.writer.event("error", node="check", data={"smaller_runs": f"{type(exc).__name__}: {exc} ({where(exc)})"})
                continue
            program = os.path.relpath(self.project.root / target.name, self.project.root / self.project.build.check_dir)
            if runs := smaller_runs(command, program, arguments):
                return runs
        return []

    def translate_key(self, path: str) -> str:
        source = (self.project.root / path).read_text(errors="replace")
        prelude = self.project.prelude(path)
        return content_hash(self.compiler_id, self.cfg.llm, path, source, prelude[0] if prelude else "",
                            *self.project.preprocessor_options(path))

    def tree(self, state: PortState, linked: list[str]) -> tuple[PortTree, str]:
        """OUT/src as the state says: the translated project, plus the tuned files of `linked`
        (tuning keys) linked in; and its hash. Written when what is on disk may differ."""
        if self._tree is not None and self._tree[0] == tuple(linked):
            return self._tree[1], self._tree[2]
        from tools.cuda import runtime_include_dir

        done = {s["path"]: FileTranslation(**state["translations"][s["key"]]) for s in state["sources"]}
        tree = build_port_tree(self.project, self.out, lambda source, path: done[path], runtime_include_dir(),
                               list(self.cfg.compiler.cxxflags), extra_headers=(LAUNCH_HEADER,))
        for key in linked:
            tuned = state["tunings"][key]
            (tree.root / tuned["file"]).write_text(tuned["source"])
            add_sources(tree, tuned["beside"], [tuned["file"]])
        self._tree = (tuple(linked), tree, tree_hash(tree.root, self.out / RUNTIME_DIR))
        return tree, self._tree[2]

    def build(self, tree: PortTree, tree_key: str) -> BuildOutcome:
        """Build `tree` in a fresh sandbox, so that nothing of another build stays in it."""
        self.close_sandbox()
        box = open_sandbox(self.cfg.sandbox, limits=self.limits, image=self.cfg.docker_image)
        self._sandbox = (tree_key, box)
        self.writer.event("tool_call", node="build", data={"sandbox": box.mode, "makefile": str(tree.makefile),
                                                           "inputs": [n.sandbox for n in self.inputs.carried]})
        built = build_in_sandbox(tree, box)
        if built.ok:
            self.inputs.put(box)
        return built

    def sandbox_with(self, tree: PortTree, tree_key: str) -> Sandbox:
        """A sandbox where `tree` is built (an earlier run's build is redone in this process's sandbox)."""
        if self._sandbox is None or self._sandbox[0] != tree_key:
            self.build(tree, tree_key)
        return self._sandbox[1]

    def tuning_seconds(self) -> float:
        """Seconds since this process began tuning kernels (0 for the first)."""
        with self._kernels_lock:
            self.tuning_started = self.tuning_started or time.monotonic()
            return time.monotonic() - self.tuning_started

    def kernels(self) -> KernelRuns:
        with self._kernels_lock:
            if self._kernels is None:
                self._kernels = KernelRuns(self.cfg, self.out / KERNELS_DIR, self.ray_address)
            return self._kernels

    def close_sandbox(self) -> None:
        if self._sandbox is not None:
            self._sandbox[1].close()
            self._sandbox = None

    def close(self) -> None:
        self.close_sandbox()
        if self._kernels is not None:
            self._kernels.close()
            self._kernels = None


# --- nodes ---------------------------------------------------------------------------


def discover_(state: PortState, ctx: PortContext) -> dict:
    """The project was discovered before the graph (its out directory and inputs depend on it):
    this node records it and gives each CUDA source the key of its translation."""
    sources = [{"path": s.path, "key": ctx.translate_key(s.path)} for s in ctx.project.cuda_sources]
    for s in sources:
        if s["key"] in state.get("translations", {}):
            ctx.writer.event("decision", node="translate", data={"file": s["path"], "reused": True})
    return {"sources": sources}


def to_translate(state: PortState) -> list[Send] | str:
    missing = [s for s in state["sources"] if s["key"] not in state.get("translations", {})]
    return [Send("translate", s) for s in missing] or "build"


def translate_(source: dict, ctx: PortContext) -> dict:
    path = source["path"]
    ctx.on_step(f"translating {path}")
    text = (ctx.project.root / path).read_text(errors="replace")
    result = translate_with_compiler(text, path, header_dirs(ctx.project, path), ctx.project.preprocessor_options(path),
                                     ctx.project.prelude(path))
    ctx.writer.event("artifact", node="translate", data={"file": path, "code": result.cpp, "error": result.error,
                                                         "unsupported": result.unsupported})
    return {"translations": {source["key"]: asdict(result)}}


def _build(state: PortState, ctx: PortContext, tree: PortTree, tree_key: str, node: str) -> tuple[dict, dict]:
    """This tree's build record (an earlier successful one is reused) and the state update."""
    done = state.get("builds", {}).get(tree_key)
    if done is not None and done["ok"]:
        ctx.writer.event("decision", node=node, data={"reused": True})
        return done, {}
    ctx.on_step("building with g++")
    built = ctx.build(tree, tree_key)
    errors = [d for d in built.diagnostics if d.severity == "error"][:50]
    placed = [_placed_error(d, tree, ctx.project) for d in errors]
    record = {"ok": built.ok, "output": built.output[-4000:], "errors": [text for text, _ in placed],
              # where g++ said each error is: in a lowered kernel ("file:kernel"), or elsewhere ("")
              "error_places": [place for _, place in placed]}
    ctx.writer.event("tool_result", node=node, data={"ok": built.ok, "output": record["output"]})
    return record, {"builds": {tree_key: record}}


def _placed_error(d: Diagnostic, tree: PortTree, project: Project) -> tuple[str, str | None]:
    """A build error as the report shows it: its file in the port tree (OUT/src/...), and where it is
    inside a lowered kernel, that kernel's place in the project; and its place: "FILE:KERNEL", ""
    (in other code) or None (g++ named no function: a link error, a declaration)."""
    from tools.cuda import NAMESPACE as KERNEL_NAMESPACE

    where = Path(d.file)
    if not where.is_absolute() and where.parts[:1] != ("..",):
        port = Path(os.path.normpath(tree.makefile.parent / where))
        if port.is_relative_to(tree.root.parent):
            where = port.relative_to(tree.root.parent)
    text = str(Diagnostic(str(where), d.line, d.column, d.severity, d.message, d.tool))
    if d.function is None:
        return text, None
    namespace, _, name = d.function.rpartition("::")
    source = where.relative_to(tree.root.name).as_posix() if where.parts[:1] == (tree.root.name,) else None
    kernel = next((k for k in project.kernels if k.name == name and k.file == source), None)
    if kernel is None or namespace.rpartition("::")[2] != KERNEL_NAMESPACE:
        return text, ""
    return f"{text} (in the lowered kernel {name}, {kernel.file}:{kernel.line})", f"{kernel.file}:{name}"


def _check(state: PortState, ctx: PortContext, tree: PortTree, tree_key: str, build: dict,
           node: str, capture: bool = False) -> tuple[str | None, dict | None, dict]:
    """The key and record of this build's check (None: it did not build), and the state update.
    `capture`: the check's runs also capture each kernel specialization's first launch for tuning (the port
    then need not run the project a second time); the captures stay in the sandbox."""
    if not build["ok"]:
        return None, None, {}
    key = content_hash(tree_key, *ctx.commands, ctx.expected or "", str(ctx.cfg.check_timeout_s),
                       str(ctx.cfg.check_first_try_s), str(ctx.cfg.check_memory), *ctx.inputs.fingerprint)
    done = state.get("checks", {}).get(key)
    if done is not None:
        ctx.writer.event("decision", node=node, data={"reused": True, **done["report"]})
        return key, done, {}
    ctx.on_step("running the project's check")
    box = ctx.sandbox_with(tree, tree_key)
    reset_captures(box)
    outcomes, notes = [], list(ctx.inputs.left_out)
    launch_log = ""  # the launch times the runs so far wrote (each process appends at its exit)
    checked: set[str] = set()  # the kernels launched by runs that passed: their verdict covers them

    def run(command: str, timeout_s: float = ctx.cfg.check_timeout_s) -> CheckOutcome:
        nonlocal launch_log
        o = run_check(box, command, expected_output=ctx.expected, timeout_s=timeout_s,
                      memory_mb=ctx.cfg.check_memory, env=CAPTURE_ENV if capture else LAUNCHES_ENV)
        ctx.runs.seconds += o.seconds
        log = _launch_log(box)
        launched_now = launched_kernels(log[len(launch_log):])
        if o.verdict == "ran" and launched_now and (silent := failure_messages(ctx.project)):
            # The program says when its check fails, and did not: it passed (as silent programs do).
            o.verdict = "passed"
            o.detail += f"; it printed none of its failure messages ({silent[0]}): its own check passed"
        if o.passed:
            checked.update(launched_now)
        launch_log = log
        ctx.writer.event("tool_result", node=node, data={"command": o.command, "passed": o.passed, "seconds": o.seconds,
                                                         "detail": o.detail, "stdout": o.stdout[-4000:]})
        outcomes.append(o)
        return o

    for command in ctx.commands:
        if (smaller := ctx.run_smaller.get(command)) is not None:  # too big in an earlier check of this port
            o = run(smaller[0].command)
            notes.append(f"`{command}` {smaller[1]} in this port's first check; checked with `{smaller[0].command}` "
                         f"instead, {smaller[0].change}")
        else:
            # Where a smaller run can be made, the command first runs for a shorter time: a run sized for
            # a GPU would spend the whole check timeout before the smaller run is tried.
            first_try = ctx.cfg.check_first_try_s if 0 < ctx.cfg.check_first_try_s < ctx.cfg.check_timeout_s else None
            candidates = ctx.smaller_runs(command) if first_try else None
            first_try = first_try if candidates else None
            o = run(command, first_try or ctx.cfg.check_timeout_s)
            # Too big for the check: it timed out, or crashed as a refused allocation does (then only a
            # smaller problem, not fewer repetitions, can help).
            why = (f"ran past {first_try:g} s (its first try, where a smaller run can be made; --check-first-try)"
                   if o.verdict == "timeout" and first_try else
                   f"timed out after {ctx.cfg.check_timeout_s:g} s" if o.verdict == "timeout" else
                   f"crashed as it does when out of memory (at most {ctx.cfg.check_memory} MiB)" if o.out_of_memory else "")
            runs = (candidates if candidates is not None else ctx.smaller_runs(command)) if why else []
            if o.out_of_memory:  # fewer repetitions allocate as much
                runs = [smaller for smaller in runs if smaller.smaller_problem]
            if why and not runs:
                cut = "a size that could be cut" if o.out_of_memory else "a repetition count or a size that could be cut"
                notes.append(f"`{command}` {why}, and no smaller run of it could be made: none of its arguments is "
                             f"{cut} (the problem's size may be fixed in the program); a longer --check-timeout, "
                             "more --check-memory, or --run with other arguments")
            for n, smaller in enumerate(runs):
                # A smaller run with a still smaller one after it has the first try's time too: fewer
                # repetitions of a problem sized for a GPU may still take the whole check timeout.
                later = first_try if first_try and n + 1 < len(runs) else None
                # its captures take the place of the killed run's (unfinished ones stay .part)
                retry = run(smaller.command, later or ctx.cfg.check_timeout_s)
                notes.append(f"`{command}` {why}; checked with `{smaller.command}` instead, {smaller.change}"
                             + ("" if retry.passed else f", which did not pass either: {retry.detail}"))
                if retry.passed:
                    ctx.run_smaller[command] = (smaller, why)
                    o = retry
                # A smaller run that fails may fail for being smaller (a count or size the program's verdict
                # assumes): the first run stays the verdict, not checked; only a timeout or a crash for
                # memory goes on to a smaller one.
                if retry.verdict != "timeout" and not retry.out_of_memory:
                    break
            if first_try and o.verdict == "timeout" and outcomes[-1].verdict != "timeout":
                # No smaller run passed, and the last failed for being smaller: the command itself decides,
                # given the whole check timeout.
                o = run(command)
                notes.append(f"`{command}` ran again with all of the {ctx.cfg.check_timeout_s:g} s check timeout: "
                             "no smaller run of it passed")
        if not o.passed:
            break
    failed = o if outcomes and not o.passed else None  # the run that ended the check
    # a run that failed, or printed no verdict, may have read nothing: a missing input says why
    for unsure in [failed] if failed is not None else [o for o in outcomes if o.verdict == "ran"]:
        notes += missing_inputs(unsure.command, ctx.project.root, box)
    shown = failed or next((o for o in outcomes if o.passed), None)
    if failed is None and outcomes and all(o.verdict == "ran" for o in outcomes if o.passed):
        guards = "; ".join(g.describe() for g in verdict_guards(ctx.project))
        notes.append("the program printed no verdict (no PASS, no FAIL): it ran and reported no failure, which says "
                     "nothing of its results where it does not compare them ("
                     + (guards or "some programs check only when built to, e.g. --make-var VERIFY=yes")
                     + "); --expected-output FILE compares its numbers with a recorded run of the original")
    report = CheckReport(command=" && ".join(ctx.commands) or None, passed=bool(outcomes) and failed is None,
                         detail=(f"{shown.command}: {shown.detail}" if shown else "no check command found"),
                         runs=[CheckRun(command=o.command, passed=o.passed, seconds=round(o.seconds, 2), detail=o.detail,
                                        verdict=o.verdict)
                               for o in outcomes], notes=notes,
                         failed_run=next((i for i, o in enumerate(outcomes) if o is failed), None))
    # the kernels its runs launched (a run that launches none writes nothing); None where a run was
    # killed before it could say
    launched = sorted(launched_kernels(launch_log)) if launch_log or not any(o.killed for o in outcomes) else None
    record = {"report": report.model_dump(mode="json"), "output": "\n".join(o.stdout for o in outcomes),
              "launched": launched, "checked": sorted(checked)}
    return key, record, {"checks": {key: record}}


def _launch_log(box: Sandbox) -> str:
    """What the check's processes have written to the launch times file so far."""
    if LAUNCH_TIMES not in box.run(["ls", "captures"]).stdout.split():
        return ""
    return box.get(f"captures/{LAUNCH_TIMES}").decode(errors="replace")


def _worth_tuning(record: dict) -> bool:
    """The faithful port's check passed, or ran out of time: the kernels its runs captured may then be
    tuned, and the port with its tuned versions in checked in time."""
    return record["report"]["passed"] or CheckReport(**record["report"]).verdict == "timeout"


def build_(state: PortState, ctx: PortContext) -> dict:
    tree, tree_key = ctx.tree(state, [])
    _, update = _build(state, ctx, tree, tree_key, "build")
    return {**update, "faithful": {"tree": tree_key}}


def check_(state: PortState, ctx: PortContext) -> dict:
    tree, _ = ctx.tree(state, [])
    tree_key = state["faithful"]["tree"]
    key, record, update = _check(state, ctx, tree, tree_key, state["builds"][tree_key], "check", capture=ctx.cfg.tune)
    if ctx.cfg.tune and "checks" in update and _worth_tuning(record):
        # This check run captured the launches: the capture step keeps them instead of running again
        # (a run killed for time leaves whole captures of the launches it finished).
        dest = ctx.out / "captures"
        collect_captures(ctx.sandbox_with(tree, tree_key), dest)
        update["captures"] = {_capture_key(ctx, tree_key): {"files": {p.name: file_sha(p) for p in sorted(dest.iterdir())}}}
    return {**update, "faithful": {**state["faithful"], "check": key}}


def _capture_key(ctx: PortContext, tree_key: str) -> str:
    return content_hash(tree_key, *ctx.commands, *ctx.inputs.fingerprint)


def capture_(state: PortState, ctx: PortContext) -> dict:
    """Capture each kernel specialization's first launch from a run of the faithful port, and make each capture
    a kernel task (OUT/kernels/NAME) for the per-kernel graph."""
    tree, _ = ctx.tree(state, [])
    tree_key = state["faithful"]["tree"]
    key = _capture_key(ctx, tree_key)
    dest = ctx.out / "captures"
    done = state.get("captures", {}).get(key)
    update: dict[str, Any] = {"faithful": {**state["faithful"], "capture": key}}
    if done is not None and _intact(dest, done["files"]):
        ctx.writer.event("decision", node="capture", data={"reused": True, "files": sorted(done["files"])})
    else:
        ctx.on_step("capturing the kernels' launches")
        capture_launches(ctx.sandbox_with(tree, tree_key), ctx.commands, dest, ctx.runs, ctx.cfg.check_memory)
        update["captures"] = {key: {"files": {p.name: file_sha(p) for p in sorted(dest.iterdir())}}}
    captures = read_captures(dest)
    ctx.writer.event("tool_result", node="capture", data={"captured": [c.label for c in captures]})
    times = read_launch_times(dest)
    total = sum(seconds for _, seconds in times.values())
    tasks = {}
    for c in captures:
        launches, seconds = times.get((c.kernel, c.template_args), (0, None))
        about = {"kernel": c.kernel, "specialization": c.template_args, "seconds": seconds}
        plural = "es" if launches != 1 else ""
        if seconds is not None and seconds < MIN_TIME_SHARE * total:
            tasks[c.label] = {**about, "skipped": f"{seconds / total:.1%} of the kernels' time in the check run "
                              f"({launches} launch{plural}, {seconds:.3g} s of {total:.3g} s): not worth tuning"}
        elif (cost := _check_cost(c, launches, seconds))[0] > ctx.cfg.tune_budget_s / 2:
            tasks[c.label] = {**about, "skipped": f"checking one version of it takes about {cost[0]:.2g} s "
                              f"({cost[1]}): more than half the tuning budget "
                              f"({ctx.cfg.tune_budget_s:g} s, --tune-budget) allows; a larger budget, or a --run "
                              "with smaller arguments, makes it tunable"}
        else:
            tasks[c.label] = {**about, **_task_of(ctx, c)}
    for name, task in tasks.items():
        if "skipped" in task:
            ctx.writer.event("observation", node="capture", data={"kernel": name, "message": f"not tuned: {task['skipped']}"})
        elif not _needs_tuning(state, task["key"]):
            ctx.writer.event("decision", node="tune", data={"kernel": name, "reused": True})
    return {**update, "tasks": tasks}


def _check_cost(capture: Capture, launches: int, seconds: float | None) -> tuple[float, str]:
    """About how long checking one version of the captured launch takes (see RUNS_PER_CHECK), and
    the figures it comes from."""
    gib = sum(a.bytes for a in capture.args if a.kind == "pointer") / 2**30
    cost, parts = gib * CHECK_SECONDS_PER_GIB, []
    if seconds is not None and launches:
        cost += seconds / launches * RUNS_PER_CHECK
        plural = "es" if launches != 1 else ""
        parts.append(f"one launch takes {seconds / launches:.3g} s ({launches} launch{plural} in the check run), "
                     f"run about {RUNS_PER_CHECK} times")
    parts.append(f"its buffers hold {gib * 1024:.0f} MiB")
    return cost, "; ".join(parts)


def _intact(directory: Path, files: dict[str, str]) -> bool:
    """`directory` holds exactly these files, with these contents."""
    present = {p.name: p for p in directory.iterdir()} if directory.is_dir() else {}
    return present.keys() == files.keys() and all(file_sha(present[n]) == sha for n, sha in files.items())


def _task_of(ctx: PortContext, capture: Capture) -> dict:
    """{task, key}: the kernel task made of a capture and its thread id; or {skipped: why not}."""
    from tools.cuda import parse_cuda
    from tools.cuda.frontend import RUN_TIME_DEVICE_VARIABLES
    from tools.spec import load_task

    from .runner import thread_id_for

    project = ctx.project
    site = next((k for k in project.kernels if k.name == capture.kernel), None)
    problem = capture.problem() or (None if site else "kernel not found in the sources")
    if problem:
        return {"skipped": problem}
    source = standalone_source(project, site.file)
    try:
        kernel = parse_cuda(source, site.file).kernel(capture.kernel)
    except Exception as exc:  # what it uses is unknown, so whether its task stands for it is too
        return {"skipped": f"{site.file} could not be read for what the kernel uses ({type(exc).__name__}: {exc})"}
    if RUN_TIME_DEVICE_VARIABLES in kernel.features:
        # the task would run on whatever the kernel's file initializes them to, and a tuned copy
        # would use its own copies of them, never those the program sets
        return {"skipped": "it uses __device__ or __constant__ variables that the program sets as it runs, "
                           "which a capture of its launch does not record"}
    params = [p.name for p in kernel.params]
    path = capture_to_task(capture, source, params, ctx.out / KERNELS_DIR / capture.label)
    try:
        return {"task": str(path), "key": thread_id_for(load_task(path), ctx.cfg.llm)}
    except TaskError as exc:
        return {"skipped": str(exc)}


def _needs_tuning(state: PortState, key: str) -> bool:
    done = state.get("tunings", {}).get(key)
    return done is None or bool(done.get("retry"))


def to_tune(state: PortState) -> list[Send] | str:
    """The kernels to tune, those that took the most time in the check run first (the tuning
    budget may run out before the last)."""
    todo = [(name, task) for name, task in state["tasks"].items() if "key" in task and _needs_tuning(state, task["key"])]
    todo.sort(key=lambda item: (-(item[1].get("seconds") or 0.0), item[0]))
    # what paid on a specialization tuned in an earlier run of this port (this run's go to PortContext.recipes)
    recipes = {task.get("kernel"): done["transforms"] for task in state["tasks"].values()
               if (done := state.get("tunings", {}).get(task.get("key"))) and done.get("transforms")}
    # a kernel an earlier run left for a rerun to tune: a search its budget cut short searches anew
    return [Send("tune", {**task, "label": name, "recipe": recipes.get(task.get("kernel")),
                          "again": task["key"] in state.get("tunings", {})}) for name, task in todo] or "link"


def tune_(job: dict, ctx: PortContext) -> dict:
    """One kernel's graph on its captured launch; a correct, faster version becomes the source
    of a dispatch that runs it only for the captured configuration."""
    kernel = job["label"]
    left = ctx.cfg.tune_budget_s - ctx.tuning_seconds()
    if left <= 0:
        note = (f"not tuned: the port's tuning budget ({ctx.cfg.tune_budget_s:g} s, --tune-budget) was spent "
                "before this kernel; a rerun of the same command tunes it")
        ctx.writer.event("decision", node="tune", data={"kernel": kernel, "status": "skipped", "note": note})
        return {"tunings": {job["key"]: {"status": "skipped", "note": note, "retry": True}}}
    if (recipe := ctx.recipes.get(job.get("kernel", "")) or job.get("recipe")) is not None:
        _try_first(Path(job["task"]), recipe)
    try:
        outcome = ctx.kernels().run(Path(job["task"]), lambda _, __, text: ctx.on_step(f"tuning {kernel}: {text}"), left,
                                    again=job.get("again", False))
    except (UserError, TaskError) as exc:  # the faithful port stands; say why it was not tuned
        ctx.console.print(f"[yellow]{kernel} not tuned:[/] {exc}", highlight=False, soft_wrap=True)
        record = {"status": "skipped", "note": str(exc)}
    except Exception as exc:  # one kernel's failure must not end the port; the next run tries it again
        ctx.writer.event("error", node="tune", data={"kernel": kernel, "error": f"{type(exc).__name__}: {exc}",
                                                     "traceback": traceback.format_exc(limit=10)})
        record = {"status": "failed", "note": f"the per-kernel run failed: {type(exc).__name__}: {exc}", "retry": True}
    else:
        record = _tuning(ctx, kernel, Path(job["task"]), outcome, left)
    ctx.writer.event("decision", node="tune", data={"kernel": kernel, **{k: v for k, v in record.items() if k != "source"}})
    return {"tunings": {job["key"]: record}}


def _tuning(ctx: PortContext, kernel: str, task_path: Path, outcome, given_s: float) -> dict:
    """The tuning record of a kernel's search, which had `given_s` seconds of the port's budget."""
    code_path = outcome.out_dir / f"{kernel}.cpp"
    if outcome.result.status != "correct" or not code_path.is_file():
        return {"status": "failed", "note": f"per-kernel run: {outcome.result.status}"}
    speedup = speedup_of(outcome.result)
    if outcome.result.time_s.baseline is None or not speedup or speedup <= 1.0:
        # No baseline timed: the result is the faithful lowering itself.
        if outcome.result.stopped:  # the search did not run its course: say so
            if outcome.result.iterations >= ctx.cfg.budgets.max_iters:  # a rerun would stop at the same count
                return {"status": "faithful", "note": f"no faster version within its attempts ({outcome.result.stopped}); "
                                                      "a larger --max-iters searches further"}
            if given_s >= 0.95 * ctx.cfg.tune_budget_s:  # it started first: a rerun would give it no more time
                return {"status": "skipped", "note": f"not tuned: the port's tuning budget ended its search "
                                                     f"({outcome.result.stopped}); a larger --tune-budget searches further"}
            return {"status": "skipped", "retry": True,
                    "note": f"not tuned: the port's tuning budget ended its search ({outcome.result.stopped}), "
                            f"which had {given_s:.0f} s of the budget's {ctx.cfg.tune_budget_s:g} s left to it; "
                            "a rerun of the same command searches again with more"}
        return {"status": "faithful", "note": "no correct version faster than the faithful lowering"}
    capture = next(c for c in read_captures(ctx.out / "captures") if c.label == kernel)
    site = next(k for k in ctx.project.kernels if k.name == capture.kernel)
    code = code_path.read_text()
    # the compiler's transformations that are exact by construction hold for any scalar values;
    # an LLM's code, or a transformation chosen by testing, only for the captured ones
    any_scalars = outcome.result.backend == "compiler" and exact_for_any_arguments(code)
    task = json.loads(task_path.read_text())
    source = tuned_dispatch_source(capture, task, code, pin_scalars=not any_scalars)
    scope = "any scalar values" if any_scalars else "the captured scalar values"
    if transforms := applied(code):
        ctx.recipes.setdefault(capture.kernel, transforms)  # the kernel's other specializations try them first
    first = f"; {', '.join(task['optimize_first'])} tried first (paid on a sibling)" if task.get("optimize_first") else ""
    return {"status": "tuned", "speedup": speedup, "transforms": transforms or [],
            "note": f"{outcome.result.backend}, {outcome.result.iterations} iterations; runs for {scope}{first}",
            "file": f"cpu_tuned_{kernel}.cpp", "beside": site.file, "source": source}


def _try_first(task_path: Path, transforms: list[str]) -> None:
    """The kernel task asks its optimizer to try `transforms` before the others."""
    task = json.loads(task_path.read_text())
    if task.get("optimize_first") != transforms:
        task_path.write_text(json.dumps({**task, "optimize_first": transforms}, indent=2) + "\n")


def link_(state: PortState, ctx: PortContext) -> dict:
    """Link every tuned version into the port tree."""
    linked = [task["key"] for _, task in sorted(state["tasks"].items())
              if "key" in task and state["tunings"][task["key"]]["status"] == "tuned"]
    if linked:
        ctx.tree(state, linked)
    ctx.writer.event("decision", node="link", data={"linked": [state["tunings"][k]["file"] for k in linked]})
    return {"final": {"linked": linked}}


def recheck_(state: PortState, ctx: PortContext) -> dict:
    """Build and check the tree with the tuned versions in: never ship one that fails the check."""
    linked = state["final"]["linked"]
    tree, tree_key = ctx.tree(state, linked)
    build, update = _build(state, ctx, tree, tree_key, "recheck")
    key, check, checked = _check(state, ctx, tree, tree_key, build, "recheck")
    final = {"linked": linked, "tree": tree_key, "check": key}
    if check is None or not check["report"]["passed"]:
        detail = check["report"]["detail"] if check else "the port did not build"
        ctx.writer.event("decision", node="recheck", data={"reverted": linked, "detail": detail})
        final = {"linked": [], "tree": state["faithful"]["tree"], "check": state["faithful"]["check"],
                 "tried": final, "reverted": f"reverted: the project check failed with it ({detail})"}
    return {**update, **checked, "final": final}


def report_(state: PortState, ctx: PortContext) -> dict:
    """PORT_REPORT.md and port_report.json of what ships; OUT/src is made to be what ships.
    The records this pass did not use are dropped from the state."""
    from tools.cuda import runtime_include_dir

    project, faithful, final = ctx.project, state["faithful"], state["final"]
    tree_key, check_key = final.get("tree", faithful["tree"]), final.get("check", faithful.get("check"))
    ctx.tree(state, final.get("linked", []))
    build = state["builds"][tree_key]
    check = state["checks"][check_key] if check_key else None
    output = ctx.out / "port_output.txt"
    if check is not None:
        output.write_text(check["output"])
    else:
        output.unlink(missing_ok=True)
    check_report = (CheckReport(**check["report"]) if check
                    else CheckReport(command=None, passed=False, detail="the port did not build"))
    if check_key != faithful.get("check") and (first := state["checks"].get(faithful.get("check"))):
        if not first["report"]["passed"]:  # the faithful port's check ran out of time; the tuned port's did not
            check_report.notes.insert(0, f"the faithful port's check did not end in time ({first['report']['detail']}); "
                                         "its kernels were tuned on the launches that run captured, and the port "
                                         "with the tuned versions in was checked instead")
    translations = [FileTranslation(**state["translations"][s["key"]]) for s in state["sources"]]
    reference = "gpu-output" if ctx.expected is not None else "project-check"
    launched = set(check["launched"]) if check is not None and check.get("launched") is not None else None
    checked = set(check.get("checked", [])) if check is not None else set()
    kernels = kernel_reports(project, translations, build, check_report, reference, launched, checked)
    if check_report.verdict in UNCHECKED and (passed := [k.name for k in kernels if k.status == "correct"]):
        check_report.notes.append(f"{', '.join(passed)} launched in check commands that passed before the one that "
                                  "did not end with a verdict: their verdict stands for these kernels")
    tunings = _kernel_tunings(state)
    for k in kernels:
        if records := tunings.get(k.name):
            k.speedup, k.tuning = records[0][1].get("speedup"), tuning_summary(records)
    report = PortReport(
        project=str(project.root), translator=ctx.cfg.llm, build_ok=build["ok"], check=check_report, kernels=kernels,
        unmapped_calls=[f"{c.name} ({c.file}:{c.line})" for c in unmapped_library_calls(project, runtime_include_dir())],
        build_errors=build["errors"], notes=project.build.notes,
        time_s=time.monotonic() - ctx.started, app_runs_s=ctx.runs.seconds,
    )
    ctx.writer.event("decision", node="report", data=report.model_dump(mode="json"))
    write_reports(ctx.out, report)
    return {"report": report.model_dump(mode="json"), **_used_records(state)}


def _kernel_tunings(state: PortState) -> dict[str, list[tuple[str, dict]]]:
    """Per kernel, what tuning did to each of its specializations, the one that took the most time
    first: [(template arguments, {status, speedup, note})]."""
    final = state["final"]
    tried = set((final.get("tried") or {}).get("linked", []))
    out: dict[str, list[tuple[float, str, dict]]] = {}
    for name, task in state["tasks"].items():
        if "skipped" in task:
            record = {"status": "skipped", "note": task["skipped"]}
        elif task["key"] in tried:
            record = {"status": "failed", "note": final["reverted"]}
        else:
            record = state["tunings"][task["key"]]
        row = (task.get("seconds") or 0.0, task.get("specialization", ""), record)
        out.setdefault(task.get("kernel", name), []).append(row)
    return {kernel: [(args, record) for _, args, record in sorted(rows, key=lambda row: -row[0])]
            for kernel, rows in out.items()}


def tuning_summary(records: list[tuple[str, dict]]) -> str:
    """What tuning did for a kernel's specializations (template arguments, tuning record), hottest first."""
    def text(record: dict) -> str:
        return f"{record['status']}: {record['note']}" if record.get("note") else record["status"]

    if len(records) == 1:
        return text(records[0][1])
    # specializations that came out alike (a skip reason of the kernel's, often) share one entry
    alike: dict[str, list[str]] = {}
    for args, record in records:
        alike.setdefault(text(record), []).append(f"<{args}>")
    return "; ".join(f"{_some(names)} {said}" for said, names in alike.items())


def _some(names: list[str], shown: int = 3) -> str:
    if len(names) <= shown + 1:
        return ", ".join(names)
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


def _used_records(state: PortState) -> dict:
    """Each record kind cut to what this pass used, so that the state does not grow with every edit."""
    faithful, final = state["faithful"], state["final"]
    tried = final.get("tried") or {}
    trees = {faithful.get("tree"), final.get("tree"), tried.get("tree")}
    checks = {faithful.get("check"), final.get("check"), tried.get("check")}
    tasks = {t["key"] for t in state["tasks"].values() if "key" in t}
    keep = {"translations": {s["key"] for s in state["sources"]}, "builds": trees, "checks": checks,
            "captures": {faithful.get("capture")}, "tunings": tasks}
    return {kind: Overwrite({k: v for k, v in state.get(kind, {}).items() if k in keys}) for kind, keys in keep.items()}


# --- the graph -----------------------------------------------------------------------


def discovery(project: Project) -> dict:
    return {"sources": [s.path for s in project.cuda_sources], "kernels": [k.__dict__ for k in project.kernels],
            "build": project.build.kind, "executables": [t.name for t in project.executables],
            "self_checks": project.self_checks}


def _traced(name: str, body: Callable[[Any, PortContext], dict], ctx: PortContext | None) -> Callable[[Any], dict]:
    """A node with node_start/node_end events; what a fanned-out node works on goes in them."""

    def node(state: Any) -> dict:
        if ctx is None:
            raise RuntimeError("this graph was built without a context; it can read state but not run")
        about = {k: state[k] for k in ("path", "label") if k in state}
        ctx.writer.event("node_start", node=name, data=about)
        ctx.on_step(name)
        started = time.monotonic()
        update = body(state, ctx)
        summary = discovery(ctx.project) if name == "discover" else {}
        ctx.writer.event("node_end", node=name, data={**about, **summary, "elapsed_s": round(time.monotonic() - started, 3)})
        return update

    node.__name__ = name
    return node


def _tunable(state: PortState) -> bool:
    key = state["faithful"]["check"]
    return key is not None and _worth_tuning(state["checks"][key])


def build_port_graph(ctx: PortContext | None, *, checkpointer: Any = None):
    """The compiled repository-port graph. `ctx` may be None for a graph only used to read state."""
    graph = StateGraph(PortState)
    bodies = {"discover": discover_, "translate": translate_, "build": build_, "check": check_, "capture": capture_,
              "tune": tune_, "link": link_, "recheck": recheck_, "report": report_}
    for name, body in bodies.items():
        graph.add_node(name, _traced(name, body, ctx))
    tune = ctx is not None and ctx.cfg.tune
    graph.add_edge(START, "discover")
    graph.add_conditional_edges("discover", to_translate, ["translate", "build"])
    graph.add_edge("translate", "build")
    graph.add_edge("build", "check")
    graph.add_conditional_edges("check", lambda s: "capture" if tune and _tunable(s) else "report",
                                ["capture", "report"])
    graph.add_conditional_edges("capture", to_tune, ["tune", "link"])
    graph.add_edge("tune", "link")
    graph.add_conditional_edges("link", lambda s: "recheck" if s["final"]["linked"] else "report", ["recheck", "report"])
    graph.add_edge("recheck", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


def run_port(ctx: PortContext, inputs: str, checkpoint_db: Path) -> PortReport:
    """Resume this OUT's pass where it stopped when its inputs are the same, else run a new pass
    (which reuses every record whose inputs did not change); the report of what ships."""
    from .runner import open_checkpointer

    saver = open_checkpointer(checkpoint_db)
    try:
        graph = build_port_graph(ctx, checkpointer=saver)
        config = {"configurable": {"thread_id": THREAD_ID}, "max_concurrency": ctx.cfg.jobs}
        snapshot = graph.get_state(config)
        resumed = bool(snapshot.next) and snapshot.values.get("inputs") == inputs
        ctx.writer.event("node_start", node="port", data={"resumed": resumed, "next": list(snapshot.next) if resumed else []})
        final = graph.invoke(None if resumed else new_pass(inputs), config, durability="sync")
        return PortReport(**final["report"])
    finally:
        ctx.close()
        saver.conn.close()
