"""The HTTP backends through the real openai and anthropic clients against local scripted servers."""

from __future__ import annotations

import json

import pytest

from agent.configuration import Price, Settings
from agent.llm import LLMError, ModelSpecError, ScriptedModel, make_model
from agent.llm.anthropic_backend import AnthropicModel
from agent.llm.base import ModelReply
from agent.llm.calls import retry_after_seconds
from agent.llm.openai_backend import OpenAIModel
from llm_servers import Delay, Error, Malformed, Reply, ScriptedAnthropicServer, ScriptedOpenAIServer

OPENAI_KEY = "sk-test-openai-0123456789"
ANTHROPIC_KEY = "sk-ant-test-9876543210"
MESSAGES = [{"role": "user", "content": "port this kernel"}]
SCHEMA = {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"],
          "additionalProperties": False}


@pytest.fixture
def settings(monkeypatch: pytest.MonkeyPatch) -> Settings:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    return Settings(openai_api_key=OPENAI_KEY, anthropic_api_key=ANTHROPIC_KEY, llm_max_retries=3, llm_timeout_s=5)


class Sleeps(list):
    """Stands in for time.sleep: records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def openai_model(settings: Settings, srv: ScriptedOpenAIServer, sleeps: Sleeps | None = None, **kw) -> OpenAIModel:
    return OpenAIModel(kw.pop("model", "gpt-4o"), settings, base_url=srv.base_url, backoff_base_s=0.01,
                       sleep=sleeps if sleeps is not None else Sleeps(), **kw)


def anthropic_model(settings: Settings, srv: ScriptedAnthropicServer, sleeps: Sleeps | None = None) -> AnthropicModel:
    return AnthropicModel("claude-sonnet-4-5", settings, base_url=srv.base_url, backoff_base_s=0.01,
                          sleep=sleeps if sleeps is not None else Sleeps())


def assert_no_key(reply_or_error: object, *keys: str) -> None:
    for part in ("request", "response"):
        text = json.dumps(getattr(reply_or_error, part))
        for key in keys:
            assert key not in text
        assert "authorization" not in text.lower() and "x-api-key" not in text.lower()


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_structured_answer_and_accounting(settings: Settings, api: str) -> None:
    answer = json.dumps({"code": "int x;", "notes": "n"})
    with ScriptedOpenAIServer([Reply(answer, input_tokens=1_000_000, output_tokens=500_000)]) as srv:
        reply = openai_model(settings, srv, api=api).complete(MESSAGES, system="be exact", schema=SCHEMA, max_tokens=900)
        sent = srv.requests[0]
    assert reply.text == answer and not reply.truncated
    assert (reply.input_tokens, reply.output_tokens) == (1_000_000, 500_000)
    assert reply.cost_usd == pytest.approx(2.5 + 5.0)  # gpt-4o: $2.5 in, $10 out per million
    assert sent.headers["authorization"] == f"Bearer {OPENAI_KEY}"  # the key went to the server...
    assert_no_key(reply, OPENAI_KEY)  # ...but not into what a trace records
    if api == "chat":
        assert sent.path == "/v1/chat/completions"
        assert sent.body["messages"][0] == {"role": "system", "content": "be exact"}
        assert sent.body["response_format"]["json_schema"]["schema"] == SCHEMA
        assert sent.body["max_completion_tokens"] == 900
    else:
        assert sent.path == "/v1/responses"
        assert sent.body["instructions"] == "be exact" and sent.body["input"] == MESSAGES
        assert sent.body["text"]["format"]["schema"] == SCHEMA
        assert sent.body["max_output_tokens"] == 900
    assert reply.request["body"] == sent.body and reply.request["url"] == srv.base_url + sent.path[3:]
    assert reply.response["body"]["model"] == "gpt-4o"


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_truncated_answer_is_flagged(settings: Settings, api: str) -> None:
    with ScriptedOpenAIServer([Reply("```cpp\nint f() {", finish="length")]) as srv:
        reply = openai_model(settings, srv, api=api).complete(MESSAGES)
    assert reply.truncated and reply.finish_reason == "length"


def test_openai_compatible_uses_configured_base_url_without_schema(settings: Settings) -> None:
    with ScriptedOpenAIServer(["```cpp\nint x;\n```"]) as srv:
        local = settings.model_copy(update={"llm_base_url": srv.base_url})
        model = make_model("openai-compatible:qwen2.5-coder", local)
        reply = model.complete(MESSAGES, schema=SCHEMA, max_tokens=100)
        sent = srv.requests[0]
    assert model.name == "openai-compatible:qwen2.5-coder" and not model.structured
    assert sent.path == "/v1/chat/completions"
    assert "response_format" not in sent.body and sent.body["max_tokens"] == 100
    assert sent.headers["authorization"] == "Bearer unused"  # the OpenAI key stays with OpenAI
    assert reply.text == "```cpp\nint x;\n```"
    assert reply.cost_usd == 0 and "no price" in reply.notes[0]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_openai_transient_errors_are_retried(settings: Settings, status: int) -> None:
    sleeps = Sleeps()
    with ScriptedOpenAIServer([Error(status), Error(status), "done"]) as srv:
        reply = openai_model(settings, srv, sleeps, api="chat").complete(MESSAGES)
        assert len(srv.requests) == 3
    assert reply.text == "done" and len(sleeps) == 2
    assert 0.005 <= sleeps[0] <= 0.01 and 0.01 <= sleeps[1] <= 0.02  # exponential, with jitter


def test_retry_after_is_honoured(settings: Settings) -> None:
    sleeps = Sleeps()
    with ScriptedOpenAIServer([Error(429, retry_after=7), Error(429, headers={"retry-after-ms": "1500"}), "ok"]) as srv:
        openai_model(settings, srv, sleeps).complete(MESSAGES)
    assert sleeps == [7.0, 1.5]


def test_retry_after_too_long_gives_up(settings: Settings) -> None:
    with ScriptedOpenAIServer([Error(429, retry_after=3600), "never"]) as srv:
        with pytest.raises(LLMError, match="3600"):
            openai_model(settings, srv).complete(MESSAGES)
        assert len(srv.requests) == 1


def test_retries_exhausted_raise_llm_error(settings: Settings) -> None:
    sleeps = Sleeps()
    with ScriptedOpenAIServer([Error(500, "upstream exploded")] * 5) as srv:
        with pytest.raises(LLMError) as info:
            openai_model(settings, srv, sleeps).complete(MESSAGES)
        assert len(srv.requests) == 4  # 1 + llm_max_retries
    err = info.value
    assert err.status == 500 and err.transient and err.attempts == 4
    assert "openai" in str(err) and "500" in str(err) and "upstream exploded" in str(err)
    assert len(sleeps) == 3
    assert_no_key(err, OPENAI_KEY)


def test_permanent_errors_are_not_retried(settings: Settings) -> None:
    with ScriptedOpenAIServer([Error(401, "invalid key"), "never"]) as srv:
        with pytest.raises(LLMError) as info:
            openai_model(settings, srv).complete(MESSAGES)
        assert len(srv.requests) == 1
    assert info.value.status == 401 and not info.value.transient and "invalid key" in str(info.value)


def test_malformed_body_is_retried_then_reported(settings: Settings) -> None:
    with ScriptedOpenAIServer([Malformed(), "fine"]) as srv:
        assert openai_model(settings, srv, api="chat").complete(MESSAGES).text == "fine"
    with ScriptedOpenAIServer([Malformed("not json at all")] * 4) as srv:
        with pytest.raises(LLMError, match="unreadable response body: not JSON") as info:
            openai_model(settings, srv, api="chat").complete(MESSAGES)
    assert info.value.status == 200 and info.value.transient


def test_wrong_shape_body_is_malformed(settings: Settings) -> None:
    settings = settings.model_copy(update={"llm_max_retries": 0})
    with ScriptedOpenAIServer([Malformed('{"choices": []}')]) as srv:
        with pytest.raises(LLMError, match="no choices"):
            openai_model(settings, srv, api="chat").complete(MESSAGES)


def test_timeout_is_retried(settings: Settings) -> None:
    quick = settings.model_copy(update={"llm_timeout_s": 0.3})
    sleeps = Sleeps()
    with ScriptedOpenAIServer([Delay(1.5, "late"), "in time"]) as srv:
        reply = openai_model(quick, srv, sleeps).complete(MESSAGES)
    assert reply.text == "in time" and len(sleeps) == 1


def closed_url() -> str:
    """The base URL of a server that was there and is gone: connections to it are refused."""
    srv = ScriptedOpenAIServer().start()
    url = srv.base_url
    srv.stop()
    return url


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_connection_refused_is_unreachable_after_one_quick_retry(settings: Settings, provider: str) -> None:
    sleeps = Sleeps()
    url = closed_url()
    if provider == "openai":
        model = OpenAIModel("gpt-4o", settings, base_url=url, backoff_base_s=5.0, sleep=sleeps)
    else:
        model = AnthropicModel("claude-sonnet-4-5", settings, base_url=url.removesuffix("/v1"), backoff_base_s=5.0, sleep=sleeps)
    with pytest.raises(LLMError) as info:
        model.complete(MESSAGES)
    err = info.value
    # Two connection attempts however many retries a busy server gets (llm_max_retries=3 here),
    # the second after a short wait, not the 5 s backoff.
    assert err.unreachable and not err.transient and err.attempts == 2
    assert sleeps == [0.5]
    assert "Connection refused" in str(err) and url.removesuffix("/v1") in str(err)
    assert err.exchange()["error"]["unreachable"] and LLMError.from_exchange(err.exchange()).unreachable


def test_tls_handshake_failure_is_unreachable(settings: Settings) -> None:
    with ScriptedOpenAIServer(["never"]) as srv:  # plain HTTP: an https:// client fails its handshake
        model = OpenAIModel("gpt-4o", settings, base_url=srv.base_url.replace("http://", "https://"), sleep=Sleeps())
        with pytest.raises(LLMError) as info:
            model.complete(MESSAGES)
    assert info.value.unreachable and info.value.attempts == 2 and "SSL" in str(info.value)


def test_connecting_waits_seconds_not_the_answer_timeout(settings: Settings) -> None:
    slow = settings.model_copy(update={"llm_timeout_s": 300})
    for model in (OpenAIModel("gpt-4o", slow, base_url="http://127.0.0.1:1/v1"), AnthropicModel("claude-sonnet-4-5", slow)):
        timeout = model._client.timeout
        assert timeout.connect == 10 and timeout.read == 300


def test_anthropic_structured_answer_via_tool(settings: Settings) -> None:
    answer = {"code": "int y;", "notes": "ok"}
    with ScriptedAnthropicServer([Reply(json.dumps(answer), input_tokens=2000, output_tokens=1000)]) as srv:
        reply = anthropic_model(settings, srv).complete(MESSAGES, system="rules", schema=SCHEMA)
        sent = srv.requests[0]
    assert json.loads(reply.text) == answer and reply.finish_reason == "tool_use"
    assert sent.path == "/v1/messages" and sent.body["system"] == "rules"
    assert sent.body["tools"][0]["input_schema"] == SCHEMA
    assert sent.body["tool_choice"] == {"type": "tool", "name": sent.body["tools"][0]["name"]}
    assert sent.body["max_tokens"] > 0
    assert sent.headers["x-api-key"] == ANTHROPIC_KEY
    assert_no_key(reply, ANTHROPIC_KEY)
    assert reply.cost_usd == pytest.approx((2000 * 3 + 1000 * 15) / 1e6)


def test_anthropic_text_truncated_and_retries(settings: Settings) -> None:
    sleeps = Sleeps()
    script = [Error(429, retry_after=2), Error(529), Reply("```cpp\nvoid f(", finish="length")]
    with ScriptedAnthropicServer(script) as srv:
        reply = anthropic_model(settings, srv, sleeps).complete(MESSAGES, max_tokens=50)
        assert srv.requests[-1].body["max_tokens"] == 50
    assert reply.truncated and reply.finish_reason == "max_tokens" and reply.text.startswith("```cpp")
    assert sleeps[0] == 2.0 and len(sleeps) == 2


def test_anthropic_retries_exhausted(settings: Settings) -> None:
    with ScriptedAnthropicServer([Error(500)] * 4) as srv:
        with pytest.raises(LLMError, match=r"anthropic: HTTP 500 after 4 attempts"):
            anthropic_model(settings, srv).complete(MESSAGES)


def test_price_of_dated_model_and_custom_table(settings: Settings) -> None:
    prices = {"gpt-4o": Price(input_per_mtok=1, output_per_mtok=2), "gpt-4o-mini": Price(input_per_mtok=10, output_per_mtok=20)}
    custom = settings.model_copy(update={"prices": prices})
    with ScriptedOpenAIServer([Reply("a", input_tokens=10**6, output_tokens=10**6)] * 2) as srv:
        dated = openai_model(custom, srv, model="gpt-4o-mini-2024-07-18").complete(MESSAGES)
        unknown = openai_model(custom, srv, model="mystery-1").complete(MESSAGES)
    assert dated.cost_usd == pytest.approx(30.0) and not dated.notes
    assert unknown.cost_usd == 0 and "mystery-1" in unknown.notes[0]


def test_retry_after_parsing() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_factory_errors(settings: Settings) -> None:
    bare = settings.model_copy(update={"openai_api_key": None, "anthropic_api_key": None, "llm_base_url": None})
    with pytest.raises(ModelSpecError, match="no OpenAI API key"):
        make_model("openai:gpt-4o", bare)
    with pytest.raises(ModelSpecError, match="no Anthropic API key"):
        make_model("anthropic:claude-sonnet-4-5", bare)
    with pytest.raises(ModelSpecError, match="no base URL"):
        make_model("openai-compatible:llama3", bare)
    with pytest.raises(ModelSpecError, match="no model name"):
        make_model("openai:", settings)
    with pytest.raises(ModelSpecError, match="unknown kind 'gemini'"):
        make_model("gemini:pro", settings)
    assert make_model("anthropic:claude-haiku-4-5", settings).name == "anthropic:claude-haiku-4-5"
    openai = make_model("openai:gpt-4.1", settings)
    assert openai.name == "openai:gpt-4.1" and openai.structured


def test_factory_openai_honours_sdk_base_url_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAIServer(["via env"]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        assert make_model("openai:gpt-4o", settings).complete(MESSAGES).text == "via env"


def test_scripted_model_and_exchange_round_trip() -> None:
    recorded = ModelReply(text="B", input_tokens=3, output_tokens=4, cost_usd=0.5, model="m", finish_reason="stop",
                          request={"body": {"x": 1}}, response={"body": {"y": 2}})
    model = ScriptedModel(["A", ModelReply.from_exchange(recorded.exchange())])
    assert model.complete(MESSAGES, system="s").text == "A"
    assert model.complete(MESSAGES) == recorded
    assert model.calls[0]["system"] == "s" and model.remaining == 0
    with pytest.raises(LLMError, match="script exhausted"):
        model.complete(MESSAGES)


def test_failed_response_is_retried(settings: Settings) -> None:
    failed = json.dumps({"id": "resp_x", "object": "response", "status": "failed", "output": [],
                         "error": {"code": "server_error", "message": "the model crashed"}})
    with ScriptedOpenAIServer([Malformed(failed), "second try"]) as srv:
        assert openai_model(settings, srv, api="responses").complete(MESSAGES).text == "second try"
    with ScriptedOpenAIServer([Malformed(failed)]) as srv:
        quiet = settings.model_copy(update={"llm_max_retries": 0})
        with pytest.raises(LLMError, match="the response failed: the model crashed"):
            openai_model(quiet, srv, api="responses").complete(MESSAGES)


def test_a_key_inside_a_prompt_is_scrubbed_from_the_record(settings: Settings) -> None:
    leaky = [{"role": "user", "content": f"my key is {OPENAI_KEY}"}]
    with ScriptedOpenAIServer([f"echo {OPENAI_KEY}"]) as srv:
        reply = openai_model(settings, srv).complete(leaky)
    assert_no_key(reply, OPENAI_KEY)
    assert reply.request["body"]["input"][0]["content"] == "my key is ***"
