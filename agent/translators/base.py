"""The one protocol every translator implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tools.observations import Observation
from tools.spec import Task

Mode = Literal["translate", "fix", "optimize"]


@dataclass
class TranslateRequest:
    task: Task
    cuda_source: str
    mode: Mode = "translate"
    attempt: int = 1
    previous_code: str | None = None  # the attempt being fixed or optimized
    best_code: str | None = None  # best correct code so far
    lowering: str | None = None  # the deterministic compiler's output, as a starting point
    observations: list[Observation] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)  # features, pattern, strategy from the plan node
    seconds_left: float | None = None  # of the kernel's wall-time budget (a search should end within it)


@dataclass
class Translation:
    code: str | None  # complete C++ translation unit defining the task's entry; None if none produced
    notes: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    # Each exchange: {"request": {...}, "response": {...}} as sent/received (no secrets); traced.
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)  # e.g. malformed model answer
    stopped: str | None = None  # no code, though the translator had more to try: which budget ended it


class Translator(Protocol):
    name: str  # "compiler", "openai:gpt-4o", ...

    def translate(self, request: TranslateRequest) -> Translation: ...
