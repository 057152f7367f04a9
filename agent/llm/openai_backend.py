"""`openai:MODEL` and `openai-compatible:MODEL` through the official `openai` client.

Two wire APIs: Chat Completions (every OpenAI-compatible server speaks it) and the
Responses API (OpenAI's newer one). `api="auto"` picks Responses for OpenAI itself and
Chat Completions for compatible servers (vLLM, Ollama, llama.cpp), where structured
outputs are not assumed either: the answer then comes as text with a code block.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Literal

import openai

from agent.configuration import Settings
from agent.llm.base import LLMError, ModelReply
from agent.llm.calls import MalformedBody, client_timeout, cost_of, parse_json_body, retry_policy, scrub, with_retries

Api = Literal["auto", "chat", "responses"]
SCHEMA_NAME = "answer"
NO_KEY = "unused"  # the client insists on some key; self-hosted servers without auth ignore it


class OpenAIModel:
    def __init__(
        self,
        model: str,
        settings: Settings,
        *,
        compatible: bool = False,
        api: Api | None = None,
        base_url: str | None = None,
        structured: bool | None = None,
        backoff_base_s: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.compatible = compatible
        self.provider = "openai-compatible" if compatible else "openai"
        self.name = f"{self.provider}:{model}"
        chosen = api or getattr(settings, "llm_api", None) or "auto"
        self.api: Literal["chat", "responses"] = ("chat" if compatible else "responses") if chosen == "auto" else chosen
        self.structured = (not compatible) if structured is None else structured
        self._prices = settings.prices
        self._policy = retry_policy(settings, backoff_base_s, sleep)
        url = base_url or (settings.llm_base_url if compatible else None)
        if compatible and not url:
            raise LLMError(self.provider, "no base URL configured (set llm_base_url / AGENT_LLM_BASE_URL)")
        key = _compatible_key(settings) if compatible else settings.api_key_for("openai")
        self._secrets = settings.secrets() + ([key] if key and key != NO_KEY else [])
        try:
            self._client = openai.OpenAI(api_key=key, base_url=url, timeout=client_timeout(settings), max_retries=0)
        except openai.OpenAIError as exc:
            raise LLMError(self.provider, str(exc)) from None

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        system: str | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply:
        use_schema = schema if self.structured else None
        if self.api == "responses":
            body = self._responses_body(messages, system, use_schema, max_tokens)
            path, create = "/responses", self._client.responses.with_raw_response.create
        else:
            body = self._chat_body(messages, system, use_schema, max_tokens)
            path, create = "/chat/completions", self._client.chat.completions.with_raw_response.create
        request = scrub(
            {"provider": self.provider, "api": self.api, "url": str(self._client.base_url).rstrip("/") + path, "body": body},
            self._secrets,
        )

        def send() -> tuple[dict[str, Any], ModelReply]:
            raw = create(**body)
            payload = parse_json_body(raw.http_response.text)
            return payload, (self._read_responses(payload) if self.api == "responses" else self._read_chat(payload))

        payload, reply = with_retries(send, provider=self.provider, sdk=openai, policy=self._policy, request=request)
        reply.request = request
        reply.response = scrub({"status": 200, "body": payload}, self._secrets)
        reply.cost_usd, note = cost_of([self.model, reply.model], reply.input_tokens, reply.output_tokens, self._prices)
        if note:
            reply.notes.append(note)
        return reply

    def _chat_body(self, messages, system, schema, max_tokens) -> dict[str, Any]:
        head = [{"role": "system", "content": system}] if system else []
        body: dict[str, Any] = {"model": self.model, "messages": head + list(messages)}
        if max_tokens:
            # OpenAI's reasoning models accept only max_completion_tokens; older servers only max_tokens.
            body["max_tokens" if self.compatible else "max_completion_tokens"] = max_tokens
        if schema:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": True},
            }
        return body

    def _responses_body(self, messages, system, schema, max_tokens) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": list(messages), "store": False}
        if system:
            body["instructions"] = system
        if max_tokens:
            body["max_output_tokens"] = max_tokens
        if schema:
            body["text"] = {"format": {"type": "json_schema", "name": SCHEMA_NAME, "schema": schema, "strict": True}}
        return body

    def _read_chat(self, payload: dict[str, Any]) -> ModelReply:
        try:
            choice = payload["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise MalformedBody("unreadable response body: no choices[0].message in a chat completion", str(payload)) from None
        text = message.get("content") or ""
        notes = []
        if not text and message.get("refusal"):
            notes.append(f"the model refused: {message['refusal']}")
        finish = choice.get("finish_reason")
        usage = payload.get("usage") or {}
        return ModelReply(
            text=text,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            model=str(payload.get("model") or self.model),
            finish_reason=finish,
            truncated=finish == "length",
            notes=notes,
        )

    def _read_responses(self, payload: dict[str, Any]) -> ModelReply:
        if payload.get("status") == "failed":  # the provider's own failure: may pass, like a 5xx
            error = payload.get("error") or {}
            raise MalformedBody(f"the response failed: {error.get('message') or error or 'no reason given'}", str(payload))
        output = payload.get("output")
        if not isinstance(output, list):
            raise MalformedBody("unreadable response body: no output list in a Responses API answer", str(payload))
        texts, notes = [], []
        for item in output:
            if not isinstance(item, dict) or item.get("type") != "message":
                continue  # reasoning summaries and tool calls carry no answer text
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    texts.append(part.get("text") or "")
                elif part.get("type") == "refusal":
                    notes.append(f"the model refused: {part.get('refusal')}")
        status = payload.get("status") or "completed"
        reason = (payload.get("incomplete_details") or {}).get("reason")
        truncated = status == "incomplete" and reason == "max_output_tokens"
        usage = payload.get("usage") or {}
        return ModelReply(
            text="".join(texts),
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            model=str(payload.get("model") or self.model),
            finish_reason="length" if truncated else (reason or status),
            truncated=truncated,
            notes=notes,
        )


def _compatible_key(settings: Settings) -> str:
    """The key for a self-hosted server: never the OpenAI key, which must not leave for another host."""
    secret = getattr(settings, "llm_api_key", None)  # a requested Settings field (SecretStr)
    value = secret.get_secret_value() if secret is not None and hasattr(secret, "get_secret_value") else secret
    return value or NO_KEY
