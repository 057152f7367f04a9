"""The `agent` command line (typer + rich). Each command's work lives in agent/commands/."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from sandboxes.base import SandboxUnavailable

from .configuration import ConfigError, Settings, load_settings
from .errors import UserError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Port CUDA code to fast, correct CPU code.")
trace_app = typer.Typer(no_args_is_help=True, help="Inspect recorded traces.")
bench_app = typer.Typer(no_args_is_help=True, help="The HPCTransEval benchmark.")
config_app = typer.Typer(no_args_is_help=True, help="Configuration.")
app.add_typer(trace_app, name="trace")
app.add_typer(bench_app, name="bench")
app.add_typer(config_app, name="config")

console = Console()
err_console = Console(stderr=True)

LLM_HELP = "compiler (default) | openai:MODEL | anthropic:MODEL | openai-compatible:MODEL"
SANDBOX_HELP = "auto (Docker when a daemon answers, else local) | local | docker"


def settings(**overrides) -> Settings:
    return load_settings(**overrides)


def existing(path: Path, what: str = "path") -> Path:
    if not path.exists():
        raise UserError(f"{path}: no such {what}")
    if path.is_file():
        try:
            path.open("rb").close()
        except OSError as exc:
            raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    return path


@app.command()
def port(
    path: Path = typer.Argument(..., help="a CUDA repository, a kernel task file, or a directory of task files"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="output directory (default: ./port-out/NAME)"),
    llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j", help="kernels in parallel"),
    max_iters: Optional[int] = typer.Option(None, "--max-iters", help="translate attempts per kernel"),
    budget_usd: Optional[float] = typer.Option(None, "--budget-usd", help="LLM money per kernel"),
    trace: Optional[Path] = typer.Option(None, "--trace", help="trace file (default: OUT/trace.jsonl)"),
    run: Optional[list[str]] = typer.Option(
        None, "--run", help="repositories: a command that checks the port, run in the project's root (repeatable; "
        "replaces the project's own run, e.g. with smaller arguments)"),
    check_timeout: Optional[float] = typer.Option(None, "--check-timeout", help="repositories: seconds each check "
                                                  "command may run (default 300)"),
    check_first_try: Optional[float] = typer.Option(
        None, "--check-first-try", help="repositories: seconds a check command runs before a smaller run of it "
        "(fewer repetitions, a smaller size) is checked instead, where one can be made (default 60; 0: all of "
        "--check-timeout)"),
    check_memory: Optional[int] = typer.Option(None, "--check-memory", help="repositories: MiB of address space "
                                               "each check command may use (default: three quarters of this machine's memory)"),
    make_var: Optional[list[str]] = typer.Option(
        None, "--make-var", help="repositories: NAME=VALUE for make where it reads the project's Makefile, as "
        "`make NAME=VALUE` (repeatable; e.g. VERIFY=yes where the project checks its results only when asked)"),
    tune: Optional[bool] = typer.Option(None, "--tune/--no-tune", help="repositories: tune kernels on captured launches"),
    tune_budget: Optional[float] = typer.Option(None, "--tune-budget", help="repositories: seconds all kernels' "
                                                "tuning may take (default 90)"),
    expected_output: Optional[Path] = typer.Option(
        None, "--expected-output", help="repositories: the output of a run of the original (e.g. on a GPU); "
        "the port's printed numbers are compared with it, with tolerance"),
    ray: Optional[str] = typer.Option(None, "--ray", help="repositories: tune each kernel as a Ray task on this "
                                      "cluster, --jobs at once (HOST:PORT, ray://HOST:PORT, auto; default: the "
                                      "ray_address setting, else RAY_ADDRESS); needs the ray extra"),
) -> None:
    """Port a repository, a kernel task, or a directory of tasks to CPU code."""
    from .commands import port as command

    budgets = {}
    if max_iters is not None:
        budgets["max_iters"] = max_iters
    if budget_usd is not None:
        budgets["budget_usd"] = budget_usd
    cfg = settings(llm=llm, sandbox=sandbox, jobs=jobs, tune=tune, check_timeout_s=check_timeout, tune_budget_s=tune_budget,
                   check_first_try_s=check_first_try, check_memory_mb=check_memory, ray_address=ray, make_variables=make_var or None)
    if budgets:
        cfg = cfg.model_copy(update={"budgets": cfg.budgets.model_copy(update=budgets)})
    raise typer.Exit(command.run(existing(path), cfg, out=out, trace=trace, check_commands=run or None, console=console,
                                 expected_output=existing(expected_output, "file") if expected_output else None))


@app.command("eval")
def eval_(
    bench: Path = typer.Argument(..., help="a directory of task files or an HPCTransEval JSON file"),
    out: Path = typer.Option(Path("eval-report"), "-o", "--out", help="report directory"),
    limit: Optional[int] = typer.Option(None, "--limit", help="evaluate the first N tasks"),
    per_category: Optional[int] = typer.Option(None, "--per-category", help="evaluate N tasks of each category, spread over its operators"),
    llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
    jobs: Optional[int] = typer.Option(None, "--jobs", "-j"),
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
    ray: Optional[str] = typer.Option(None, "--ray", help="run each task on this Ray cluster (HOST:PORT, ray://HOST:PORT, "
                                      "auto; default: the ray_address setting, else RAY_ADDRESS); needs the ray extra"),
) -> None:
    """Score a translator on a benchmark: compiles, correct, speedup."""
    from .commands import evaluate as command

    cfg = settings(llm=llm, sandbox=sandbox, jobs=jobs)
    raise typer.Exit(command.run(existing(bench), cfg, out=out, limit=limit, per_category=per_category, console=console,
                                 ray=ray))


TASK_ARG = typer.Argument(..., help="kernel task JSON")
CANDIDATE_ARG = typer.Argument(..., help="CPU candidate (.cpp)")
RESULT_OPT = typer.Option(None, "-o", "--out", help="where to write result.json")
SANDBOX_OPT = typer.Option(None, "--sandbox", help=SANDBOX_HELP)


def _verify(task: Path, candidate: Path, out: Path | None, sandbox: str | None, *, timed: bool) -> None:
    from .commands import verify as command

    cfg = settings(sandbox=sandbox)
    raise typer.Exit(command.run(existing(task), existing(candidate), cfg, out=out, profile=timed, console=console))


@app.command()
def verify(task: Path = TASK_ARG, candidate: Path = CANDIDATE_ARG, out: Optional[Path] = RESULT_OPT,
           sandbox: Optional[str] = SANDBOX_OPT) -> None:
    """Check a CPU candidate against the task's reference."""
    _verify(task, candidate, out, sandbox, timed=False)


@app.command()
def profile(task: Path = TASK_ARG, candidate: Path = CANDIDATE_ARG, out: Optional[Path] = RESULT_OPT,
            sandbox: Optional[str] = SANDBOX_OPT) -> None:
    """Check and time a CPU candidate against the task's reference."""
    _verify(task, candidate, out, sandbox, timed=True)


@app.command()
def lower(
    cuda: Path = typer.Argument(..., help="CUDA source file"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="write the C++ here (default: stdout)"),
    kernel: Optional[list[str]] = typer.Option(None, "--kernel", "-k", help="only these kernels"),
) -> None:
    """Lower CUDA kernels to C++/OpenMP with the deterministic compiler."""
    from .commands import lower as command

    raise typer.Exit(command.run(existing(cuda, "file"), out=out, kernels=kernel or [], console=console))


@app.command()
def replay(
    trace: Path = typer.Argument(..., help="trace file (.jsonl)"),
    offline: bool = typer.Option(False, "--offline", help="take tool results from the trace too"),
) -> None:
    """Re-run a recorded run with the recorded LLM answers; report divergences."""
    from .commands import replay as command

    raise typer.Exit(command.run(existing(trace, "file"), offline=offline, console=console))


@trace_app.command("show")
def trace_show(trace: Path = typer.Argument(..., help="trace file (.jsonl)")) -> None:
    """Print a readable timeline of a trace."""
    from .commands import replay as command

    raise typer.Exit(command.show(existing(trace, "file"), console=console))


@app.command()
def tui(
    path: Optional[Path] = typer.Argument(None, help="a repository, task, directory of tasks, or trace"),
    no_start: bool = typer.Option(False, "--no-start", help="only show, do not start the run"),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="output directory (default: as `agent port`)"),
    llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
    sandbox: Optional[str] = typer.Option(None, "--sandbox", help=SANDBOX_HELP),
) -> None:
    """Interactive terminal UI for watching, steering and replaying ports."""
    from .commands import tui as command

    cfg = settings(llm=llm, sandbox=sandbox)
    raise typer.Exit(command.run(existing(path) if path else None, cfg, start=not no_start, out=out))


@bench_app.command("generate")
def bench_generate(
    out: Path = typer.Option(..., "-o", "--out", help="output directory"),
    ops: Optional[list[str]] = typer.Option(None, "--ops", help="operator names or categories"),
    graphs: int = typer.Option(0, "--graphs", help="computation graphs to generate"),
    seed: int = typer.Option(0, "--seed"),
    pairs: bool = typer.Option(False, "--pairs", help="also write CUDA/CPU training pairs (JSONL)"),
    tune_trials: int = typer.Option(
        0, "--tune-trials", help="MetaSchedule trials per workload for the C reference, measured here (0: untuned)"),
    ray: Optional[str] = typer.Option(None, "--ray", help="run each workload's TVM lowering and tuning on this Ray "
                                      "cluster (HOST:PORT, ray://HOST:PORT, auto; default: the ray_address setting, "
                                      "else RAY_ADDRESS); needs the ray extra"),
) -> None:
    """Generate HPCTransEval tasks with TVM."""
    from .commands import bench as command

    raise typer.Exit(command.generate(out, ops=ops or [], graphs=graphs, seed=seed, pairs=pairs, console=console,
                                      tune_trials=tune_trials, ray=ray, settings=settings()))


@config_app.command("show")
def config_show() -> None:
    """Print the effective configuration as agent.toml text (keys masked, on comment lines)."""
    cfg = settings()
    files = cfg.config_files()
    # Plain text, neither wrapped nor read as markup: `[budgets]` is a TOML table, not a style.
    console.print(f"# config files: {', '.join(map(str, files)) or '(none; defaults and AGENT_* env)'}\n{cfg.to_toml()}",
                  markup=False, highlight=False, soft_wrap=True, end="")


def _interrupted() -> None:
    from .runner import ignore_further_interrupts

    ignore_further_interrupts()
    err_console.print("[yellow]interrupted[/]: the trace and checkpoint are kept; run the same command to resume")


def main() -> None:
    try:
        # Without standalone mode click returns the command's exit code instead of raising it.
        code = app(standalone_mode=False)
        if code == 130:  # click turns Ctrl-C into this status instead of raising
            _interrupted()
        sys.exit(code if isinstance(code, int) else 0)
    except UserError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)  # text, not markup: [ray] stays
        sys.exit(exc.exit_code)
    except (ConfigError, SandboxUnavailable) as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)  # text, not markup: [ray] stays
        sys.exit(1)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        _interrupted()
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: missing argument, bad option value
        exc.show()
        sys.exit(exc.exit_code)
