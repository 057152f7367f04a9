"""bench.evaluate: benchmark resolution, the report (JSON, Markdown, plots), and `agent eval` end to end."""

import json
import math
from pathlib import Path

import pytest

from bench.evaluate import BenchError, BenchTask, build_report, resolve, task_row, write_report
from tools.result import KernelResult, Times
from tools.spec import parse_task

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"


def _task(name: str, category: str, launches: bool):
    raw = {"name": name, "cuda_code": "__global__ void k(float* x) {}", "category": category,
           "buffers": [{"name": "x", "dtype": "float32", "shape": [4], "role": "output"}],
           "reference": {"kind": "python", "function": "m:f"}}
    if launches:
        raw["launches"] = [{"kernel": "k", "grid": [1], "block": [4], "args": ["x"]}]
    return BenchTask(Path(f"{name}.json"), parse_task(raw))


def _rows():
    results = [
        (_task("a", "elementwise", True), KernelResult(name="a", status="correct", speedup_vs_reference=4.0, time_s=Times(candidate=1, reference=4))),
        (_task("b", "elementwise", True), KernelResult(name="b", status="correct", speedup_vs_reference=0.25)),
        (_task("c", "reduction", False), KernelResult(name="c", status="incorrect", speedup_vs_reference=9.0,
                                                        reason="output 'x': 3 of 4 elements never written")),
        (_task("d", "reduction", True), KernelResult(name="d", status="compile_error")),
    ]
    return [task_row(t, r) for t, r in results]


def test_report_summary_follows_the_design():
    report = build_report("bench/data", "compiler", _rows())
    assert set(report) >= {"benchmark", "translator", "machine", "tasks", "summary"}
    row = report["tasks"][2]
    assert set(row) >= {"name", "category", "status", "compiled", "correct", "speedup", "launches_inferred"}
    assert row["speedup"] is None and row["launches_inferred"] is True  # incorrect: no speedup
    assert row["detail"] == "output 'x': 3 of 4 elements never written"  # a failure says why
    assert "detail" not in report["tasks"][0]
    s = report["summary"]
    assert (s["total"], s["compiled"], s["correct"]) == (4, 3, 2)
    assert math.isclose(s["geomean_speedup"], 1.0)  # sqrt(4 * 0.25), over correct tasks only
    assert s["faster_share"] == 0.25
    assert s["by_category"]["reduction"]["correct"] == 0 and s["by_category"]["reduction"]["geomean_speedup"] is None


def test_report_files(tmp_path):
    files = write_report(build_report("bench/data", "compiler", _rows()), tmp_path)
    names = {f.name for f in files}
    assert {"report.json", "report.md", "pass_rates.png", "speedup_by_category.png", "speedup_hist.png"} <= names
    assert json.loads((tmp_path / "report.json").read_text())["summary"]["total"] == 4
    md = (tmp_path / "report.md").read_text()
    assert "| elementwise | 2 |" in md and "| **all** | 4 |" in md
    assert (tmp_path / "pass_rates.png").read_bytes()[:4] == b"\x89PNG"


def test_resolve_rejects_what_is_no_benchmark(tmp_path):
    with pytest.raises(BenchError, match="no such file"):
        resolve(tmp_path / "missing", tmp_path)
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    with pytest.raises(BenchError, match="no kernel tasks"):
        resolve(tmp_path, tmp_path / "work")


@pytest.mark.skipif(not (DATA / "elementwise.json").is_file(), reason="bench/data not generated")
def test_resolve_shipped_benchmark_converts_records(tmp_path):
    tasks = resolve(DATA / "elementwise.json", tmp_path, limit=3).tasks
    assert len(tasks) == 3
    assert all(t.category == "elementwise" and t.task.launches for t in tasks)
    assert all(t.path.parent == tmp_path / "tasks" / "elementwise" for t in tasks)


@pytest.mark.skipif(not (DATA / "elementwise.json").is_file(), reason="bench/data not generated")
def test_agent_eval_on_a_generated_subset(tmp_path):
    """`agent eval` end to end: the default translator on the smallest shipped relu task."""
    import io

    from rich.console import Console

    from agent.commands.evaluate import run
    from agent.configuration import load_settings
    from bench.format import load_records, save_records

    relus = [r for r in load_records(DATA / "elementwise.json") if r.op_name == "relu"]
    smallest = min(relus, key=lambda r: math.prod(r.output_shape[0]))
    subset = tmp_path / "subset.json"
    save_records([smallest], subset)
    cfg = load_settings(llm="compiler", sandbox="local", jobs=1)
    cfg = cfg.model_copy(update={"budgets": cfg.budgets.model_copy(update={"max_iters": 1})})  # one translation: CI time
    status = run(subset, cfg, out=tmp_path / "report", limit=1, console=Console(file=io.StringIO(), width=200))
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    [task] = report["tasks"]
    assert task["name"] == smallest.name and task["category"] == "elementwise"
    assert task["launches_inferred"] is False
    assert task["status"] == "correct" and task["compiled"] and task["speedup"] > 0
    assert status == 0
    assert (tmp_path / "report" / "report.md").is_file()


@pytest.mark.skipif(not (DATA / "elementwise.json").is_file(), reason="bench/data not generated")
def test_per_category_sample_spreads_over_each_category(tmp_path):
    tasks = resolve(DATA, tmp_path, per_category=3).tasks
    by_category: dict[str, list[str]] = {}
    for t in tasks:
        by_category.setdefault(t.task.category, []).append(t.task.name)
    assert set(by_category) == {"block", "compute", "elementwise", "graph", "layout", "logic", "reduction"}
    assert all(len(names) == 3 for names in by_category.values())
    assert len({name.rsplit("_", 1)[0] for name in by_category["elementwise"]}) == 3  # three operators, not one
