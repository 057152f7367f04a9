"""The Result record of docs/formats.md: `OUT/<name>/result.json`, beside `OUT/<name>/<name>.cpp`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

# invalid_task: the task file is at fault (see `reason`); llm_unreachable: no connection to the model's server.
Status = Literal["correct", "incorrect", "compile_error", "runtime_error", "timeout", "unsupported", "invalid_task",
                 "llm_unreachable"]
ReferenceKind = Literal["c", "python", "golden", "cuda", "lowered"]


class Times(BaseModel):
    """Median seconds per call; None where not measured."""

    candidate: float | None = None
    reference: float | None = None
    baseline: float | None = None


class KernelResult(BaseModel):
    name: str
    status: Status
    reference_kind: ReferenceKind | None = None
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    time_s: Times = Field(default_factory=Times)
    speedup_vs_reference: float | None = None
    threads: int | None = None
    iterations: int = 0
    backend: str = "compiler"
    tokens: int = 0
    cost_usd: float = 0.0
    trace: str | None = None
    reason: str | None = None  # one line on why the status is not correct
    stopped: str | None = None  # the budget that ended the loop while the translator had more to try
    details: list[str] = []  # a compile error's first lines of compiler messages
    launches: str | None = None  # where the task gave none: inferred, and which answer verified of how many tried

    def write(self, out_dir: Path | str) -> Path:
        """Write `out_dir/result.json` (creating the directory); returns its path."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        path = out / "result.json"
        path.write_text(json.dumps(self.model_dump(mode="json"), indent=2) + "\n")
        return path

    @classmethod
    def read(cls, path: Path | str) -> "KernelResult":
        path = Path(path)
        if path.is_dir():
            path = path / "result.json"
        return cls.model_validate_json(path.read_text())
