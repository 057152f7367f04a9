"""Fixtures shared by the test modules."""

import pytest

from sandboxes import LocalSandbox


@pytest.fixture(scope="module")
def box():
    """A local sandbox for the module's builds and runs (real g++, bubblewrap where present).
    test_build.py and test_sandbox.py define their own."""
    with LocalSandbox() as sandbox:
        yield sandbox


@pytest.fixture
def kernel_task(tmp_path):
    """A task made from CUDA source: `kernel_task(source, name, buffers, scalars, grid, block)`,
    its one launch passing the buffers then the scalars, checked against its own lowering."""
    import json

    from tools.spec import load_task

    def make(source, name, buffers, scalars, grid, block):
        (tmp_path / f"{name}.cu").write_text(source)
        raw = {"name": name, "cuda": f"{name}.cu", "buffers": buffers, "scalars": scalars,
               "launches": [{"kernel": name, "grid": grid, "block": block,
                             "args": [b["name"] for b in buffers] + [s["name"] for s in scalars]}],
               "reference": {"kind": "lowered"}}
        (tmp_path / f"{name}.json").write_text(json.dumps(raw))
        return load_task(tmp_path / f"{name}.json")
    return make


@pytest.fixture
def vectorized_lines(tmp_path):
    """`vectorized_lines(source)`: the lines of a translation unit whose loops g++ reports
    vectorized, compiled with the candidates' flags as their shared library is (local calls bind
    locally, so the kernels' helpers inline); the whole report comes back too, for messages."""
    import re
    import subprocess

    from tools.build import DEFAULT_CXXFLAGS
    from tools.cuda import runtime_include_dir

    def compile_(source):
        path = tmp_path / "k.cpp"
        path.write_text(source)
        out = subprocess.run(["g++", *DEFAULT_CXXFLAGS, "-fPIC", "-fno-semantic-interposition", "-c",
                              f"-I{runtime_include_dir()}", str(path), "-o", str(tmp_path / "k.o"),
                              "-fopt-info-vec-optimized"], capture_output=True, text=True, check=True)
        return {int(n) for n in re.findall(r"k\.cpp:(\d+):\d+: optimized: loop vectorized", out.stderr)}, out.stderr
    return compile_
