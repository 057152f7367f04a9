"""The corpus and the optimizer's fixtures against the GPU: outputs of each task's original CUDA,
recorded on a GPU by scripts/record_gpu_goldens.py as <task dir>/<name>.golden.npz, checked
without one.

- Every task has goldens for its verifier seeds, recorded for the inputs generated today.
- The task's independent reference (numpy or C) agrees with the GPU on every recorded seed, at the
  task's tolerance: the references the corpus and optimizer tests trust are the CUDA's semantics
  (the optimizer's fixtures are the kernels built to catch reorderings).
- The compiler's output agrees with the GPU with 1 and 2 threads: tests/test_cuda_corpus.py, which
  checks each lowering against its reference and its goldens in one sandbox (one build).
A task added to either needs its goldens recorded on a GPU machine:
    python scripts/record_gpu_goldens.py tests/kernels/<name>
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sandboxes import LocalSandbox
from tools.cuda import lower_task
from tools.spec import Reference, load_task
from tools.verify import check, generate_inputs, gpu_available, open_reference
from tools.verify.check import compare_outputs, default_seeds
from tools.verify.references import GoldenReference, golden_path

from test_cuda_corpus import CORPUS, TASKS

FIXTURES = Path(__file__).parent / "optimize_fixtures"
# Tasks added in a session that had no GPU machine: named here, with why, until their goldens are
# recorded (a test below fails once they are, so that the entry goes).
AWAITING_GOLDENS = {
    "exact_butterflies": "added 2026-12-02 without a GPU machine; record with "
                         "scripts/record_gpu_goldens.py tests/optimize_fixtures/exact_butterflies",
}
TASK_DIRS = {**{name: CORPUS / name for name in TASKS},
             **{p.parent.name: p.parent for p in sorted(FIXTURES.glob("*/task.json"))
                if p.parent.name not in AWAITING_GOLDENS}}


def load_with_golden(name: str):
    task = load_task(TASK_DIRS[name] / "task.json")
    return task, GoldenReference(task, golden_path(task), kind="cuda")


@pytest.mark.parametrize("name", TASK_DIRS)
def test_goldens_cover_the_verifier_seeds(name):
    task, golden = load_with_golden(name)
    wanted = default_seeds(task)
    assert golden.seeds(wanted) == wanted
    for seed in wanted:  # raises when the goldens were recorded for other inputs
        golden.outputs(seed, generate_inputs(task, seed))


@pytest.mark.parametrize("name", TASK_DIRS)
def test_reference_agrees_with_the_gpu(name, tmp_path):
    task, golden = load_with_golden(name)
    with LocalSandbox(root=tmp_path) as sandbox, open_reference(task, sandbox) as reference:
        for seed in golden.seeds(default_seeds(task)):
            inputs = generate_inputs(task, seed)
            mismatches = compare_outputs(task, golden.outputs(seed, inputs), reference.outputs(seed, inputs),
                                         seed=seed, threads=1, run="reference vs GPU")
            assert not mismatches, "\n".join(str(m) for m in mismatches)


@pytest.mark.parametrize("name", AWAITING_GOLDENS)
def test_tasks_awaiting_goldens_have_none_yet(name):
    """Each entry of AWAITING_GOLDENS is a fixture without goldens: once they are recorded, the
    entry goes and the tests above cover the task."""
    task = load_task(FIXTURES / name / "task.json")
    assert not golden_path(task).exists(), f"{name} has goldens now: remove it from AWAITING_GOLDENS"


SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def run_script(name: str, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / name), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.skipif(gpu_available()[0], reason="a GPU answers here: recording would run")
def test_recording_without_a_gpu_says_why():
    run = run_script("record_gpu_goldens.py", CORPUS / "saxpy")
    assert run.returncode == 2
    assert "no GPU" in run.stderr and "goldens can only be recorded where a GPU runs" in run.stderr


def test_compare_script_agrees_then_catches_a_changed_golden(tmp_path):
    shutil.copy(CORPUS / "saxpy" / "saxpy.golden.npz", tmp_path)
    run = run_script("compare_gpu_goldens.py", CORPUS / "saxpy", "--goldens", tmp_path, "--compiler")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "reference agrees" in run.stdout and "compiler agrees" in run.stdout

    arrays = dict(np.load(tmp_path / "saxpy.golden.npz"))
    arrays["y@43"] = arrays["y@43"] + np.float32(1e-3)
    np.savez_compressed(tmp_path / "saxpy.golden.npz", **arrays)
    run = run_script("compare_gpu_goldens.py", CORPUS / "saxpy", "--goldens", tmp_path, "--compiler")
    assert run.returncode == 1
    assert "reference disagrees" in run.stdout and "y: 50000 of 50000 differ" in run.stdout
    assert "compiler incorrect" in run.stdout


# The published HPCTransEval development records (../shared/hpctranseval-dev), converted and their
# launches inferred as `agent eval` does, ran on an H200 (bench/results/gpu-goldens/README.md).
PUBLISHED_DEV = Path(__file__).resolve().parents[2] / "shared" / "hpctranseval-dev"
PUBLISHED_GOLDENS = Path(__file__).resolve().parents[1] / "bench" / "results" / "gpu-goldens" / "published-dev"
# Records whose CUDA, run on the GPU, disagrees with their own C reference: no translation can
# agree with both.
INCONSISTENT = {
    "topology_expansion_1": "its first kernel's guard stores 72 of T_divide's 2565 elements",
}
# Records whose goldens were dropped because the launches they ran with were wrongly inferred:
# named here, with why, until a GPU machine records them again.
PUBLISHED_AWAITING_GOLDENS = {
    "wavenet_1": "its 2026-12-04 goldens ran the kernels with parameters bound by a guess (47 kernels whose "
                 "parameters are all `ph`/`conv1d_ncw`/`pad_temp`); they are now bound by the C reference's "
                 "stages. Record with scripts/record_gpu_goldens.py on the converted task",
    "transformer_0": "no launches were inferred on 2026-12-04, so its CUDA did not run",
}


def _published_tasks(tmp_path_factory) -> dict[str, Path]:
    from agent.toolbox import infer_launches
    from bench.convert import convert_records
    from tools.cuda import parse_cuda

    if not PUBLISHED_DEV.is_dir():
        pytest.skip(f"{PUBLISHED_DEV} is absent: the published development records are not on this machine")
    out = tmp_path_factory.mktemp("published")
    tasks = {}
    recorded = {p.name.removesuffix(".golden.npz") for p in PUBLISHED_GOLDENS.glob("*.golden.npz")}
    for file in sorted(PUBLISHED_DEV.glob("*.json")):
        for path in convert_records(file, out / file.stem)[0]:
            task = load_task(path)
            if task.name not in recorded:  # no CUDA run on the GPU with the launches inferred now
                assert task.name in PUBLISHED_AWAITING_GOLDENS, f"{task.name}: no goldens, and none awaited"
                continue
            launches, _, buffers, _ = infer_launches(task, parse_cuda(task.source(), str(task.source_path())))
            if launches:
                raw = task.model_dump(mode="json", exclude_none=True)
                raw.update(launches=[l.model_dump(mode="json") for l in launches],
                           buffers=[b.model_dump(mode="json") for b in buffers])
                path.write_text(json.dumps(raw))
                tasks[task.name] = path
    return tasks


@pytest.fixture(scope="module")
def published_tasks(tmp_path_factory):
    return _published_tasks(tmp_path_factory)


@pytest.mark.parametrize("name", sorted(PUBLISHED_AWAITING_GOLDENS))
def test_published_records_awaiting_goldens_have_none(name):
    assert not (PUBLISHED_GOLDENS / f"{name}.golden.npz").exists(), f"{name} has goldens now: drop it from the list"


@pytest.mark.parametrize("name", sorted(p.name.removesuffix(".golden.npz") for p in PUBLISHED_GOLDENS.glob("*.golden.npz")))
def test_published_records_compiled_agree_with_their_cuda_on_the_gpu(name, published_tasks, tmp_path):
    """The compiler's translation of each published record's CUDA (2 threads) against that
    CUDA's outputs on the GPU; for the records whose CUDA disagrees with its C reference there,
    that disagreement is what is asserted, so that the evidence stays true."""
    task = load_task(published_tasks[name])
    gold = PUBLISHED_GOLDENS / f"{name}.golden.npz"
    golden = GoldenReference(task, gold, kind="cuda")
    seed = golden.recorded_seeds()[0]
    inputs = generate_inputs(task, seed)
    with LocalSandbox(root=tmp_path) as sandbox:
        with open_reference(task, sandbox) as reference:
            disagree = compare_outputs(task, golden.outputs(seed, inputs), reference.outputs(seed, inputs),
                                       seed=seed, threads=1, run="reference vs GPU")
        assert bool(disagree) == (name in INCONSISTENT), "\n".join(str(m) for m in disagree)
        if name not in INCONSISTENT:
            against_gpu = task.model_copy(update={"reference": Reference(kind="golden", path=str(gold))})
            report = check(against_gpu, lower_task(task), sandbox, seeds=[seed], threads=[2])
            assert report.status == "correct", report.summary()
