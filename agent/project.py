"""`agent port REPO`: port a whole CUDA project to a CPU build that passes its own check.

Steps (each traced): discover -> translate every CUDA source into the port tree -> build
with g++ in a sandbox -> run the project's check (or --run CMD) -> report. The user's
repository is only read; everything is written under OUT.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from pydantic import BaseModel
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from sandboxes import Limits, open_sandbox
from tools.project.check import BuildOutcome, build_in_sandbox, default_check_commands, read_expected, run_check
from tools.project.discover import DiscoveryError, Project, discover
from tools.project.capture import HEADER as LAUNCH_HEADER
from tools.project.capture import (Capture, capture_to_task, inline_local_includes, instrument, read_captures,
                                  tuned_dispatch_source)
from tools.project.tree import RUNTIME_DIR, FileTranslation, PortTree, add_sources, build_port_tree, drop_sources

from tools.spec import TaskError

from .configuration import Settings
from .errors import UserError
from .trace import TraceWriter


class KernelReport(BaseModel):
    name: str
    file: str
    line: int
    status: str  # correct, incorrect, unsupported, compile_error
    reference_kind: str | None = None
    speedup: float | None = None
    tuning: str | None = None  # what per-kernel tuning on captured launches did
    unsupported: list[str] = []


class CheckRun(BaseModel):
    command: str
    passed: bool
    seconds: float
    detail: str


class CheckReport(BaseModel):
    command: str | None
    passed: bool
    detail: str
    runs: list[CheckRun] = []  # each command that ran, in order; the first that failed ends the check


class PortReport(BaseModel):
    project: str
    translator: str
    build_ok: bool
    check: CheckReport
    kernels: list[KernelReport]
    unmapped_calls: list[str] = []
    build_errors: list[str] = []
    notes: list[str] = []  # what discovery could not read, and what it did instead
    time_s: float = 0.0
    app_runs_s: float = 0.0  # of time_s, spent running the project's own commands (checks, capture)
    cost_usd: float = 0.0


def _translate_with_compiler(source: str, path: str, include_dirs: list[str], options: list[str]) -> FileTranslation:
    """The deterministic translation of one file, its launches routed through cuda_cpu_launch.h
    (captures for tuning, and tuned versions where verified)."""
    from tools.cuda import CudaParseError, LoweringError, translate_file

    try:
        lowered = translate_file(source, path, include_dirs, options)
    except (LoweringError, CudaParseError) as exc:
        return FileTranslation(path, None, [], str(exc))
    except Exception as exc:  # a defect of the compiler on this file: reported for the file, the rest goes on
        return FileTranslation(path, None, [], f"{path}: internal error of the CUDA compiler: "
                                                f"{type(exc).__name__}: {exc} ({_where(exc)})")
    unsupported = [
        {"feature": u.feature, "file": u.file or path, "line": u.line, "message": u.message, "kernel": u.kernel}
        for u in lowered.unsupported
    ]
    cpp, _ = instrument(lowered.cpp)
    return FileTranslation(path, cpp, unsupported)


def _where(exc: BaseException) -> str:
    """The innermost frame of our own code that raised: what a bug report needs."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    return f"{Path(last.filename).name}:{last.lineno} {last.name}" if last else "no traceback"


def _kernel_reports(project: Project, translations: list[FileTranslation], build_ok: bool, check_ok: bool,
                    reference: str) -> list[KernelReport]:
    by_file = {t.path: t for t in translations}
    reports = []
    for k in project.kernels:
        t = by_file.get(k.file)
        problems = [u for u in (t.unsupported if t else []) if u.get("kernel") in (None, k.name)]
        reasons = [f"{u['feature']} ({u['file']}:{u['line']}): {u['message']}" for u in problems]
        if t is None or t.cpp is None:
            status = "unsupported"
            reasons = reasons or [t.error if t and t.error else "file not translated"]
        elif any(u.get("kernel") == k.name for u in problems) or (reasons and not build_ok):
            status = "unsupported"
        elif not build_ok:
            status = "compile_error"
        else:
            status = "correct" if check_ok else "incorrect"
        reports.append(KernelReport(name=k.name, file=k.file, line=k.line, status=status,
                                    reference_kind=reference if status in ("correct", "incorrect") else None,
                                    unsupported=reasons))
    return reports


class PortState:
    """What finished in an earlier run of the same port (OUT/port_state.json), keyed by content
    hashes, so a second run redoes nothing whose inputs did not change."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            self.data = {}

    def get(self, step: str, key: str) -> dict | None:
        entry = self.data.get(step, {}).get(key)
        return entry if isinstance(entry, dict) else None

    def put(self, step: str, key: str, value: dict) -> None:
        self.data.setdefault(step, {})[key] = value
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data))
        tmp.replace(self.path)


def content_hash(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def tree_hash(*roots: Path) -> str:
    parts: list[str | bytes] = []
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            parts += [str(path.relative_to(root)), path.read_bytes()]
    return content_hash(*parts)


def header_dirs(project: Project, path: str) -> list[str]:
    """Where a source's own #include "..." may be found: its directory, then every project
    directory that holds headers (projects often include by a path relative to the root)."""
    dirs = [project.root / Path(path).parent, project.root]
    dirs += sorted({(project.root / s.path).parent for s in project.sources if Path(s.path).suffix in (".h", ".hpp", ".cuh")})
    return list(dict.fromkeys(str(d) for d in dirs))


def compiler_version() -> str:
    """A hash of the deterministic compiler's own files: cached translations are redone when it changes."""
    import tools.cuda

    root = Path(tools.cuda.__file__).parent
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".h") and "runtime" not in p.parts)
    return content_hash(*(p.read_bytes() for p in files))


def write_reports(out: Path, report: PortReport) -> None:
    (out / "port_report.json").write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    lines = [
        f"# Port report: {report.project}",
        "",
        f"- translator: `{report.translator}`",
        f"- build: {'ok' if report.build_ok else 'FAILED'}",
        f"- check: {'passed' if report.check.passed else 'FAILED'} (`{report.check.command}`): {report.check.detail}",
        f"- time: {report.time_s:.1f} s ({report.app_runs_s:.1f} s of it running the project's own commands), "
        f"cost: ${report.cost_usd:.4f}",
        *[f"  - ran `{r.command}`: {'passed' if r.passed else 'FAILED'} in {r.seconds:.1f} s" for r in report.check.runs],
        *[f"- note: {n}" for n in report.notes],
        "",
        "| kernel | file:line | status | reference | speedup | tuning | unsupported |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in report.kernels:
        speed = f"{k.speedup:.2f}x" if k.speedup else "-"
        lines.append(f"| {k.name} | {k.file}:{k.line} | {k.status} | {k.reference_kind or '-'} | {speed} "
                     f"| {k.tuning or '-'} | {'; '.join(k.unsupported) or '-'} |")
    if report.unmapped_calls:
        lines += ["", "## Library calls with no CPU mapping", ""] + [f"- {c}" for c in report.unmapped_calls]
    if report.build_errors:
        lines += ["", "## Build errors", ""] + [f"- {e}" for e in report.build_errors]
    (out / "PORT_REPORT.md").write_text("\n".join(lines) + "\n")


def print_report(console: Console, report: PortReport) -> None:
    table = Table(title=f"{report.project}: build {'ok' if report.build_ok else 'FAILED'}, "
                        f"check {'passed' if report.check.passed else 'FAILED'}")
    for col in ("kernel", "where", "status", "reference", "speedup"):
        table.add_column(col)
    colors = {"correct": "green", "incorrect": "red", "unsupported": "yellow", "compile_error": "red"}
    for k in report.kernels:
        table.add_row(k.name, f"{k.file}:{k.line}", f"[{colors.get(k.status, 'white')}]{k.status}[/]",
                      k.reference_kind or "-", f"{k.speedup:.2f}x" if k.speedup else "-")
    console.print(table)
    console.print(f"check: {report.check.detail}")
    for c in report.unmapped_calls:
        console.print(f"[yellow]unmapped:[/] {c}")


class KernelTuning(BaseModel):
    status: str  # tuned, faithful (no faster correct version), skipped, failed
    speedup: float | None = None  # faithful lowering time / tuned time, same run
    note: str = ""


class AppRuns:
    """Seconds spent running the project's own commands (checks, capture): the rest is the port's."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def run(self, sandbox, command: str, **kwargs):
        started = time.monotonic()
        try:
            return sandbox.run(command, **kwargs)
        finally:
            self.seconds += time.monotonic() - started


def capture_launches(sandbox, commands: list[str], out: Path, runs: AppRuns) -> list[Capture]:
    """Run the checks once with capture on; the first launch of each kernel is recorded."""
    sandbox.run(["mkdir", "-p", "captures"])
    for command in commands:
        runs.run(sandbox, command, cwd="src", env={"CUDACPU_CAPTURE_DIR": "../captures"},
                 limits=Limits(timeout_s=600, memory_mb=8192, cpu_s=1200))
    dest = out / "captures"
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():
        old.unlink()
    for name in sandbox.run(["ls", "captures"]).stdout.split():
        (dest / name).write_bytes(sandbox.get(f"captures/{name}"))
    return read_captures(dest)


def _speedup(result) -> float | None:
    """Faithful lowering time over tuned time, measured in the same profile run."""
    times = result.time_s
    return times.baseline / times.candidate if times.baseline and times.candidate else None


def tune_kernels(project: Project, tree: PortTree, sandbox, cfg: Settings, out: Path, writer: TraceWriter,
                 commands: list[str], console: Console, runs: AppRuns) -> dict[str, KernelTuning]:
    """Capture real launch data, run each kernel's graph on it, and link back every tuned version
    that is correct and faster (dispatched only for the captured configuration)."""
    from tools.cuda import parse_cuda

    from .runner import run_tasks

    tuning: dict[str, KernelTuning] = {}
    captures = capture_launches(sandbox, commands, out, runs)
    writer.event("tool_result", node="capture", data={"captured": [c.kernel for c in captures]})
    sites = {k.name: k for k in project.kernels}
    task_paths: dict[str, Path] = {}
    for capture in captures:
        site = sites.get(capture.kernel)
        problem = capture.problem() or (None if site else "kernel not found in the sources")
        if problem:
            tuning[capture.kernel] = KernelTuning(status="skipped", note=problem)
            continue
        source = inline_local_includes(project.root / site.file, project.root)
        try:
            params = [p.name for p in parse_cuda(source, site.file).kernel(capture.kernel).params]
        except Exception:  # parameter names are only for readability; positions are enough
            params = []
        task_paths[capture.kernel] = capture_to_task(capture, project.root / site.file, params,
                                                     out / "kernels" / capture.kernel, project.root)
    for name, problem in tuning.items():
        writer.event("observation", kernel=name, node="capture", data={"message": f"not tuned: {problem.note}"})
    if not task_paths:
        return tuning
    outcomes = run_tasks(list(task_paths.values()), cfg, out=out / "kernels", console=console)
    by_kernel = {c.kernel: c for c in captures}
    tuned_files: list[tuple[str, str]] = []
    for outcome in outcomes:
        task_path = task_paths[outcome.name]
        code_path = outcome.out_dir / f"{outcome.name}.cpp"
        if outcome.result.status != "correct" or not code_path.is_file():
            tuning[outcome.name] = KernelTuning(status="failed", note=f"per-kernel run: {outcome.result.status}")
            continue
        code = code_path.read_text()
        speedup = _speedup(outcome.result)
        if outcome.result.time_s.baseline is None or not speedup or speedup <= 1.0:
            # No baseline timed: the result is the faithful lowering itself.
            tuning[outcome.name] = KernelTuning(status="faithful", speedup=None,
                                                note="no correct version faster than the faithful lowering")
            continue
        task = json.loads(task_path.read_text())
        file_name = f"cpu_tuned_{outcome.name}.cpp"
        (tree.root / file_name).write_text(tuned_dispatch_source(by_kernel[outcome.name], task, code))
        tuned_files.append((sites[outcome.name].file, file_name))
        tuning[outcome.name] = KernelTuning(status="tuned", speedup=speedup,
                                            note=f"{outcome.result.backend}, {outcome.result.iterations} iterations")
    for beside, file_name in tuned_files:
        add_sources(tree, beside, [file_name])
    writer.event("decision", node="tune", data={k: v.model_dump() for k, v in tuning.items()})
    return tuning


def build_and_check(tree: PortTree, sandbox, state: PortState, writer: TraceWriter, commands: list[str],
                    expected: str | None, out: Path, timeout_s: float, runs: AppRuns) -> tuple[BuildOutcome, CheckReport]:
    """Build the tree and run its checks, reusing what an earlier run finished on the same tree."""
    built_key = tree_hash(tree.root, out / RUNTIME_DIR)
    check_key = content_hash(built_key, *commands, expected or "", str(timeout_s))
    if (done := state.get("build", built_key)) is not None and done["ok"]:
        build = BuildOutcome(True, done["output"])
        writer.event("decision", node="build", data={"reused": True})
    else:
        build = build_in_sandbox(tree, sandbox)
        state.put("build", built_key, {"ok": build.ok, "output": build.output[-4000:]})
        writer.event("tool_result", node="build", data={"ok": build.ok, "output": build.output[-4000:]})
    if not build.ok:
        return build, CheckReport(command=None, passed=False, detail="the port did not build")
    if (done := state.get("check", check_key)) is not None:
        writer.event("decision", node="check", data={"reused": True, **done})
        return build, CheckReport(**done)
    if not sandbox.exists("src/Makefile.cpu"):  # the build was reused: the binaries are not in this sandbox yet
        build_in_sandbox(tree, sandbox)
    outcomes = []
    for command in commands:
        o = run_check(sandbox, command, expected_output=expected, timeout_s=timeout_s)
        runs.seconds += o.seconds
        writer.event("tool_result", node="check", data={"command": o.command, "passed": o.passed, "seconds": o.seconds,
                                                        "detail": o.detail, "stdout": o.stdout[-4000:]})
        outcomes.append(o)
        if not o.passed:
            break
    failed = [o for o in outcomes if not o.passed]
    shown = failed[0] if failed else outcomes[0] if outcomes else None
    check = CheckReport(command=" && ".join(commands) or None, passed=bool(outcomes) and not failed,
                        detail=(f"{shown.command}: {shown.detail}" if shown else "no check command found"),
                        runs=[CheckRun(command=o.command, passed=o.passed, seconds=round(o.seconds, 2), detail=o.detail)
                              for o in outcomes])
    state.put("check", check_key, check.model_dump())
    (out / "port_output.txt").write_text("\n".join(o.stdout for o in outcomes))
    return build, check


def port_repository(root: Path, cfg: Settings, *, out: Path | None, trace: Path | None,
                    check_commands: list[str] | None, console: Console, expected_output: Path | None = None) -> int:
    """Exit status 0 only where the port built, passed its check and every kernel is correct. A
    defect of ours mid-port still ends in PORT_REPORT.md (with what was found and where it
    failed); what was written under OUT stays."""
    started = time.monotonic()
    try:
        project = discover(root)
    except DiscoveryError as exc:
        raise UserError(str(exc)) from None
    out = (out or Path("port-out") / project.root.name).resolve()
    if out == project.root or project.root in out.parents:
        raise UserError(f"{out}: the output directory must be outside the repository being ported")
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _port(project, cfg, out, trace, check_commands, console, expected_output, started)
    except (UserError, KeyboardInterrupt):
        raise
    except Exception as exc:
        cause = f"internal error: {type(exc).__name__}: {exc} ({_where(exc)})"
        report = PortReport(project=str(project.root), translator=cfg.llm, build_ok=False,
                            check=CheckReport(command=None, passed=False, detail=f"the port stopped: {cause}"),
                            kernels=[KernelReport(name=k.name, file=k.file, line=k.line, status="unsupported",
                                                  unsupported=[cause]) for k in project.kernels],
                            notes=project.build.notes + [cause], time_s=time.monotonic() - started)
        write_reports(out, report)
        print_report(console, report)
        return 1


def _port(project: Project, cfg: Settings, out: Path, trace: Path | None, check_commands: list[str] | None,
          console: Console, expected_output: Path | None, started: float) -> int:
    writer = TraceWriter(trace or out / "trace.jsonl", config=cfg.masked(), secrets=cfg.secrets())
    state = PortState(out / "port_state.json")
    limits = Limits(timeout_s=cfg.limits.timeout_s, memory_mb=cfg.limits.memory_mb, cpu_s=cfg.limits.cpu_s)
    tuning: dict[str, KernelTuning] = {}
    runs = AppRuns()
    with writer, Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                          console=console, transient=True) as progress:
        writer.event("node_end", node="discover", data={
            "sources": [s.path for s in project.cuda_sources], "kernels": [k.__dict__ for k in project.kernels],
            "build": project.build.kind, "executables": [t.name for t in project.executables],
            "self_checks": project.self_checks})
        step = progress.add_task("translating", total=len(project.cuda_sources) + 3)
        from tools.cuda import runtime_include_dir

        compiler_id = compiler_version()

        def translate(source: str, path: str) -> FileTranslation:
            progress.update(step, description=f"translating {path}")
            options = project.preprocessor_options(path)
            key = content_hash(compiler_id, cfg.llm, path, source, *options)
            if (done := state.get("translate", key)) is not None:
                result = FileTranslation(**done)
                writer.event("decision", node="translate", data={"file": path, "reused": True})
            else:
                result = _translate_with_compiler(source, path, header_dirs(project, path), options)
                state.put("translate", key, result.__dict__)
                writer.event("artifact", node="translate", data={"file": path, "code": result.cpp,
                                                                 "error": result.error, "unsupported": result.unsupported})
            progress.advance(step)
            return result

        tree = build_port_tree(project, out, translate, runtime_include_dir(), list(cfg.compiler.cxxflags),
                               extra_headers=(LAUNCH_HEADER,))
        if expected_output is not None:  # kept in OUT so that later runs compare with it too
            (out / "original_output.txt").write_text(expected_output.read_text(errors="replace"))
        expected = read_expected(out / "original_output.txt")
        targets = [t.name for t in project.executables]
        commands = list(check_commands) if check_commands else default_check_commands(targets, project.build.check_commands, project.build.check_dir)
        sandbox = open_sandbox(cfg.sandbox, limits=limits, image=cfg.docker_image)
        writer.event("tool_call", node="build", data={"sandbox": sandbox.mode, "makefile": str(tree.makefile)})
        try:
            progress.update(step, description="building with g++ and running the project's check")
            build, check = build_and_check(tree, sandbox, state, writer, commands, expected, out,
                                               cfg.check_timeout_s, runs)
            progress.advance(step)
            if cfg.tune and check.passed:
                progress.update(step, description="tuning kernels on captured launches")
                try:
                    tuning = tune_kernels(project, tree, sandbox, cfg, out, writer, commands, console, runs)
                except (UserError, TaskError) as exc:  # the faithful port stands; say why it was not tuned
                    writer.event("error", node="tune", data={"error": str(exc)})
                    console.print(f"[yellow]tuning skipped:[/] {exc}", highlight=False, soft_wrap=True)
                if any(t.status == "tuned" for t in tuning.values()):
                    sandbox.close()
                    sandbox = open_sandbox(cfg.sandbox, limits=limits, image=cfg.docker_image)
                    build, check = build_and_check(tree, sandbox, state, writer, commands, expected, out,
                                               cfg.check_timeout_s, runs)
                    if not check.passed:  # never ship a tuned build that fails the project's check
                        detail = check.detail
                        for t in tuning.values():
                            if t.status == "tuned":
                                t.status, t.note = "failed", f"reverted: the project check failed with it ({detail})"
                        drop_sources(tree, [f"cpu_tuned_{name}.cpp" for name in tuning])
                        sandbox.close()
                        sandbox = open_sandbox(cfg.sandbox, limits=limits, image=cfg.docker_image)
                        build, check = build_and_check(tree, sandbox, state, writer, commands, expected, out,
                                               cfg.check_timeout_s, runs)
            progress.advance(step)
        finally:
            sandbox.close()
        reference = "gpu-output" if expected is not None else "project-check"
        kernels = _kernel_reports(project, tree.translations, build.ok, check.passed, reference)
        for k in kernels:
            if (t := tuning.get(k.name)) is not None:
                k.speedup, k.tuning = t.speedup, f"{t.status}: {t.note}" if t.note else t.status
        report = PortReport(
            project=str(project.root), translator=cfg.llm, build_ok=build.ok, check=check, kernels=kernels,
            unmapped_calls=[f"{c.name} ({c.file}:{c.line})" for c in tree.unmapped_calls],
            build_errors=[str(d) for d in build.diagnostics if d.severity == "error"][:50],
            notes=project.build.notes,
            time_s=time.monotonic() - started, app_runs_s=runs.seconds,
        )
        writer.event("decision", node="report", data=report.model_dump(mode="json"))
    write_reports(out, report)
    print_report(console, report)
    console.print(f"port tree: {out / 'src'}  report: {out / 'PORT_REPORT.md'}")
    return 0 if report.build_ok and report.check.passed and all(k.status == "correct" for k in report.kernels) else 1
