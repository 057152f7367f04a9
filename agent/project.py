"""`agent port REPO`: port a whole CUDA project to a CPU build that passes its own check.

Steps (each traced, each a node of the graph in agent/port_graph.py, checkpointed): discover
-> translate every CUDA source into the port tree -> build with g++ in a sandbox -> run the
project's check (or --run CMD) -> capture each kernel's launch, tune it, link the tuned
versions back and check again -> report. The user's repository is only read; everything is
written under OUT, by one run at a time (OUT/port.lock).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from sandboxes import SandboxUnavailable
from tools.project.check import default_check_commands, read_expected
from tools.project.discover import DiscoveryError, Project, discover

from .configuration import Settings
from .errors import UserError
from .output_lock import output_lock
from .port_graph import PortContext, content_hash, run_port, tree_hash, where
from .port_report import CheckReport, KernelReport, PortReport, print_report, write_reports
from .trace import TraceWriter


def port_repository(root: Path, cfg: Settings, *, out: Path | None, trace: Path | None,
                    check_commands: list[str] | None, console: Console, expected_output: Path | None = None) -> int:
    """Exit status 0 only where the port built, passed its check and every kernel is correct. A
    defect of ours mid-port still ends in PORT_REPORT.md (with what was found and where it
    failed); what was written under OUT stays, and the next run resumes from it."""
    started = time.monotonic()
    try:
        project = discover(root, cfg.make_variables)
    except DiscoveryError as exc:
        raise UserError(str(exc)) from None
    out = (out or Path("port-out") / project.root.name).resolve()
    if out == project.root or project.root in out.parents:
        raise UserError(f"{out}: the output directory must be outside the repository being ported")
    with output_lock(out):
        try:
            return _port(project, cfg, out, trace, check_commands, console, expected_output, started)
        except (UserError, SandboxUnavailable, KeyboardInterrupt):  # the user's to fix: one line, no report
            raise
        except Exception as exc:
            cause = f"internal error: {type(exc).__name__}: {exc} ({where(exc)})"
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
    from .runner import CHECKPOINT_DB, trace_config

    from .ray_runner import check_reachable, import_ray, ray_address

    address = ray_address(cfg) if cfg.tune else None
    if address is not None:
        import_ray()
        check_reachable(address)  # one line, before any work
    if expected_output is not None:  # kept in OUT so that later runs compare with it too
        (out / "original_output.txt").write_text(expected_output.read_text(errors="replace"))
    expected = read_expected(out / "original_output.txt")
    targets = [t.name for t in project.executables]
    commands = list(check_commands) if check_commands else default_check_commands(targets, project.build.check_commands, project.build.check_dir)
    writer = TraceWriter(trace or out / "trace.jsonl", config=cfg.masked(), secrets=cfg.secrets())
    with writer, Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                          console=console, transient=True) as progress:
        step = progress.add_task("porting", total=None)
        ctx = PortContext(project, cfg, out, writer, console, commands, expected, started=started,
                          on_step=lambda text: progress.update(step, description=text), ray_address=address)
        # What the port depends on: a pass interrupted on these same inputs is resumed.
        inputs = content_hash(tree_hash(project.root), json.dumps(trace_config(cfg), sort_keys=True), *commands,
                              expected or "", ctx.compiler_id, *ctx.inputs.fingerprint)
        report = run_port(ctx, inputs, out / CHECKPOINT_DB)
    print_report(console, report)
    console.print(f"port tree: {out / 'src'}  report: {out / 'PORT_REPORT.md'}")
    return 0 if report.ok else 1
