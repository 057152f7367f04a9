"""The corpus (tests/kernels): a representative sample compiles and matches its independent
reference with 1 and 2 threads; with CUDA_CORPUS_FULL=1, every task lowers and is checked."""

import os
from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.cuda import lower_task
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
TASKS = sorted(p.parent.name for p in CORPUS.glob("*/task.json"))
SAMPLE = ["barrier_while_break", "reduce_warp_legacy", "scan_multi_block", "struct_and_2d_dynamic_shared",
          "bitonic_sort_shared", "half2_vector_ops"]
FULL = os.environ.get("CUDA_CORPUS_FULL") == "1"


def test_the_corpus_is_large_enough():
    assert len(TASKS) >= 60


@pytest.mark.parametrize("name", TASKS if FULL else [n for n in SAMPLE if n in TASKS])
def test_corpus_task_matches_its_reference(name, tmp_path):
    task = load_task(CORPUS / name / "task.json")
    with LocalSandbox(root=tmp_path) as sandbox:
        report = check(task, lower_task(task), sandbox, seeds=[task.inputs.seed, task.inputs.seed + 1], threads=[1, 2])
    assert report.status == "correct", report.summary()
    warnings = [str(w) for w in report.build.warnings] if report.build else []
    assert warnings == []
