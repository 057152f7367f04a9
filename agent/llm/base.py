"""What every LLM backend offers: one `complete` call returning a `ModelReply`.

Backends record what went over the wire (`request`, `response`: JSON-able, never an
API key or an HTTP header) so that a trace can replay a run with no model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass
class ModelReply:
    text: str  # the answer: plain text, or the structured output as a JSON string
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model: str = ""  # the model that answered, as the provider names it
    finish_reason: str | None = None  # provider's own word: stop, length, end_turn, max_tokens, ...
    truncated: bool = False  # the answer was cut off at the token limit
    request: dict[str, Any] = field(default_factory=dict)  # body sent, plus provider/api/url
    response: dict[str, Any] = field(default_factory=dict)  # body received
    notes: list[str] = field(default_factory=list)  # accounting remarks, e.g. no price for the model

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ModelReply":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def exchange(self) -> dict[str, Any]:
        """What a trace keeps of one call: the wire request and response, and the reply read from them."""
        reply = {k: v for k, v in self.to_dict().items() if k not in ("request", "response")}
        return {"request": self.request, "response": self.response, "reply": reply}

    @classmethod
    def from_exchange(cls, exchange: dict[str, Any]) -> "ModelReply":
        """The reply a traced exchange recorded (for replay with ScriptedModel)."""
        reply = dict(exchange.get("reply") or {})
        return cls.from_dict({**reply, "request": exchange.get("request") or {}, "response": exchange.get("response") or {}})


class LLMError(Exception):
    """A model call that failed for good; the message names provider, status and cause.

    `transient` is True when the failure was of the kind that passes (rate limit, server
    error, a dropped connection, unreadable body) and only the retries ran out; False for errors
    that repeat on every call (bad key, unknown model, bad request). `unreachable`: no connection
    to the server could be opened at all (refused, unknown host, TLS, connect timeout): a wrong
    base URL or a server that is down, which further attempts will not mend either.
    """

    def __init__(
        self,
        provider: str,
        cause: str,
        *,
        status: int | None = None,
        transient: bool = False,
        attempts: int = 1,
        unreachable: bool = False,
        request: dict[str, Any] | None = None,
        response: dict[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.status = status
        self.cause = cause
        self.transient = transient
        self.attempts = attempts
        self.unreachable = unreachable
        self.request = request or {}
        self.response = response or {}
        status_text = f"HTTP {status}" if status is not None else "no HTTP status"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        super().__init__(f"{provider}: {status_text}{tries}: {cause}")

    def exchange(self) -> dict[str, Any]:
        """What a trace keeps of a failed call (the counterpart of ModelReply.exchange)."""
        error = {"provider": self.provider, "status": self.status, "cause": self.cause,
                 "transient": self.transient, "attempts": self.attempts, "unreachable": self.unreachable,
                 "message": str(self)}
        return {"request": self.request, "response": self.response, "error": error}

    @classmethod
    def from_exchange(cls, exchange: dict[str, Any]) -> "LLMError":
        error = exchange["error"]
        return cls(error["provider"], error["cause"], status=error.get("status"), transient=error.get("transient", False),
                   attempts=error.get("attempts", 1), unreachable=error.get("unreachable", False),
                   request=exchange.get("request"), response=exchange.get("response"))


class BudgetExceeded(Exception):
    """A token, money or time budget ran out (raised by the caller that owns the budget)."""

    def __init__(self, what: str, used: float, limit: float) -> None:
        self.what = what
        self.used = used
        self.limit = limit
        super().__init__(f"budget exceeded: {what} used {used:g} of {limit:g}")


class Model(Protocol):
    name: str  # "openai:gpt-4o", "anthropic:claude-sonnet-4-5", "scripted", ...
    structured: bool  # True when `schema` is honoured (the answer is then JSON text)

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        system: str | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply: ...
