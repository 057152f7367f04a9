"""Fixtures shared by the test modules."""

import pytest

from sandboxes import LocalSandbox


@pytest.fixture(scope="module")
def box():
    """A local sandbox for the module's builds and runs (real g++, bubblewrap where present).
    test_build.py and test_sandbox.py define their own."""
    with LocalSandbox() as sandbox:
        yield sandbox
