"""The loop through the REAL openai and anthropic clients against local scripted servers."""

import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.configuration import load_settings
from agent.runner import run_tasks
from agent.trace import read_trace

sys.path.insert(0, str(Path(__file__).parent))
from llm_servers import Reply, ScriptedAnthropicServer, ScriptedOpenAIServer  # noqa: E402

TASK = Path(__file__).parent / "agent_fixtures" / "tasks" / "scale" / "task.json"
OPENAI_KEY = "sk-test-openai-7f3a9c2e1d4b"
ANTHROPIC_KEY = "sk-ant-test-5e8d2c7b9a1f"

GOOD_CODE = """#include <cstdint>
extern "C" void scale(const float* x, float* y, float alpha, int32_t n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) y[i] = alpha * x[i];
}"""
COMPILE_ERROR_CODE = GOOD_CODE.replace("y[i] = alpha", "y[i] = alpah")
WRONG_CODE = GOOD_CODE.replace("alpha * x[i]", "alpha + x[i]")


def answer(code: str) -> str:
    return f"Here is the CPU version.\n\n```cpp\n{code}\n```\n"


def quiet(tmp_path: Path) -> Console:
    return Console(file=(tmp_path / "console.txt").open("w"), width=120)


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)


def tool_verdicts(trace, tool):
    key = "ok" if tool == "compile" else "status"
    return [(e["data"]["attempt"], e["data"]["result"][key]) for e in trace.of(type="tool_result") if e["data"]["tool"] == tool]


def test_openai_run_needing_two_fixes_converges_and_keeps_keys_out_of_the_trace(tmp_path, monkeypatch, keys):
    script = [answer(COMPILE_ERROR_CODE), answer(WRONG_CODE), answer(GOOD_CODE)]
    with ScriptedOpenAIServer(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        cfg = load_settings(llm="openai:gpt-4o", sandbox="local", budgets={"max_iters": 3})
        [outcome] = run_tasks([TASK], cfg, out=tmp_path / "out", console=quiet(tmp_path))
    result = outcome.result
    assert result.status == "correct" and result.iterations == 3 and result.backend == "openai:gpt-4o"
    assert result.reference_kind == "c" and result.max_abs_err == 0.0
    assert result.tokens > 0 and result.cost_usd > 0
    assert (tmp_path / "out" / "scale" / "scale.cpp").read_text().strip() == GOOD_CODE
    assert json.loads((tmp_path / "out" / "scale" / "result.json").read_text())["status"] == "correct"

    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    assert tool_verdicts(trace, "compile") == [(1, False), (2, True), (3, True)]
    assert tool_verdicts(trace, "check") == [(2, "incorrect"), (3, "correct")]
    assert [e["data"]["next"] for e in trace.of("scale", type="decision")] == ["fix", "fix", "done"]
    # The failures went back into the next prompts as observations.
    prompts = [json.dumps(r.body) for r in server.requests]
    assert "alpah" in prompts[1] and "mismatch" in prompts[2]
    assert len(trace.of(type="llm_request")) == len(trace.of(type="llm_response")) == 3

    # The key went over the wire, and never into the trace.
    assert OPENAI_KEY in server.requests[0].headers.get("authorization", "")
    text = (tmp_path / "out" / "trace.jsonl").read_text()
    assert OPENAI_KEY not in text and ANTHROPIC_KEY not in text


def test_anthropic_budget_stops_a_model_that_never_converges_keeping_the_best(tmp_path, monkeypatch, keys):
    script = [answer(GOOD_CODE)] + [answer(WRONG_CODE)] * 5
    with ScriptedAnthropicServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        cfg = load_settings(llm="anthropic:claude-sonnet-4-5", sandbox="local", budgets={"max_iters": 2})
        [outcome] = run_tasks([TASK], cfg, out=tmp_path / "out", console=quiet(tmp_path))
        left = server.remaining
    assert left == 4  # two answers asked for, then the iteration budget stopped the loop
    result = outcome.result
    assert result.status == "correct" and result.iterations == 2
    assert (tmp_path / "out" / "scale" / "scale.cpp").read_text().strip() == GOOD_CODE  # attempt 1, the only correct one
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    decisions = [e["data"] for e in trace.of("scale", type="decision")]
    assert [d["next"] for d in decisions] == ["optimize", "done"]
    assert tool_verdicts(trace, "check") == [(1, "correct"), (2, "incorrect")]
    assert "iteration budget" in decisions[-1]["reason"]
    assert ANTHROPIC_KEY not in (tmp_path / "out" / "trace.jsonl").read_text()


def test_token_budget_and_truncated_answer(tmp_path, monkeypatch, keys):
    """A truncated answer is an observation and a retry; the token budget then ends the loop."""
    script = [Reply("```cpp\n#include <cstdint>\nextern \"C\" void scale(", finish="length", output_tokens=10, input_tokens=100),
              Reply(answer(COMPILE_ERROR_CODE), input_tokens=100, output_tokens=100)] + [answer(COMPILE_ERROR_CODE)] * 3
    configured_key = "sk-configured-3c1e9b7a5f"  # a key in the configuration, not just the environment
    monkeypatch.setenv("AGENT_OPENAI_API_KEY", configured_key)
    with ScriptedOpenAIServer(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        cfg = load_settings(llm="openai:gpt-4o", sandbox="local", budgets={"max_iters": 6, "max_tokens": 250})
        [outcome] = run_tasks([TASK], cfg, out=tmp_path / "out", console=quiet(tmp_path))
    assert outcome.result.status == "compile_error" and outcome.result.iterations == 2
    trace = read_trace(tmp_path / "out" / "trace.jsonl")
    llm_obs = [e["data"] for e in trace.of(type="observation") if e["data"]["kind"] == "llm"]
    assert llm_obs and llm_obs[0]["attempt"] == 1
    decisions = [e["data"] for e in trace.of("scale", type="decision")]
    assert decisions[0]["next"] == "fix" and "token budget" in decisions[-1]["reason"]
    assert configured_key in server.requests[0].headers.get("authorization", "")
    assert trace.header["config"]["openai_api_key"] == "[redacted]"
    assert configured_key not in (tmp_path / "out" / "trace.jsonl").read_text()
