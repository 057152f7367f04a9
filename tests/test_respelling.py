"""Which optimizer passes apply to a kernel does not depend on how the kernel is spelled (issue 29).

Every corpus kernel and optimizer fixture has a respelled twin (tests/respell_support.py: locals
named like the lowering's counters, `i++` for `++i`, a block or grid stride in a local, `for(` for
`for (`); each pass applies to the twin exactly where the committed snapshot
(tests/snapshots/passes.json) says it applies to the original. Before the lowering renamed
clashing locals and printed keywords one way, the twins lost 255 of 1053 applications (guarded_thread_range 65, full_blocks 62, wide_indices 31, ...).
"""

import json
import shutil
import sys
from pathlib import Path

from respell_support import respell
from sandboxes import LocalSandbox
from tools.cuda import lower_task
from tools.cuda.translate import lower_source
from tools.spec import load_task
from tools.verify import check

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from snapshot_passes import LOWERING, SNAPSHOT, outputs, task_sets  # noqa: E402


def _twin(path: Path, dest: Path) -> Path:
    """A copy of the task whose CUDA source is respelled."""
    shutil.copytree(path.parent, dest)
    source = load_task(path).source_path()
    (dest / source.name).write_text(respell(source.read_text(), str(source)))
    return dest / path.name


def _applied(row: dict) -> set[str]:
    return {name for name, out in row.items()
            if name != LOWERING and out is not None and not (isinstance(out, str) and out.startswith(("raised ", "not lowered")))}


def test_every_pass_applies_to_a_respelled_twin_where_it_applies_to_the_original(tmp_path):
    recorded = json.loads(SNAPSHOT.read_text())
    differ, twins = [], 0
    for kernel, path in task_sets(False, tmp_path / "sets").items():
        twin = load_task(_twin(path, tmp_path / "twins" / kernel.replace("/", "_")))
        if twin.source() == load_task(path).source():
            continue  # nothing to respell
        twins += 1
        original, respelled = _applied(recorded[kernel]), _applied(outputs(twin))
        if original != respelled:
            differ.append(f"{kernel}: lost {sorted(original - respelled)}, gained {sorted(respelled - original)}")
    assert twins >= 80
    assert not differ, "\n".join(differ)


def test_a_twin_is_the_same_program_and_the_lowering_keeps_its_own_names(tmp_path):
    task = load_task(_twin(ROOT / "tests" / "kernels" / "matmul_tiled" / "task.json", tmp_path / "twin"))
    source = task.source()
    assert "tz = threadIdx.y" in source and "for(int warp = 0" in source and "warp++)" in source
    assert "__shared__ float bx[TILE][TILE];" in source
    lowered = lower_source(source, "twin.cu").cpp
    # the user's tz became tz_2, its shared bx bx_2; the lowering's counters kept their names
    assert "for (unsigned int tz = 0; tz < blockDim.z; ++tz)" in lowered and "tz_2 = threadIdx.y" in lowered
    assert "for (unsigned int bx = 0; bx < gridDim.x; ++bx)" in lowered and "bx_2[tz_2][bz_2] =" in lowered
    assert "for(" not in lowered
    with LocalSandbox(root=tmp_path) as sandbox:
        report = check(task, lower_task(task), sandbox, seeds=[task.inputs.seed], threads=[1, 2])
    assert report.status == "correct", report.summary()
