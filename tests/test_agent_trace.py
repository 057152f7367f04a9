"""Traces: format, secret scrubbing, reading a trace cut off by a kill, continuing a trace."""

import json

import pytest

from agent.trace import REDACTED, TraceError, TraceWriter, read_trace, scrub


def test_header_then_events_in_design_format(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, argv=["agent", "port", "x.json"], config={"llm": "compiler"}) as writer:
        writer.event("node_start", kernel="k", node="plan", data={"attempt": 0})
        writer.event("decision", kernel="k", node="decide", data={"next": "done"})
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    header = lines[0]
    assert header["trace_version"] == 1
    assert set(header) == {"trace_version", "run_id", "started", "argv", "config", "versions"}
    assert header["argv"] == ["agent", "port", "x.json"]
    for event in lines[1:]:
        assert set(event) == {"seq", "t", "kernel", "node", "type", "data"}
    assert [e["seq"] for e in lines[1:]] == [1, 2]
    assert [e["type"] for e in lines[1:]] == ["node_start", "decision"]


def test_unknown_event_type_is_refused(tmp_path):
    with TraceWriter(tmp_path / "t.jsonl") as writer:
        with pytest.raises(ValueError, match="unknown trace event type"):
            writer.event("chatter")


def test_secrets_and_credential_fields_never_written(tmp_path):
    key = "sk-live-0123456789abcdef"
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, config={"openai_api_key": key, "llm": "openai:gpt-4o"}, secrets=[key]) as writer:
        writer.event("llm_request", data={
            "headers": {"Authorization": f"Bearer {key}", "x-api-key": "other-credential-value", "Content-Type": "json"},
            "body": {"messages": [{"content": f"my key is {key}!"}], "api_key": "also-secret-value"},
        })
    text = path.read_text()
    assert key not in text
    assert "other-credential-value" not in text and "also-secret-value" not in text
    event = read_trace(path).events[0]["data"]
    assert event["headers"]["Authorization"] == REDACTED
    assert event["headers"]["x-api-key"] == REDACTED
    assert event["headers"]["Content-Type"] == "json"  # ordinary fields stay
    assert event["body"]["messages"][0]["content"] == f"my key is {REDACTED}!"


def test_scrub_leaves_short_values_and_plain_data_alone():
    assert scrub({"a": [1, "xyz", None]}, ["xy"]) == {"a": [1, "xyz", None]}  # a 2-char "secret" is not scrubbed
    assert scrub("token=abcd1234", ["abcd1234"]) == f"token={REDACTED}"


def test_cut_off_last_line_is_skipped_and_a_continued_trace_stays_whole(tmp_path):
    path = tmp_path / "t.jsonl"
    with TraceWriter(path) as writer:
        writer.event("node_start", kernel="k", node="plan")
    with path.open("a") as fh:
        fh.write('{"seq": 2, "t": 1.0, "kernel": "k", "no')  # a write cut off by SIGKILL
    trace = read_trace(path)
    assert len(trace.events) == 1 and trace.bad_lines == [3]
    with TraceWriter(path) as writer:  # the resumed run continues the same file
        assert writer.resumed
        writer.event("node_end", kernel="k", node="plan")
    trace = read_trace(path)
    assert [e["type"] for e in trace.events] == ["node_start", "node_end"]
    assert [e["seq"] for e in trace.events] == [1, 2]
    assert trace.bad_lines == [3]


def test_not_a_trace_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(TraceError, match="not an agent trace"):
        read_trace(bad)
    with pytest.raises(TraceError, match="no such trace file"):
        read_trace(tmp_path / "missing.jsonl")
