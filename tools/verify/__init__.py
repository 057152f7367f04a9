"""Verify and profile CPU candidates against a kernel task's reference (the graph's test and profile steps).

    check(task, candidate_cpp, sandbox)   -> VerifyReport   (correct or not, and precisely why)
    profile(task, candidate_cpp, sandbox) -> ProfileReport  (honest timing + vectorization report)
"""

from .check import VerifyReport, check
from .compare import Mismatch, compare_buffer
from .inputs import generate_inputs
from .profile import ProfileReport, TimingStats, profile
from .references import VerifyError, gpu_available, open_reference

__all__ = [
    "check", "VerifyReport", "profile", "ProfileReport", "TimingStats", "Mismatch", "compare_buffer", "generate_inputs", "VerifyError",
    "gpu_available", "open_reference",
]
