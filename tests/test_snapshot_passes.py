"""The snapshot of the lowering and of every optimizer pass (scripts/snapshot_passes.py) holds for
the corpus kernels and the optimizer fixtures: a change to what the lowering or a pass emits shows
here, named by kernel and pass, until the snapshot is rewritten on purpose
(`python scripts/snapshot_passes.py --write`, which also covers the shipped HPCTransEval tasks)."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from snapshot_passes import LOWERING, SNAPSHOT, compare, snapshot, task_sets  # noqa: E402

from tools.spec import load_task  # noqa: E402


def test_lowering_and_every_pass_emit_what_the_snapshot_recorded(tmp_path):
    recorded = {k: v for k, v in json.loads(SNAPSHOT.read_text()).items() if not k.startswith("hte/")}
    today = {kernel: snapshot(load_task(path)) for kernel, path in task_sets(False, tmp_path).items()}
    assert len(today) >= 80 and all(row[LOWERING] for row in today.values())
    changes = compare(recorded, today)
    assert not changes, "\n".join(changes[:40])


def test_a_changed_output_is_named_by_kernel_and_pass():
    old = {"corpus/k": {LOWERING: "a", "specialize": None, "merge_blocks": "b"}}
    new = {"corpus/k": {LOWERING: "a", "specialize": "c", "merge_blocks": None}, "corpus/j": {LOWERING: "d"}}
    assert compare(old, new) == ["corpus/j: new", "corpus/k: merge_blocks: no longer applies",
                                 "corpus/k: specialize: now applies"]
