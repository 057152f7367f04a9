"""The runtime's main header precompiled for the candidates' compiles (tools/verify/runtime_headers.py).

g++ says which precompiled header it read (`-H` prints `! FILE` for one it used, `x FILE` for one
it rejected), so these tests ask the compiler itself rather than timing it. A Docker sandbox's compiler is the
image's: it builds its own, tested where a daemon answers.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.build import DEFAULT_CXXFLAGS, compile_args, compile_cpp
from tools.cuda import lower_task
from tools.spec import load_task
from tools.user_cache import cache_dir, keep_newest

from test_sandbox import make_box
from tools.verify import check
from tools.verify import runtime_headers as rh
from tools.verify.check import WORK

TASK = Path(__file__).resolve().parent / "kernels" / "matmul_tiled" / "task.json"


def _used_pch(build) -> list[str]:
    return [line[2:] for line in build.output.splitlines() if line.startswith("! ")]


@pytest.mark.parametrize("kind", ["local", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_candidate_compile_reads_the_precompiled_runtime_and_stays_correct(kind, tmp_path):
    task = load_task(TASK)
    code = lower_task(task)
    with (LocalSandbox(root=tmp_path) if kind == "local" else make_box("docker")) as box:
        report = check(task, code, box, seeds=[task.inputs.seed], threads=[1, 2])
        assert report.status == "correct", report.summary()
        variants = box.run(["ls", f"{WORK}/include/cuda_runtime.h.gch"]).stdout.split()
        assert len(variants) == 1, variants  # installed beside the sandbox's copy of the headers
        box.put({f"{WORK}/again.cpp": code})
        build = compile_cpp(box, [f"{WORK}/again.cpp"], f"{WORK}/again.so", shared=True, include_dirs=[f"{WORK}/include"],
                            extra=["-H", "-Winvalid-pch"])
        assert build.ok, build.summary()
        assert [p.rsplit("/", 1)[-1] for p in _used_pch(build)] == variants, build.output[:2000]


def test_edited_headers_get_their_own_precompiled_header(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    include = tmp_path / "include"
    shutil.copytree(rh.runtime_include_dir(), include)
    monkeypatch.setattr(rh, "runtime_include_dir", lambda: include)
    args = compile_args("g++", DEFAULT_CXXFLAGS, shared=True)
    box = LocalSandbox(root=tmp_path)
    first = rh.precompiled_runtime(box, "g++", args)
    assert first is not None and first.parent == tmp_path / "cache" / "agent" / "pch"
    assert rh.precompiled_runtime(box, "g++", args) == first  # cached
    with (include / "cuda_runtime.h").open("a") as header:
        header.write("\n// edited\n")
    rh._headers_digest.cache_clear()
    try:
        again = rh.precompiled_runtime(box, "g++", args)
        assert again not in (None, first)  # never a header older than the files
        assert not first.exists()  # which nothing reads again
    finally:
        rh._headers_digest.cache_clear()
        box.close()


def test_flags_the_header_cannot_be_built_with_leave_the_compile_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    task = load_task(TASK)
    flags = [*DEFAULT_CXXFLAGS, "-fno-such-option"]
    with LocalSandbox(root=tmp_path) as box:
        assert rh.precompiled_runtime(box, "g++", compile_args("g++", flags, shared=True)) is None
        rh.put_runtime_headers(box, "include")
        rh.install_precompiled_runtime(box, "include", cxx="g++", args=compile_args("g++", flags, shared=True))
        assert not box.exists("include/cuda_runtime.h.gch")
        box.put({"k.cpp": lower_task(task)})
        build = compile_cpp(box, ["k.cpp"], "k.so", flags=flags, shared=True, include_dirs=["include"])
        assert not build.ok and "fno-such-option" in build.output  # the compiler's own error, as without it


def test_the_cache_keeps_the_newest_variants_of_each_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = cache_dir()
    folder.mkdir(parents=True)
    for age in range(10):
        for kind in ("runtime-%d.gch", "cuda_shim-%d.pch"):
            path = folder / (kind % age)
            path.write_bytes(b"x")
            os.utime(path, (1e9 - age, 1e9 - age))
    keep_newest("runtime-*.gch", 8)
    assert sorted(p.name for p in folder.glob("runtime-*")) == [f"runtime-{age}.gch" for age in range(8)]
    assert len(list(folder.glob("cuda_shim-*"))) == 10  # another kind's files are not counted
