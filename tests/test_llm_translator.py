"""LLMTranslator end to end through the real clients and the scripted servers."""

from __future__ import annotations

import json

import pytest

from agent.configuration import Settings
from agent.llm import LLMError, ScriptedModel
from agent.llm.anthropic_backend import AnthropicModel
from agent.llm.openai_backend import OpenAIModel
from agent.translators.base import TranslateRequest
from agent.translators.llm import LLMTranslator, build_prompt
from llm_servers import Error, Malformed, Reply, ScriptedAnthropicServer, ScriptedOpenAIServer
from tools.observations import Observation
from tools.spec import parse_task

CUDA = """__global__ void scale_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}"""
CPP = 'extern "C" void scale(float* x, float* y, int32_t n) {\n#pragma omp parallel for\n  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n}'
KEY = "sk-test-translator-secret"


@pytest.fixture
def task():
    return parse_task({
        "name": "scale", "cuda_code": CUDA,
        "buffers": [{"name": "x", "dtype": "float32", "shape": [1000], "role": "input"},
                    {"name": "y", "dtype": "float32", "shape": [1000], "role": "output"}],
        "scalars": [{"name": "n", "dtype": "int32", "value": 1000}],
        "launches": [{"kernel": "scale_kernel", "grid": [4], "block": [256], "args": ["x", "y", "n"]}],
        "reference": {"kind": "lowered"},
        "tolerance": {"rtol": 1e-6, "atol": 0},
    })


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return Settings(openai_api_key=KEY, anthropic_api_key=KEY, llm_max_retries=2)


def no_sleep(_: float) -> None:
    pass


def openai_translator(settings, srv, **kw) -> LLMTranslator:
    model = OpenAIModel(kw.pop("model", "gpt-4o"), settings, base_url=srv.base_url, backoff_base_s=0.001,
                        sleep=no_sleep, **kw)
    return LLMTranslator(model, settings)


def test_structured_translation_via_responses_api(task, settings) -> None:
    answer = json.dumps({"code": CPP, "notes": "one parallel loop"})
    with ScriptedOpenAIServer([Reply(answer, input_tokens=1200, output_tokens=300)]) as srv:
        out = openai_translator(settings, srv).translate(TranslateRequest(task=task, cuda_source=CUDA))
        sent = srv.requests[0].body
    assert out.code == CPP + "\n" and out.notes == "one parallel loop" and not out.observations
    assert (out.input_tokens, out.output_tokens) == (1200, 300)
    assert out.cost_usd == pytest.approx((1200 * 2.5 + 300 * 10) / 1e6)
    assert sent["text"]["format"]["type"] == "json_schema"
    prompt = sent["input"][0]["content"]
    assert task.entry_signature() in prompt and CUDA in prompt
    assert "scale_kernel<<<dim3(4, 1, 1), dim3(256, 1, 1)>>>(x, y, n)" in prompt
    assert "rtol=1e-06" in prompt and "JSON object" in prompt
    assert "OpenMP" in sent["instructions"]
    [exchange] = out.exchanges
    assert exchange["request"]["body"] == sent and exchange["reply"]["text"] == answer
    assert KEY not in json.dumps(out.exchanges)


def test_code_block_translation_via_compatible_server(task, settings) -> None:
    with ScriptedOpenAIServer([f"Sure.\n```cpp\n{CPP}\n```\nDone."]) as srv:
        local = settings.model_copy(update={"llm_base_url": srv.base_url})
        model = OpenAIModel("llama3", local, compatible=True, sleep=no_sleep)
        out = LLMTranslator(model, local).translate(TranslateRequest(task=task, cuda_source=CUDA, lowering="// lowered"))
        sent = srv.requests[0].body
    assert out.code == CPP + "\n" and out.cost_usd == 0 and "no price" in out.notes
    prompt = sent["messages"][1]["content"]
    assert "```cpp" in prompt and "// lowered" in prompt and "response_format" not in sent


def test_fix_prompt_carries_previous_code_and_observations(task, settings) -> None:
    observations = [
        Observation(kind="compile", message="'j' was not declared in this scope", file="scale.cpp", line=3),
        Observation(kind="mismatch", message="y differs at 17 elements", data={"buffer": "y", "first_index": 3}),
        Observation(kind="human", message="use a static schedule", severity="info"),
    ]
    request = TranslateRequest(task=task, cuda_source=CUDA, mode="fix", attempt=3, previous_code="int broken;",
                               observations=observations, plan={"pattern": "elementwise", "features": ["guard"]})
    with ScriptedAnthropicServer([json.dumps({"code": CPP, "notes": "fixed"})]) as srv:
        model = AnthropicModel("claude-sonnet-4-5", settings, base_url=srv.base_url, sleep=no_sleep)
        out = LLMTranslator(model, settings).translate(request)
        sent = srv.requests[0].body
    assert out.code == CPP + "\n" and out.notes == "fixed"
    prompt = sent["messages"][0]["content"]
    assert "attempt 3" in prompt and "int broken;" in prompt
    assert "(scale.cpp line 3): 'j' was not declared in this scope" in prompt
    assert "y differs at 17 elements" in prompt and '"first_index": 3' in prompt
    assert "[hint from the user]: use a static schedule" in prompt
    assert "pattern: elementwise" in prompt
    assert prompt.index("compile error") < prompt.index("hint from the user")  # errors first


def test_optimize_prompt_uses_best_code(task) -> None:
    request = TranslateRequest(task=task, cuda_source=CUDA, mode="optimize", best_code="// best so far",
                               observations=[Observation(kind="profile", message="2.0x slower than the reference",
                                                         severity="warning")])
    _, user = build_prompt(request, structured=False)
    assert "faster" in user and "// best so far" in user and "2.0x slower" in user


def test_fix_without_previous_code_is_a_fresh_translation_told_why(task) -> None:
    request = TranslateRequest(task=task, cuda_source=CUDA, mode="fix", attempt=2,
                               observations=[Observation(kind="llm", message="the answer contains no code block")])
    _, user = build_prompt(request, structured=False)
    assert "Port the following CUDA" in user and "contains no code block" in user


@pytest.mark.parametrize("script, reason", [
    ([Reply("```cpp\nextern \"C\" void scale(float* x", finish="length")], "truncated"),
    (['{"code": "extern \\"C\\" void scale(", "notes": '], "malformed_json"),
    (["I would rather not."], "no_code"),
])
def test_bad_answers_become_observations(task, settings, script, reason) -> None:
    with ScriptedOpenAIServer(script) as srv:
        out = openai_translator(settings, srv, api="chat").translate(TranslateRequest(task=task, cuda_source=CUDA))
    assert out.code is None
    [obs] = out.observations
    assert obs.kind == "llm" and obs.data["reason"] == reason
    assert out.exchanges and out.output_tokens > 0  # the call still counts


def test_transient_failure_after_retries_is_an_observation(task, settings) -> None:
    with ScriptedOpenAIServer([Error(429), Error(500), Malformed()]) as srv:
        out = openai_translator(settings, srv).translate(TranslateRequest(task=task, cuda_source=CUDA))
        assert len(srv.requests) == 3
    assert out.code is None and out.observations[0].data["reason"] == "api_error"
    assert out.exchanges[0]["request"]["body"]["model"] == "gpt-4o" and "error" in out.exchanges[0]


def test_retried_then_succeeds(task, settings) -> None:
    with ScriptedOpenAIServer([Error(429, retry_after=0), Error(502), json.dumps({"code": CPP, "notes": ""})]) as srv:
        out = openai_translator(settings, srv).translate(TranslateRequest(task=task, cuda_source=CUDA))
    assert out.code == CPP + "\n"


def test_permanent_failure_is_raised(task, settings) -> None:
    with ScriptedOpenAIServer([Error(404, "model not found")]) as srv:
        with pytest.raises(LLMError, match="404.*model not found"):
            openai_translator(settings, srv).translate(TranslateRequest(task=task, cuda_source=CUDA))


def test_with_scripted_model(task, settings) -> None:
    model = ScriptedModel([f"```cpp\n{CPP}\n```"])
    out = LLMTranslator(model, settings).translate(TranslateRequest(task=task, cuda_source=CUDA))
    assert out.code == CPP + "\n" and model.calls[0]["schema"] is None
    assert "OpenMP" in model.calls[0]["system"]


def test_recorded_exchanges_replay_to_the_same_translations(task, settings) -> None:
    requests = [TranslateRequest(task=task, cuda_source=CUDA, attempt=i) for i in (1, 2, 3)]
    script = [Error(500), Error(500), Error(500), Reply("no code", output_tokens=7),
              Reply(json.dumps({"code": CPP, "notes": "n"}), input_tokens=11, output_tokens=13)]
    with ScriptedOpenAIServer(script) as srv:
        translator = openai_translator(settings, srv)
        live = [translator.translate(r) for r in requests]
    recorded = json.loads(json.dumps([ex for t in live for ex in t.exchanges]))  # as a trace stores them
    replayer = LLMTranslator(ScriptedModel.from_exchanges(recorded, name="openai:gpt-4o", structured=True), settings)
    replayed = [replayer.translate(r) for r in requests]
    assert [t.observations[0].data["reason"] for t in live[:2]] == ["api_error", "no_code"]
    for a, b in zip(live, replayed):
        assert (a.code, a.notes, a.input_tokens, a.output_tokens, a.cost_usd) == \
               (b.code, b.notes, b.input_tokens, b.output_tokens, b.cost_usd)
        assert [o.message for o in a.observations] == [o.message for o in b.observations]
        assert a.exchanges == b.exchanges
