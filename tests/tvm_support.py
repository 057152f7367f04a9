"""Whether apache-tvm imports on this machine. TVM tests skip with this reason where it does
not, and say so on the console (a skipped generator test is not a passed one)."""

import pytest

try:
    import tvm  # noqa: F401

    TVM_MISSING = None
except ImportError as exc:  # pragma: no cover - depends on the machine
    TVM_MISSING = f"apache-tvm is not importable ({exc}); install apache-tvm>=0.27,<0.28"

needs_tvm = pytest.mark.skipif(TVM_MISSING is not None, reason=TVM_MISSING or "")


def announce(tests: str) -> None:
    if TVM_MISSING:
        print(f"{tests}: TVM tests skipped: {TVM_MISSING}")
