"""Replay of the traces shipped in traces/ (offline and re-running the tools), and `agent trace show`."""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.commands import replay
from agent.errors import UserError
from agent.trace import read_trace

TRACES = Path(__file__).parent.parent / "traces"
SHIPPED = ["compiler_scale.jsonl", "openai_two_fixes.jsonl"]


def console(tmp_path: Path, name: str = "console.txt") -> tuple[Console, Path]:
    path = tmp_path / name
    return Console(file=path.open("w"), width=200), path


def recorded_statuses(path: Path) -> list[str]:
    return [e["data"]["status"] for e in read_trace(path).events if e["type"] == "node_end" and e["node"] == "kernel"]


@pytest.mark.parametrize("name", SHIPPED)
def test_offline_replay_of_a_shipped_trace_reproduces_it(name, tmp_path, monkeypatch):
    assert recorded_statuses(TRACES / name) == ["correct"]
    out, text = console(tmp_path)
    assert replay.run(TRACES / name, offline=True, console=out, out=tmp_path) == 0
    out.file.close()
    assert "the replay reproduced the recorded run" in text.read_text()


def test_replay_reruns_tools_and_reports_where_results_diverge(tmp_path, monkeypatch):
    """Re-running the tools on the LLM trace: recorded answers drive the model; a doctored
    tool result in the trace shows up as exactly that divergence."""
    monkeypatch.setenv("AGENT_SANDBOX", "local")
    lines = (TRACES / "openai_two_fixes.jsonl").read_text().splitlines()
    doctored = []
    for line in lines:
        event = json.loads(line)
        if event.get("type") == "tool_result" and event["data"]["tool"] == "compile" and event["data"]["attempt"] == 1:
            event["data"]["result"] = {"ok": True, "observations": []}  # the recording now claims attempt 1 compiled
        doctored.append(json.dumps(event))
    path = tmp_path / "doctored.jsonl"
    path.write_text("\n".join(doctored) + "\n")

    out, text = console(tmp_path)
    assert replay.run(path, offline=False, console=out, out=tmp_path) == 1
    out.file.close()
    report = text.read_text()
    assert "divergences from the recorded run" in report
    assert "compile attempt 1" in report
    new_trace = Path(report.split("new trace: ")[1].split()[0])
    replayed = read_trace(new_trace)
    assert [e["data"]["result"]["status"] for e in replayed.of(type="tool_result") if e["data"]["tool"] == "check"] == ["incorrect", "correct"]
    assert [e["data"]["next"] for e in replayed.of(type="decision")] == ["fix", "fix", "done"]
    assert len(replayed.of(type="llm_response")) == 3  # every answer came from the recording: no network


def test_trace_show_prints_a_timeline(monkeypatch, capsys):
    from agent.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setattr(sys, "argv", ["agent", "trace", "show", str(TRACES / "openai_two_fixes.jsonl")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    for expected in ("llm_request", "llm_response", "tool_result", "compile: failed", "check: incorrect", "-> fix", "scale: correct"):
        assert expected in text, expected


def test_show_and_replay_refuse_a_file_that_is_no_trace(tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("hello\n")
    out, _ = console(tmp_path)
    with pytest.raises(UserError, match="notes.jsonl"):
        replay.show(bad, console=out)
    with pytest.raises(UserError, match="notes.jsonl"):
        replay.run(bad, console=out)


def test_a_users_steering_replaces_the_decision_it_overrode():
    events = [
        {"type": "node_start", "node": "decide", "data": {}},
        {"type": "decision", "node": "decide", "data": {"next": "done", "reason": "no gain"}},
        {"type": "decision", "node": "user", "data": {"next": "optimize", "reason": "try again"}},
        {"type": "node_start", "node": "translate", "data": {}},
        {"type": "decision", "node": "decide", "data": {"next": "fix", "reason": "incorrect"}},
        {"type": "node_start", "node": "translate", "data": {}},
        {"type": "decision", "node": "user", "data": {"next": "continue", "translator": "openai:x"}},
        {"type": "decision", "node": "decide", "data": {"next": "done", "reason": "budget"}},
    ]
    assert [d["next"] for d in replay.recorded_decisions(events)] == ["optimize", "fix", "done"]


PORTS = Path(__file__).parent / "agent_fixtures" / "heat2d_port"
PORT_TRACE = PORTS / "trace.jsonl"


def shown(path: Path, tmp_path: Path) -> str:
    out, text = console(tmp_path, "show.txt")
    assert replay.show(path, console=out) == 0
    out.file.close()
    return text.read_text()


@pytest.mark.parametrize("name", ["trace.jsonl", "before_port_graph.jsonl"])
def test_trace_show_says_what_each_step_of_a_repository_port_did(name, tmp_path):
    text = shown(PORTS / name, tmp_path)
    for expected in ("2 CUDA source(s), 1 kernel(s) (heat_step at heat.cu:4); build: cmake; executables: heat2d",
                     "heat.cu translated to C++ (270 lines)", "main.cu translated to C++ (249 lines)",
                     "build: ok", "./heat2d: passed (exit 0; printed PASS", "captured the launches of heat_step",
                     "report: build ok, check passed; heat_step correct"):
        assert expected in text, expected
    assert re.search(r"heat_step: tuned, 1\.5\dx vs the untuned OpenMP port \(compiler, 3 iterations\)", text)
    assert "None" not in text


def test_trace_show_prints_brackets_in_events_as_written(tmp_path):
    # Rich markup would take "[optimization/info]" (and a source line's "x[i]") for a style and drop it.
    text = shown(TRACES / "compiler_scale.jsonl", tmp_path)
    assert "[optimization/info]" in text
    assert "profile: correct, 7.75e-06x vs the C reference" in text


def test_replaying_a_port_trace_replays_the_kernel_runs_beside_it(tmp_path):
    port_out = tmp_path / "port-out"
    (port_out / "kernels").mkdir(parents=True)
    shutil.copy(PORT_TRACE, port_out / "trace.jsonl")
    shutil.copy(TRACES / "compiler_scale.jsonl", port_out / "kernels" / "trace.jsonl")  # the tuning run's trace
    out, text = console(tmp_path)
    assert replay.run(port_out / "trace.jsonl", offline=True, console=out, out=tmp_path) == 0
    out.file.close()
    report = text.read_text()
    assert f"its kernels ran in {port_out / 'kernels' / 'trace.jsonl'}" in report
    assert "the replay reproduced the recorded run" in report


def test_replaying_a_port_trace_without_its_kernel_runs_names_the_trace_to_replay(tmp_path):
    shutil.copy(PORT_TRACE, tmp_path / "trace.jsonl")
    out, _ = console(tmp_path)
    with pytest.raises(UserError, match=r"OUT/kernels/trace.jsonl, and there is none at .*kernels/trace.jsonl"):
        replay.run(tmp_path / "trace.jsonl", offline=True, console=out)


def _events(name: str) -> list[dict]:
    return read_trace(TRACES / name).events


def _with_code(events: list[dict], attempt: int, edit) -> list[dict]:
    """A copy of the events with one attempt's candidate code edited."""
    out = []
    for e in events:
        if e["type"] == "artifact" and e["data"].get("role") == "candidate" and e["data"]["attempt"] == attempt:
            e = {**e, "data": {**e["data"], "code": edit(e["data"]["code"])}}
        out.append(e)
    return out


def test_the_task_directorys_absolute_path_is_an_expected_difference():
    recorded = _events("compiler_scale.jsonl")
    task_dir = "/work/main/tests/agent_fixtures/tasks/scale"
    assert f"{task_dir}/kernel.cu" in next(e["data"]["code"] for e in recorded if e["data"].get("role") == "candidate")
    elsewhere = _with_code(recorded, 1, lambda code: code.replace(task_dir, "/tmp/agent-replay-x1/scale"))
    diverged, expected = replay.compare_events("scale", recorded, elsewhere)
    assert diverged == []
    [difference] = expected
    assert difference.where == "artifact attempt-1.cpp" and difference.why == replay.PATHS_DIFFER
    assert "/tmp/agent-replay-x1/scale/kernel.cu" in difference.replayed


def test_code_an_optimizer_kept_by_timing_is_an_expected_difference_and_other_code_is_not():
    recorded = _events("compiler_scale.jsonl")
    optimized = {e["data"]["attempt"] for e in recorded if e["type"] == "observation"
                 and e["data"].get("kind") == "optimization" and "ratio" in e["data"]["data"]}
    assert optimized == {2}  # attempt 2 measured the optimizer's alternatives
    other_choice = _with_code(recorded, 2, lambda code: code.replace("// tools.optimize: dynamic_schedule", "// tools.optimize: specialize"))
    diverged, expected = replay.compare_events("scale", recorded, other_choice)
    assert diverged == [] and [(d.where, d.why) for d in expected] == [("artifact attempt-2.cpp", replay.TIMING_CHOSE_CODE)]
    changed_lowering = _with_code(recorded, 1, lambda code: code + "// one more line\n")
    diverged, expected = replay.compare_events("scale", recorded, changed_lowering)
    assert [d.where for d in diverged] == ["artifact attempt-1.cpp"] and expected == []
    assert diverged[0].replayed.startswith("line ") and "one more line" in diverged[0].replayed


def test_only_decisions_on_a_correct_optimized_attempt_are_timing_driven():
    recorded = _events("compiler_scale.jsonl")
    decisions = [e["data"]["next"] for e in recorded if e["type"] == "decision" and e["node"] == "decide"]
    assert decisions[:2] == ["optimize", "optimize"]  # after the faithful lowering, then after optimized attempt 2
    timed = replay.timing_driven_decisions(recorded)
    assert "decision 1" not in timed and "decision 2" in timed


def test_a_replay_that_differs_only_in_a_timing_driven_choice_exits_0(tmp_path):
    """The recording stopped after its optimized attempt 2 where this replay's timings say go on:
    an expected difference, reported, and the replay still reproduces the run."""
    lines = (TRACES / "compiler_scale.jsonl").read_text().splitlines()
    doctored, decides = [], 0
    for line in lines:
        event = json.loads(line)
        if event.get("type") == "decision" and event.get("node") == "decide":
            decides += 1
            if decides == 2:
                event["data"] = {"next": "done", "reason": "correct; the last optimization found no further gain"}
        doctored.append(json.dumps(event))
    path = tmp_path / "stopped.jsonl"
    path.write_text("\n".join(doctored) + "\n")
    text = tmp_path / "console.txt"
    out = Console(file=text.open("w"), width=400)  # each difference on one line
    assert replay.run(path, offline=True, console=out, out=tmp_path) == 0
    out.file.close()
    report = text.read_text()
    assert "expected differences (not counted)" in report and "decision 2" in report
    assert "whether to optimize again follows the measured gain" in report
    assert "the replay reproduced the recorded run (apart from 1 expected difference(s))" in report
