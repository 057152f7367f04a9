"""`agent port` with the default `compiler` translator, and its errors."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.commands import port
from agent.configuration import load_settings
from agent.trace import read_trace
from tools.result import KernelResult

TESTS = Path(__file__).parent
CORPUS = ["vector_add", "matrix_add_2d"]  # tests/kernels, written for the compiler's corpus


def test_compiler_ports_corpus_tasks_end_to_end_without_network(tmp_path):
    tasks = tmp_path / "tasks"
    for name in CORPUS:
        shutil.copytree(TESTS / "kernels" / name, tasks / name)
    out = tmp_path / "out"
    console = Console(file=(tmp_path / "console.txt").open("w"), width=160)
    # The default configuration (optimizer included), two kernels at a time.
    assert port.run(tasks, load_settings(sandbox="local", jobs=2), out=out, console=console) == 0
    console.file.close()
    printed = (tmp_path / "console.txt").read_text()
    assert "sandbox: local" in printed and "port results" in printed
    for name in CORPUS:
        result = KernelResult.read(out / name)
        assert result.status == "correct", name
        assert result.backend == "compiler" and result.tokens == 0 and result.cost_usd == 0
        assert result.reference_kind == "python" and result.time_s.candidate and result.speedup_vs_reference
        assert result.trace == str(out / "trace.jsonl")
        assert 'extern "C" void ' + name in (out / name / f"{name}.cpp").read_text()
    trace = read_trace(out / "trace.jsonl")
    assert not trace.of(type="llm_request")  # the compiler asks no model
    assert trace.events[0]["node"] == "run" and trace.events[0]["data"]["sandbox"]["kind"] == "local"
    for name in CORPUS:
        candidates = [e["data"] for e in trace.of(name, type="artifact") if e["data"]["role"] == "candidate"]
        assert candidates[0]["attempt"] == 1 and candidates[0]["mode"] == "translate" and "extern" in candidates[0]["code"]
        assert all(c["mode"] == "optimize" for c in candidates[1:])  # anything after the lowering came from the optimizer


def cli(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """`agent ARGS` in this process (the real entry point); returns (exit status, stderr)."""
    from agent.cli import main

    monkeypatch.setattr(sys, "argv", ["agent", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    return exit_.value.code, capsys.readouterr().err


def test_cli_errors_are_one_clear_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "AGENT_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "x", "buffers": [')
    code, err = cli(monkeypatch, capsys, "port", str(bad))
    assert code == 1 and "bad.json" in err and "not valid JSON" in err

    task = TESTS / "agent_fixtures" / "tasks" / "scale" / "task.json"
    code, err = cli(monkeypatch, capsys, "port", str(task), "--llm", "openai:gpt-4o")
    assert code == 1 and "API key" in err
    assert not (tmp_path / "port-out").exists()  # refused before any work


def test_task_directory_discovery(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"name": "a", "cuda_code": "", "buffers": []}))
    (tmp_path / "notes.json").write_text('{"title": "not a task"}')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "task.json").write_text(json.dumps({"name": "b", "cuda": "k.cu", "buffers": []}))
    assert port.task_files(tmp_path) == [tmp_path / "a.json", tmp_path / "sub" / "task.json"]
    assert port.task_files(tmp_path / "sub" / "task.json") == [tmp_path / "sub" / "task.json"]
    (tmp_path / "empty").mkdir()
    assert port.task_files(tmp_path / "empty") is None
    assert port.default_out(tmp_path / "sub" / "task.json") == Path("port-out/sub")
    assert port.default_out(tmp_path / "a.json") == Path("port-out/a")
    assert port.default_out(tmp_path / "sub") == Path("port-out/sub")


def test_candidates_cannot_read_the_task_directory():
    """The kernel's sandbox masks the task directory, where references and golden files live."""
    from agent.runner import open_kernel_sandbox
    from tools.spec import load_task

    task = load_task(TESTS / "agent_fixtures" / "tasks" / "scale" / "task.json")
    box = open_kernel_sandbox(load_settings(sandbox="local"), task)
    try:
        if not getattr(box, "bwrap", False):
            pytest.skip("bubblewrap is not usable here: the local sandbox cannot mask host paths")
        peek = box.run(["cat", str(task.base_dir / "ref.c")])
        assert peek.returncode != 0 and "scale_ref" not in peek.stdout
    finally:
        box.close()


def test_a_run_into_an_output_directory_in_use_is_refused(tmp_path):
    """OUT is held by this process: `agent port TASK -o OUT` fails at once, naming the holder."""
    import os
    import subprocess

    from agent.output_lock import output_lock

    out = tmp_path / "out"
    task = TESTS / "agent_fixtures" / "tasks" / "scale" / "task.json"
    with output_lock(out):
        result = subprocess.run([sys.executable, "-m", "agent", "port", str(task), "-o", str(out), "--sandbox", "local"],
                                capture_output=True, text=True, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"pid {os.getpid()}" in result.stderr and str(out) in result.stderr
    assert not (out / "trace.jsonl").exists()


def test_a_search_a_budget_cut_short_is_searched_anew_only_when_asked(tmp_path):
    """The port's tune node asks again (`again`) for a kernel an earlier run left to a rerun: its
    finished search, stopped by the wall-time budget, is then searched anew in a thread of its own;
    without `again`, a finished search is not redone."""
    from agent.port_graph import KernelRuns

    task = tmp_path / "tasks" / "vector_add"
    shutil.copytree(TESTS / "kernels" / "vector_add", task)
    runs = KernelRuns(load_settings(sandbox="local"), tmp_path / "out")
    try:
        def run(**kwargs):
            return runs.run(task / "task.json", lambda *_: None, 0.01, **kwargs)

        first = run()
        assert first.result.status == "correct" and "wall-time budget" in first.result.stopped
        assert run().skipped and run().thread_id == first.thread_id
        second = run(again=True)
        assert not second.skipped and second.thread_id == f"{first.thread_id}~2" and second.result.stopped
        latest = run()
        assert latest.skipped and latest.thread_id == f"{first.thread_id}~2"  # the latest search is the kernel's
    finally:
        runs.close()
