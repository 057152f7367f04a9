"""What a new user meets first (issue 28): `agent eval` without the optional bench extra,
progress when the output is not a terminal, tables that fold instead of cropping, and every
printed speedup saying what it is measured against."""

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.progress import PlainProgress
from agent.runner import KernelOutcome, summary_table
from tools.observations import Observation
from tools.result import KernelResult
from tools.verify import VerifyReport
from tools.verify.profile import ProfileReport, TimingStats

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"

WITHOUT_MATPLOTLIB = """
import sys
sys.modules["matplotlib"] = None  # as if the bench extra were not installed
from agent.cli import main
sys.argv = ["agent", *sys.argv[1:]]
main()
"""


def rendered(renderable, width: int = 80) -> str:
    out = Console(file=io.StringIO(), width=width, color_system=None)
    out.print(renderable)
    return out.file.getvalue()


@pytest.mark.skipif(not (DATA / "elementwise.json").is_file(), reason="bench/data not generated")
def test_eval_piped_without_the_bench_extra(tmp_path):
    """The smallest shipped relu task, output to a pipe, matplotlib unimportable: the report is
    written, one line says why there are no plots and how to get them, and the steps show as lines."""
    from bench.format import load_records, save_records

    relus = [r for r in load_records(DATA / "elementwise.json") if r.op_name == "relu"]
    save_records([min(relus, key=lambda r: math.prod(r.output_shape[0]))], tmp_path / "relu.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_")}
    env.update(XDG_CONFIG_HOME=str(tmp_path / "xdg"), NO_COLOR="1", COLUMNS="80", AGENT_SANDBOX="local",
               AGENT_BUDGETS__MAX_ITERS="1")  # one translation: test time
    proc = subprocess.run([sys.executable, "-c", WITHOUT_MATPLOTLIB, "eval", "relu.json", "-o", "report"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    [task] = json.loads((tmp_path / "report" / "report.json").read_text())["tasks"]
    assert task["status"] == "correct"
    assert (tmp_path / "report" / "report.md").is_file() and not list((tmp_path / "report").glob("*.png"))
    [skipped] = [line for line in proc.stdout.splitlines() if "plots" in line and "skipped" in line]
    assert skipped.startswith("plots skipped: matplotlib cannot be imported") and "pip install 'cuda2cpu-agent[bench]'" in skipped
    progress = [line for line in proc.stdout.splitlines() if line.startswith("[") and f"] {task['name']}: " in line]
    assert any(line.endswith(": compile") for line in progress) and any(line.endswith(": finished") for line in progress)
    assert any("x vs the C reference" in line for line in progress)  # the profile step's speedup
    assert "(speedup vs the C reference)" in proc.stdout


def test_plain_progress_prints_each_new_step_once():
    out = Console(file=io.StringIO(), width=80)
    with PlainProgress(out) as progress:
        bar = progress.add_task("scale", total=None, name="scale", step="waiting")
        progress.update(bar, step="compile")
        progress.update(bar, step="compile")  # unchanged: no second line
        progress.advance(bar)
        progress.update(bar, step="[check] u[i]")  # printed as written, not read as markup
    lines = [line.split("] ", 1)[1] for line in out.file.getvalue().splitlines()]
    assert lines == ["scale: waiting", "scale: compile", "scale: [check] u[i]"]


def test_port_results_head_every_column_fold_long_names_and_say_what_speedups_are_against():
    name = "a_kernel_name_much_longer_than_its_column_on_an_eighty_column_terminal"
    result = KernelResult(name=name, status="correct", reference_kind="lowered", speedup_vs_reference=26.8,
                          iterations=3, backend="compiler")
    text = rendered(summary_table([KernelOutcome(name, "t", result, Path("out"), resumed=True)]))
    assert "port results (speedup vs the serial C++ reference)" in text
    assert "note" in text and "resumed" in text
    assert "…" not in text  # folded, not cropped: every character of the name is printed
    kernel_column = "".join(line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│"))
    assert kernel_column == name


def test_eval_summary_says_what_its_speedups_are_against():
    from agent.commands.evaluate import summary_table as eval_table
    from bench.evaluate import build_report

    row = {"name": "relu_0", "category": "elementwise", "status": "correct", "compiled": True, "correct": True,
           "speedup": 2.5, "launches_inferred": False, "reference_kind": "c", "time_s": {}, "iterations": 1}
    text = rendered(eval_table(build_report("bench/data", "compiler", [row])), width=120)
    assert "(speedup vs the C reference)" in text and "2.5x" in text
    assert "faster than the C reference" in " ".join(text.split())  # the caption, wrapped to the table's width


def _verify_output(observations: list[Observation], prof: ProfileReport | None = None) -> str:
    from agent.commands.verify import print_report, result_record

    report = VerifyReport(status="correct" if prof else "incorrect", reference_kind="lowered", seeds=[42], threads=[1, 2],
                          observations=observations)
    out = Console(file=io.StringIO(), width=200, color_system=None)
    print_report(out, "vadd", result_record("vadd", report, prof, 2), report, prof)
    return out.file.getvalue()


def test_verify_names_the_reference_its_speedup_is_against():
    stats = TimingStats(median_s=1e-3, min_s=1e-3, max_s=1e-3, spread=0.0, runs=5)
    prof = ProfileReport(candidate=stats, reference=stats, speedup_vs_reference=26.8, threads=2, correct_after_timing=True,
                         reference_kind="lowered")
    assert "speedup vs the serial C++ reference" in _verify_output([], prof)


def test_an_observation_that_begins_with_its_kind_is_not_said_twice():
    text = _verify_output([Observation(kind="mismatch", severity="info", message="mismatches in 2 of 4 runs (seed, threads): [(42, 2)]"),
                           Observation(kind="runtime", message="segfault in [k]")])
    assert "mismatch mismatches" not in text and "mismatches in 2 of 4 runs (seed, threads): [(42, 2)]" in text
    assert "runtime segfault in [k]" in text
