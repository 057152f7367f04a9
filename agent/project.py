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
from tools.project.tree import RUNTIME_DIR, FileTranslation, build_port_tree

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
    unsupported: list[str] = []


class CheckReport(BaseModel):
    command: str | None
    passed: bool
    detail: str


class PortReport(BaseModel):
    project: str
    translator: str
    build_ok: bool
    check: CheckReport
    kernels: list[KernelReport]
    unmapped_calls: list[str] = []
    build_errors: list[str] = []
    time_s: float = 0.0
    cost_usd: float = 0.0


def _translate_with_compiler(source: str, path: str) -> FileTranslation:
    from tools.cuda import LoweringError, translate_file

    try:
        lowered = translate_file(source, path)
    except LoweringError as exc:
        return FileTranslation(path, None, [], str(exc))
    unsupported = [
        {"feature": u.feature, "file": u.file or path, "line": u.line, "message": u.message} for u in lowered.unsupported
    ]
    return FileTranslation(path, lowered.cpp, unsupported)


def _kernel_reports(project: Project, translations: list[FileTranslation], build_ok: bool, check_ok: bool,
                    reference: str) -> list[KernelReport]:
    by_file = {t.path: t for t in translations}
    reports = []
    for k in project.kernels:
        t = by_file.get(k.file)
        reasons = [f"{u['feature']} ({u['file']}:{u['line']}): {u['message']}" for u in (t.unsupported if t else [])
                   if not u.get("kernel") or u.get("kernel") == k.name]
        if t is None or t.cpp is None:
            status = "unsupported"
            reasons = reasons or [t.error if t and t.error else "file not translated"]
        elif any(f":{k.line}" in r for r in reasons) or (reasons and not build_ok):
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
        f"- time: {report.time_s:.1f} s, cost: ${report.cost_usd:.4f}",
        "",
        "| kernel | file:line | status | reference | speedup | unsupported |",
        "|---|---|---|---|---|---|",
    ]
    for k in report.kernels:
        speed = f"{k.speedup:.2f}x" if k.speedup else "-"
        lines.append(f"| {k.name} | {k.file}:{k.line} | {k.status} | {k.reference_kind or '-'} | {speed} | {'; '.join(k.unsupported) or '-'} |")
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


def port_repository(root: Path, cfg: Settings, *, out: Path | None, trace: Path | None,
                    check_command: str | None, console: Console) -> int:
    started = time.monotonic()
    try:
        project = discover(root)
    except DiscoveryError as exc:
        raise UserError(str(exc)) from None
    out = (out or Path("port-out") / project.root.name).resolve()
    if out == project.root or project.root in out.parents:
        raise UserError(f"{out}: the output directory must be outside the repository being ported")
    out.mkdir(parents=True, exist_ok=True)
    writer = TraceWriter(trace or out / "trace.jsonl", config=cfg.masked(), secrets=cfg.secrets())
    state = PortState(out / "port_state.json")
    limits = Limits(timeout_s=cfg.limits.timeout_s, memory_mb=cfg.limits.memory_mb, cpu_s=cfg.limits.cpu_s)
    with writer, Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                          console=console, transient=True) as progress:
        writer.event("node_end", node="discover", data={
            "sources": [s.path for s in project.cuda_sources], "kernels": [k.__dict__ for k in project.kernels],
            "build": project.build.kind, "executables": [t.name for t in project.executables],
            "self_checks": project.self_checks})
        step = progress.add_task("translating", total=len(project.cuda_sources) + 2)
        from tools.cuda import runtime_include_dir

        compiler_id = compiler_version()

        def translate(source: str, path: str) -> FileTranslation:
            progress.update(step, description=f"translating {path}")
            key = content_hash(compiler_id, cfg.llm, path, source)
            if (done := state.get("translate", key)) is not None:
                result = FileTranslation(**done)
                writer.event("decision", node="translate", data={"file": path, "reused": True})
            else:
                result = _translate_with_compiler(source, path)
                state.put("translate", key, result.__dict__)
                writer.event("artifact", node="translate", data={"file": path, "code": result.cpp,
                                                                 "error": result.error, "unsupported": result.unsupported})
            progress.advance(step)
            return result

        tree = build_port_tree(project, out, translate, runtime_include_dir(), list(cfg.compiler.cxxflags))
        sandbox = open_sandbox(cfg.sandbox, limits=limits, image=cfg.docker_image)
        writer.event("tool_call", node="build", data={"sandbox": sandbox.mode, "makefile": str(tree.makefile)})
        targets = [t.name for t in project.executables]
        expected = read_expected(out / "original_output.txt")
        commands = [check_command] if check_command else default_check_commands(tree, targets, project.build.check_commands)
        built_key = tree_hash(tree.root, out / RUNTIME_DIR)
        check_key = content_hash(built_key, *commands, expected or "")
        try:
            progress.update(step, description="building with g++")
            if (done := state.get("build", built_key)) is not None and done["ok"]:
                build = BuildOutcome(True, done["output"])
                writer.event("decision", node="build", data={"reused": True})
            else:
                build = build_in_sandbox(tree, sandbox)
                state.put("build", built_key, {"ok": build.ok, "output": build.output[-4000:]})
                writer.event("tool_result", node="build", data={"ok": build.ok, "output": build.output[-4000:]})
            progress.advance(step)
            if not build.ok:
                check = CheckReport(command=None, passed=False, detail="the port did not build")
            elif (done := state.get("check", check_key)) is not None:
                check = CheckReport(**done)
                writer.event("decision", node="check", data={"reused": True, **done})
            else:
                if not sandbox.exists("src/Makefile.cpu"):  # the build was reused: build again in this sandbox
                    build_in_sandbox(tree, sandbox)
                progress.update(step, description="running the project's check")
                outcomes = [run_check(sandbox, c, expected_output=expected) for c in commands]
                for o in outcomes:
                    writer.event("tool_result", node="check", data={"command": o.command, "passed": o.passed,
                                                                    "detail": o.detail, "stdout": o.stdout[-4000:]})
                failed = [o for o in outcomes if not o.passed]
                shown = failed[0] if failed else outcomes[0] if outcomes else None
                check = CheckReport(command=" && ".join(commands) or None, passed=bool(outcomes) and not failed,
                                    detail=(f"{shown.command}: {shown.detail}" if shown else "no check command found"))
                state.put("check", check_key, check.model_dump())
                (out / "port_output.txt").write_text("\n".join(o.stdout for o in outcomes))
            progress.advance(step)
        finally:
            sandbox.close()
        reference = "gpu-output" if expected is not None else "project-check"
        report = PortReport(
            project=str(project.root), translator=cfg.llm, build_ok=build.ok, check=check,
            kernels=_kernel_reports(project, tree.translations, build.ok, check.passed, reference),
            unmapped_calls=[f"{c.name} ({c.file}:{c.line})" for c in tree.unmapped_calls],
            build_errors=[str(d) for d in build.diagnostics if d.severity == "error"][:50],
            time_s=time.monotonic() - started,
        )
        writer.event("decision", node="report", data=report.model_dump(mode="json"))
    write_reports(out, report)
    print_report(console, report)
    console.print(f"port tree: {out / 'src'}  report: {out / 'PORT_REPORT.md'}")
    return 0 if report.build_ok and report.check.passed and all(k.status == "correct" for k in report.kernels) else 1
