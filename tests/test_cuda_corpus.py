"""The corpus (tests/kernels): a representative sample compiles and matches its independent
reference and its CUDA's outputs recorded on a GPU (tests/test_gpu_goldens.py) with 1 and 2
threads; with CUDA_CORPUS_FULL=1, every task lowers and is checked."""

import os
from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.cuda import lower_task
from tools.spec import Reference, load_task
from tools.verify import check
from tools.verify.check import default_seeds

CORPUS = Path(__file__).parent / "kernels"
TASKS = sorted(p.parent.name for p in CORPUS.glob("*/task.json"))
SAMPLE = ["barrier_while_break", "reduce_warp_legacy", "scan_multi_block", "struct_and_2d_dynamic_shared",
          "bitonic_sort_shared", "half2_vector_ops"]
FULL = os.environ.get("CUDA_CORPUS_FULL") == "1"


def test_the_corpus_is_large_enough():
    assert len(TASKS) >= 60


@pytest.mark.parametrize("name", TASKS if FULL else [n for n in SAMPLE if n in TASKS])
def test_corpus_task_matches_its_reference_and_the_gpu(name, tmp_path):
    task = load_task(CORPUS / name / "task.json")
    lowered = lower_task(task)
    on_gpu = task.model_copy(update={"reference": Reference(kind="golden", path=f"{name}.golden.npz")})
    with LocalSandbox(root=tmp_path) as sandbox:  # one build: the second check reuses it
        report = check(task, lowered, sandbox, seeds=[task.inputs.seed, task.inputs.seed + 1], threads=[1, 2])
        against_gpu = check(on_gpu, lowered, sandbox, seeds=default_seeds(task), threads=[1, 2])
    assert report.status == "correct", report.summary()
    warnings = [str(w) for w in report.build.warnings] if report.build else []
    assert warnings == []
    assert against_gpu.status == "correct", against_gpu.summary()
    assert against_gpu.reference_kind == "golden"
