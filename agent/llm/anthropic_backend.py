"""`anthropic:MODEL` through the official `anthropic` client (Messages API).

Structured output is a forced tool call: the schema becomes the input schema of one
tool the model must call, and the tool's input (JSON) is the answer's text.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

import anthropic

from agent.configuration import Settings
from agent.llm.base import LLMError, ModelReply
from agent.llm.calls import MalformedBody, client_timeout, cost_of, parse_json_body, retry_policy, scrub, with_retries

TOOL_NAME = "submit_answer"
# The Messages API requires max_tokens; this fits a kernel translation with room for notes
# and stays below the SDK's limit for non-streaming requests.
DEFAULT_MAX_TOKENS = 16_000


class AnthropicModel:
    provider = "anthropic"
    structured = True

    def __init__(
        self,
        model: str,
        settings: Settings,
        *,
        base_url: str | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        backoff_base_s: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.name = f"anthropic:{model}"
        self.default_max_tokens = default_max_tokens
        self._prices = settings.prices
        self._secrets = settings.secrets()
        self._policy = retry_policy(settings, backoff_base_s, sleep)
        key = settings.api_key_for("anthropic")
        if not key:
            raise LLMError(self.provider, "no API key (set anthropic_api_key / AGENT_ANTHROPIC_API_KEY or ANTHROPIC_API_KEY)")
        self._client = anthropic.Anthropic(api_key=key, base_url=base_url, timeout=client_timeout(settings), max_retries=0)

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        system: str | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens or self.default_max_tokens,
            "messages": list(messages),
        }
        if system:
            body["system"] = system
        if schema:
            body["tools"] = [{"name": TOOL_NAME, "description": "Submit the complete answer.", "input_schema": schema}]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        url = str(self._client.base_url).rstrip("/") + "/v1/messages"
        request = scrub({"provider": self.provider, "api": "messages", "url": url, "body": body}, self._secrets)

        def send() -> tuple[dict[str, Any], ModelReply]:
            raw = self._client.messages.with_raw_response.create(**body)
            payload = parse_json_body(raw.http_response.text)
            return payload, self._read(payload)

        payload, reply = with_retries(send, provider=self.provider, sdk=anthropic, policy=self._policy, request=request)
        reply.request = request
        reply.response = scrub({"status": 200, "body": payload}, self._secrets)
        reply.cost_usd, note = cost_of([self.model, reply.model], reply.input_tokens, reply.output_tokens, self._prices)
        if note:
            reply.notes.append(note)
        return reply

    def _read(self, payload: dict[str, Any]) -> ModelReply:
        content = payload.get("content")
        if not isinstance(content, list):
            raise MalformedBody("unreadable response body: no content list in a Messages API answer", str(payload))
        texts, tool_input = [], None
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                texts.append(block.get("text") or "")
            elif block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
                tool_input = block.get("input")
        stop = payload.get("stop_reason")
        usage = payload.get("usage") or {}
        cached = int(usage.get("cache_creation_input_tokens") or 0) + int(usage.get("cache_read_input_tokens") or 0)
        return ModelReply(
            text=json.dumps(tool_input) if tool_input is not None else "".join(texts),
            input_tokens=int(usage.get("input_tokens") or 0) + cached,
            output_tokens=int(usage.get("output_tokens") or 0),
            model=str(payload.get("model") or self.model),
            finish_reason=stop,
            truncated=stop == "max_tokens",
        )
