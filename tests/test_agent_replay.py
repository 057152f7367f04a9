"""Replay of the traces shipped in traces/ (offline and re-running the tools), and `agent trace show`."""

import json
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
