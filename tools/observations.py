"""Observations: what a tool saw that the next translation attempt should know."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

ObservationKind = Literal[
    "compile",  # a compiler diagnostic
    "unsupported",  # a CUDA feature the deterministic compiler cannot lower
    "mismatch",  # an output differs from the reference
    "runtime",  # crash, timeout, sanitizer, input modified
    "profile",  # timing finding (slower than reference, hot loop, ...)
    "vectorization",  # g++ -fopt-info report line
    "optimization",  # what an optimizer variant did and what it measured
    "llm",  # malformed or truncated model answer
    "human",  # a hint typed by the user
]


class Observation(BaseModel):
    kind: ObservationKind
    message: str
    file: str | None = None
    line: int | None = None
    severity: Literal["error", "warning", "info"] = "error"
    data: dict[str, Any] = Field(default_factory=dict)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"[{self.kind}] {where}{self.message}"
