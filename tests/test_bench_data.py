"""The shipped benchmark (bench/data): scale, every C reference compiles, a sample reproduces
its stored outputs, every record converts to a loadable task. No TVM needed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.convert import convert_file
from bench.format import load_records
from tools.spec import load_task

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"
OPERATOR_CATEGORIES = ("elementwise", "reduction", "layout", "logic", "compute")

pytestmark = pytest.mark.skipif(not (DATA / "manifest.json").is_file(), reason="bench/data has not been generated")


def _manifest() -> dict:
    return json.loads((DATA / "manifest.json").read_text())


def _files() -> list[Path]:
    return [DATA / f"{c}.json" for c in sorted(_manifest()["counts"])]


def test_scale_and_manifest_agree():
    counts = _manifest()["counts"]
    for path in _files():
        assert len(load_records(path)) == counts[path.stem]
    assert sum(counts.get(c, 0) for c in OPERATOR_CATEGORIES) >= 100
    assert counts.get("graph", 0) >= 100
    assert counts.get("block", 0) >= 10
    assert sum(p.stat().st_size for p in _files()) < 8_000_000


def test_every_reference_compiles(tmp_path):
    # one translation unit for all references: one gcc run, the headers parsed once
    names, units = set(), []
    for path in _files():
        for rec in load_records(path):
            assert rec.c_function not in names, f"duplicate C function name {rec.c_function}"
            names.add(rec.c_function)
            units.append(f"// ---- {path.name}: {rec.name}\n{rec.c_code}")
    src = tmp_path / "all_refs.c"
    src.write_text("\n".join(units))
    proc = subprocess.run(["gcc", "-std=gnu11", "-O0", "-c", "-Werror=implicit-function-declaration", str(src),
                           "-o", str(tmp_path / "all_refs.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_sample_reproduces_stored_outputs():
    # in a child process: a crashing reference fails this test instead of killing pytest
    proc = subprocess.run([sys.executable, "-m", "bench.check", *map(str, _files()), "--sample", "12"],
                          capture_output=True, text=True, cwd=DATA.parents[1])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 failed" in proc.stdout


def test_every_record_converts_to_a_loadable_task(tmp_path):
    for path in _files():
        for task_path in convert_file(path, tmp_path / path.stem):
            task = load_task(task_path)
            assert task.launches and task.reference.kind == "c"
            names = {b.name for b in task.buffers}
            assert set(task.reference.args) <= names
