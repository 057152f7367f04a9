"""The TVM generator: reproducible for a seed, verified records, loadable tasks.

Skipped (with the reason printed) where TVM is not installed.
"""

import io
import json
import re

import pytest
from rich.console import Console

from tvm_support import announce, needs_tvm

pytestmark = needs_tvm
announce("test_bench_generate")


def _generate(out, seed=7):
    from agent.commands.bench import generate

    console = Console(file=io.StringIO(), width=200)
    status = generate(out, ops=["relu", "softmax"], graphs=1, seed=seed, pairs=True, console=console, per_op=1)
    return status, console.file.getvalue()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    status, log = _generate(out)
    assert status == 0, log
    return out


def test_generation_is_reproducible(generated, tmp_path):
    status, log = _generate(tmp_path)
    assert status == 0, log
    for name in ("elementwise.json", "reduction.json", "graph.json", "pairs.jsonl"):
        assert (generated / name).read_text() == (tmp_path / name).read_text(), name


def test_records_are_verified_and_complete(generated):
    from bench.format import load_records

    manifest = json.loads((generated / "manifest.json").read_text())
    assert manifest["counts"] == {"elementwise": 1, "reduction": 1, "graph": 1}
    for category in manifest["counts"]:
        for rec in load_records(generated / f"{category}.json"):
            assert rec.check is not None and rec.check.max_abs_err < 1e-3
            assert rec.launches and all(l.block[0] >= 1 for l in rec.launches)
            assert "__global__" in rec.cuda_code and "TVM" not in rec.c_code
            assert rec.ir_code.lstrip().startswith("# from tvm.script")
            kernels = {l.kernel for l in rec.launches}
            assert all(f"{k}(" in rec.cuda_code for k in kernels)


def _kernel_bodies(cuda: str) -> dict[str, str]:
    parts = re.split(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(', cuda)
    return {name: body for name, body in zip(parts[1::2], parts[2::2]) if not body.split(")", 1)[1].lstrip().startswith(";")}


def _writes(body: str, buffer: str) -> bool:
    return re.search(rf"\b{buffer}_ptr\[(?:[^\[\]]|\[[^\[\]]*\])*\]\s*=[^=]", body) is not None


def test_graph_launches_follow_data_flow(generated):
    """Launch order: every scratch buffer a kernel reads was written by an earlier kernel."""
    from bench.format import load_records

    [rec] = load_records(generated / "graph.json")
    bodies = _kernel_bodies(rec.cuda_code)
    assert [l.kernel for l in rec.launches] == list(bodies)  # each launched kernel is defined, in that order
    scratch = {s.name for s in rec.scratch}
    assert scratch  # seed 7's graph: dense -> concat, the dense result crosses kernels
    written: set[str] = set()
    for launch in rec.launches:
        body = bodies[launch.kernel]
        for name in scratch & set(launch.args):
            assert _writes(body, name) or name in written, f"{launch.kernel} reads {name} before any kernel writes it"
        written |= {name for name in scratch if _writes(body, name)}


def test_generated_tasks_load(generated, tmp_path):
    from bench.convert import convert_file
    from tools.spec import load_task

    for category in ("elementwise", "reduction", "graph"):
        for path in convert_file(generated / f"{category}.json", tmp_path / category):
            task = load_task(path)
            assert task.launches and task.reference.kind == "c"
            assert task.category == category


def test_unknown_operator_is_one_clear_error(tmp_path):
    from agent.commands.bench import generate
    from agent.errors import UserError

    with pytest.raises(UserError, match="unknown operator"):
        generate(tmp_path, ops=["no_such_op"], graphs=0, seed=0, pairs=False, console=Console(file=io.StringIO()))


def test_a_workload_the_map_could_not_run_is_dropped_with_the_reason():
    """A map (a Ray cluster) that returns an error for one workload: that record is dropped, named,
    with the error, and the others are generated."""
    from bench.generator import GenConfig, generate as run_generator

    def flaky(function, calls):
        return [RuntimeError("on the cluster: WorkerCrashedError: the worker died")] + [function(*c) for c in calls[1:]]

    result = run_generator(GenConfig(seed=7, ops=["relu"], per_op=2), map_workloads=flaky)
    [(name, why)] = result.dropped.items()
    assert "not prepared: on the cluster: WorkerCrashedError" in why and name in why
    assert len(result.records["elementwise"]) == 1
