"""scripts/bench_hecbench.py: a twin that reports other timings than the port is flagged, and its
ratio left out of the like-for-like geomean (nlll's twin times FP32 only, its port FP32 and FP16)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_hecbench import timing_lines  # noqa: E402

PORT = """=========== Data type is FP32 ==========
Average execution time of nll loss forward kernel: 3.86 (us)
PASS
=========== Data type is FP16 ==========
Average execution time of nll loss forward kernel: 12.59 (us)
PASS
"""


def test_lines_that_report_a_time_are_counted():
    twin = PORT.split("=========== Data type is FP16")[0]
    assert timing_lines(PORT) == 2 and timing_lines(twin) == 1
    assert timing_lines("Total time: n/a\nruntime options parsed\nPASS\n") == 0  # no figure, or not the word
