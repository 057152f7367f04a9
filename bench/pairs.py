"""CUDA/CPU training pairs (JSON Lines) for fine-tuning, de-duplicated.

One line per distinct (CUDA, C) pair: {"name", "category", "op_name", "cuda", "cpu", "ir"}.
Two records whose codes differ only in the generated function name count as one pair.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from .format import Record


def _key(rec: Record) -> str:
    cuda, cpu = rec.cuda_code, rec.c_code
    if rec.name:  # the name is part of every kernel symbol; ignore it when comparing
        cuda, cpu = cuda.replace(rec.name, "F"), cpu.replace(rec.name, "F")
    norm = re.sub(r"\s+", " ", cuda) + "\0" + re.sub(r"\s+", " ", cpu)
    return hashlib.sha256(norm.encode()).hexdigest()


def write_pairs(records: list[Record], path: Path) -> int:
    """Write the de-duplicated pairs; returns how many lines were written."""
    seen: set[str] = set()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for rec in records:
            key = _key(rec)
            if key in seen:
                continue
            seen.add(key)
            line = {"name": rec.name, "category": rec.category, "op_name": rec.op_name,
                    "cuda": rec.cuda_code, "cpu": rec.c_code, "ir": rec.ir_code}
            f.write(json.dumps(line) + "\n")
    return len(seen)
