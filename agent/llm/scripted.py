"""A model that returns canned answers in order: for replay of recorded runs and for tests."""

from __future__ import annotations

from typing import Any

from agent.llm.base import LLMError, ModelReply


class ScriptedModel:
    """Answers each `complete` call with the next reply of the script.

    A str becomes a plain reply (finish_reason "stop"); a ModelReply is returned as given
    (a recorded reply keeps its tokens, cost and wire exchange); an LLMError is raised.
    Every call is kept in `calls` so that tests can look at the prompts.
    """

    def __init__(
        self, replies: list[str | ModelReply | LLMError], *, name: str = "scripted", structured: bool = False
    ) -> None:
        self.name = name
        self.structured = structured
        self._replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    @classmethod
    def from_exchanges(cls, exchanges: list[dict[str, Any]], *, name: str = "scripted",
                       structured: bool = False) -> "ScriptedModel":
        """Replays traced exchanges (Translation.exchanges): replies, and failed calls as LLMError."""
        replies = [LLMError.from_exchange(e) if e.get("error") else ModelReply.from_exchange(e) for e in exchanges]
        return cls(replies, name=name, structured=structured)

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        system: str | None = None,
        schema: dict[str, Any] | None = None,
        max_tokens: int | None = None,
    ) -> ModelReply:
        call = {"messages": list(messages), "system": system, "schema": schema, "max_tokens": max_tokens}
        self.calls.append(call)
        if not self._replies:
            raise LLMError(self.name, f"script exhausted after {len(self.calls) - 1} replies")
        reply = self._replies.pop(0)
        if isinstance(reply, LLMError):
            raise reply
        if isinstance(reply, ModelReply):
            return reply
        return ModelReply(
            text=reply,
            model=self.name,
            finish_reason="stop",
            request={"provider": "scripted", "body": call},
            response={"status": 200, "body": {"text": reply}},
        )
