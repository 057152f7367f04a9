"""Every corpus kernel (tests/kernels) lowered by the deterministic compiler compiles with
g++ -O3 -fopenmp -Wall without warnings in the generated code, and matches its independent
reference at the task's tolerance on two seeds, with 1 and 2 OpenMP threads."""

from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.build import DEFAULT_CXXFLAGS
from tools.cuda import lower_task
from tools.spec import load_task
from tools.verify import check

KERNELS = Path(__file__).resolve().parent / "kernels"
TASKS = sorted(KERNELS.glob("*/task.json"))


def test_the_corpus_is_large_enough():
    assert len(TASKS) >= 60


@pytest.mark.parametrize("task_path", TASKS, ids=[p.parent.name for p in TASKS])
def test_lowered_kernel_matches_its_reference(task_path):
    task = load_task(task_path)
    cpp = lower_task(task)
    with LocalSandbox() as sandbox:
        report = check(task, cpp, sandbox, seeds=[42, 7], threads=[1, 2], cxxflags=[*DEFAULT_CXXFLAGS, "-Wall"])
    assert report.status == "correct", report.summary() + "\n" + "\n".join(map(str, report.observations[:5]))
    ours = [d for d in report.build.warnings if d.file.endswith(f"{task.name}.cpp")]
    assert not ours, "\n".join(map(str, ours))
