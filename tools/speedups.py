"""What a printed speedup is measured against: every speedup the agent and the benchmark print names its baseline.

A kernel's profile times the candidate against the task's reference (for a port's captured
kernel that is the deterministic lowering at -O0 on one thread) and, while tuning, against the
faithful lowering with the same OpenMP threads: 26.8x and 1.41x for one kernel, both true.
"""

from __future__ import annotations

REFERENCE_NAMES = {"c": "the C reference", "lowered": "the serial C++ reference", "python": "the Python reference"}
UNTUNED_PORT = "the untuned OpenMP port"  # the profile's baseline: the faithful lowering, same threads


def reference_name(kind: str | None) -> str:
    """The task reference of this kind, as a speedup's baseline."""
    if not kind:
        return "the reference"
    return REFERENCE_NAMES.get(kind, f"the {kind} reference")


def speedup_text(value: float, against: str, spec: str = ".3g") -> str:
    """E.g. '26.8x vs the serial C++ reference'."""
    return f"{value:{spec}}x vs {against}"
