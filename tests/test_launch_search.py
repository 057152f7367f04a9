"""The agent's loop tries launch inference's other answers where it had a real choice.

A published-format record (no launches) whose CUDA reads two inputs of one size through
parameters it names itself: the static binding pairs them in the order the C reference reads
them, which here is the wrong way round; the loop finds the right one by running each answer
against the C reference. A record with no such choice tries nothing else.
"""

import io
import json
from pathlib import Path

from agent.commands.evaluate import run
from agent.configuration import load_settings

# The reference reads ph_1 before ph; the kernel reads its ph before its ph_1, and its ph is ph:
# paired in the order of use, the first answer binds them the wrong way round.
SWAPPED_C = """void default_function_kernel(float* T_out, float* ph, float* ph_1) {
  for (int32_t i = 0; i < 10; ++i) {
    T_out[i] = (((0.000000e+00f - ph_1[i]) + ph[i]) * 2.000000e+00f);
  }
}
"""
SWAPPED_CUDA = """
extern "C" __global__ void __launch_bounds__(10) default_function_kernel_1(float* __restrict__ T_out, float* __restrict__ T_a) {
  T_out[((int)threadIdx.x)] = (T_a[((int)threadIdx.x)] * 2.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(10) default_function_kernel(float* __restrict__ T_a, float* __restrict__ ph, float* __restrict__ ph_1) {
  T_a[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] - ph_1[((int)threadIdx.x)]);
}
"""
ONE_INPUT_C = """void default_function_kernel(float* T_out, float* ph) {
  for (int32_t i = 0; i < 10; ++i) {
    T_out[i] = ((0.000000e+00f - ph[i]) * 2.000000e+00f);
  }
}
"""
ONE_INPUT_CUDA = """
extern "C" __global__ void __launch_bounds__(10) default_function_kernel_1(float* __restrict__ T_out, float* __restrict__ T_a) {
  T_out[((int)threadIdx.x)] = (T_a[((int)threadIdx.x)] * 2.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(10) default_function_kernel(float* __restrict__ T_a, float* __restrict__ ph) {
  T_a[((int)threadIdx.x)] = (0.000000e+00f - ph[((int)threadIdx.x)]);
}
"""


def _record(c_code: str, cuda_code: str, inputs: list[str]) -> dict:
    params = ", ".join(f'{n}: T.Buffer((2, 5), "float32")' for n in [*inputs, "T_out"])
    return {
        "op_name": "sub_scale", "c_code": c_code, "cuda_code": cuda_code,
        "ir_code": "@I.ir_module\nclass Module:\n    @T.prim_func\n"
                   f"    def main({params}):\n        T.func_attr({{\"tir.noalias\": T.bool(True)}})\n",
        "op_args": [["sub_scale"]], "input_shape": [[2, 5]] * len(inputs), "output_shape": [[2, 5]],
    }


def _evaluate(tmp_path: Path, record: dict, max_iters: int) -> tuple[dict, list[dict]]:
    """`agent eval` (compiler translator) of one record: its report row and its trace's events."""
    from rich.console import Console

    published = tmp_path / "ComputationGraph.json"
    published.write_text(json.dumps([record]))
    cfg = load_settings(llm="compiler", sandbox="local", jobs=1)
    cfg = cfg.model_copy(update={"budgets": cfg.budgets.model_copy(update={"max_iters": max_iters})})
    run(published, cfg, out=tmp_path / "report", console=Console(file=io.StringIO(), width=200))
    [row] = json.loads((tmp_path / "report" / "report.json").read_text())["tasks"]
    events = [json.loads(line) for trace in (tmp_path / "report").rglob("*.jsonl") for line in trace.read_text().splitlines()]
    results = list((tmp_path / "report").rglob("result.json"))
    row["result"] = json.loads(results[0].read_text()) if results else {}
    return row, events


def _alternatives_tried(events: list[dict]) -> list[dict]:
    return [e["data"] for e in events if e.get("type") == "decision" and e.get("node") == "plan"]


def test_inference_lists_the_swapped_binding_as_an_alternative_and_keeps_its_first_answer(tmp_path):
    from bench.convert import convert_records
    from tools.cuda import parse_cuda
    from tools.cuda.launch_inference import infer
    from tools.spec import load_task

    published = tmp_path / "ComputationGraph.json"
    published.write_text(json.dumps([_record(SWAPPED_C, SWAPPED_CUDA, ["ph", "ph_1"])]))
    [path], _ = convert_records(published, tmp_path / "tasks")
    task = load_task(path)
    module = parse_cuda(task.source(), str(task.source_path()))
    first, searched = infer(task, module), infer(task, module, alternatives=8)
    assert [l.args for l in searched.launches] == [l.args for l in first.launches] and not first.alternatives
    [alternative] = searched.alternatives
    [k0, _], [a0, _] = first.launches, alternative.launches
    assert k0.args[1:] == list(reversed(a0.args[1:])), (first.explanation, alternative.explanation)
    assert alternative.explanation.startswith("alternative 1: default_function_kernel's ")


def test_the_loop_tries_the_other_binding_when_the_first_mismatches_the_reference(tmp_path):
    # two attempts: the first answer (incorrect), then the alternative (no optimization after it)
    row, events = _evaluate(tmp_path, _record(SWAPPED_C, SWAPPED_CUDA, ["ph", "ph_1"]), max_iters=2)
    assert row["status"] == "correct", row
    tried = _alternatives_tried(events)
    assert [(t["launches"], t["status"]) for t in tried] == [("the first answer", "incorrect"), ("alternative 1 of 1", "correct")]
    statuses = [e["data"]["status"] for e in events if e.get("type") == "node_end" and e.get("node") == "test"]
    assert statuses[:2] == ["incorrect", "correct"]
    assert row["result"]["launches"].startswith("inferred; alternative 1 verified (2 of 2 answers checked)")
    assert row["launches"] == row["result"]["launches"]  # in the report's row too
    report = (tmp_path / "report" / "report.md").read_text()
    assert "(1 verified with another answer of the inference than its first)" in report


def test_a_record_with_no_choice_tries_nothing_else(tmp_path):
    row, events = _evaluate(tmp_path, _record(ONE_INPUT_C, ONE_INPUT_CUDA, ["ph"]), max_iters=1)
    assert row["status"] == "correct", row
    assert _alternatives_tried(events) == []
    assert row["result"]["launches"] == "inferred"


def test_no_search_where_the_iteration_budget_allows_no_attempt_after_it(tmp_path):
    row, events = _evaluate(tmp_path, _record(SWAPPED_C, SWAPPED_CUDA, ["ph", "ph_1"]), max_iters=1)
    assert row["status"] == "incorrect" and _alternatives_tried(events) == []
    assert row["result"]["launches"] == "inferred; its other answers not searched"


# Two pairs of same-size inputs (ph, ph_1: 10 elements; ph_2, ph_3: 20), each read by the reference
# in the other order than the kernel reads them: both pairings of the first answer are wrong.
TWO_PAIRS_C = """void default_function_kernel(float* T_out, float* ph, float* ph_1, float* ph_2, float* ph_3) {
  for (int32_t i = 0; i < 10; ++i) {
    T_out[i] = ((((0.000000e+00f - ph_1[i]) + ph[i]) * ((0.000000e+00f - ph_3[((i * 2) + 1)]) + ph_2[(i * 2)])) * 2.000000e+00f);
  }
}
"""
TWO_PAIRS_CUDA = """
extern "C" __global__ void __launch_bounds__(10) default_function_kernel_1(float* __restrict__ T_out, float* __restrict__ T_a) {
  T_out[((int)threadIdx.x)] = (T_a[((int)threadIdx.x)] * 2.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(10) default_function_kernel(float* __restrict__ T_a, float* __restrict__ ph, float* __restrict__ ph_1, float* __restrict__ ph_2, float* __restrict__ ph_3) {
  T_a[((int)threadIdx.x)] = ((ph[((int)threadIdx.x)] - ph_1[((int)threadIdx.x)]) * (ph_2[(((int)threadIdx.x) * 2)] - ph_3[((((int)threadIdx.x) * 2) + 1)]));
}
"""


def test_two_pairs_bound_the_wrong_way_round_are_swapped_together(tmp_path):
    from bench.convert import convert_records
    from sandboxes import LocalSandbox
    from agent.toolbox import launches_from
    from tools.cuda import lower_task, parse_cuda
    from tools.cuda.launch_inference import MAX_ALTERNATIVES, infer
    from tools.spec import load_task
    from tools.verify import check

    record = _record(TWO_PAIRS_C, TWO_PAIRS_CUDA, ["ph", "ph_1", "ph_2", "ph_3"])
    record["ir_code"] = record["ir_code"].replace('ph_2: T.Buffer((2, 5)', 'ph_2: T.Buffer((4, 5)').replace(
        'ph_3: T.Buffer((2, 5)', 'ph_3: T.Buffer((4, 5)')
    record["input_shape"] = [[2, 5], [2, 5], [4, 5], [4, 5]]
    published = tmp_path / "ComputationGraph.json"
    published.write_text(json.dumps([record]))
    [path], _ = convert_records(published, tmp_path / "tasks")
    task = load_task(path)
    found = infer(task, parse_cuda(task.source(), str(task.source_path())), alternatives=MAX_ALTERNATIVES)
    assert found.launches[0].args == ["T_a", "ph_1", "ph", "ph_3", "ph_2"], found.explanation

    def status(answer) -> str:
        launches, _, buffers, _ = launches_from(task, answer)
        candidate = task.model_copy(update={"launches": launches, "buffers": buffers})
        with LocalSandbox(root=tmp_path) as sandbox:
            return check(candidate, lower_task(candidate), sandbox, threads=[1]).status

    assert status(found) == "incorrect"
    right = [a for a in found.alternatives if a.launches[0].args == ["T_a", "ph", "ph_1", "ph_2", "ph_3"]]
    assert right and status(right[0]) == "correct", [a.explanation for a in found.alternatives]


# The reference reads ph before ph_1, as the kernel does: the first answer is right.
IN_ORDER_C = SWAPPED_C.replace("((0.000000e+00f - ph_1[i]) + ph[i])", "(ph[i] - ph_1[i])")
# Neither binding computes what the reference does (it adds where the kernel subtracts).
NEITHER_C = SWAPPED_C.replace("((0.000000e+00f - ph_1[i]) + ph[i])", "(ph[i] + ph_1[i])")


def _tool_calls(events: list[dict], tool: str) -> list[dict]:
    return [e for e in events if e.get("type") == "tool_call" and e["data"]["tool"] == tool]


def test_the_other_answers_are_searched_for_only_after_the_first_mismatches(tmp_path):
    row, events = _evaluate(tmp_path, _record(IN_ORDER_C, SWAPPED_CUDA, ["ph", "ph_1"]), max_iters=1)
    assert row["status"] == "correct", row
    assert _tool_calls(events, "search_launches") == [] and _alternatives_tried(events) == []
    assert row["result"]["launches"] == "inferred; the first answer verified"


def test_when_every_answer_mismatches_the_loop_goes_on_fixing(tmp_path):
    row, events = _evaluate(tmp_path, _record(NEITHER_C, SWAPPED_CUDA, ["ph", "ph_1"]), max_iters=3)
    assert row["status"] == "incorrect", row
    assert len(_tool_calls(events, "search_launches")) == 1
    assert [t["status"] for t in _alternatives_tried(events)] == ["incorrect", "incorrect"]
    decisions = [e["data"]["next"] for e in events if e.get("type") == "decision" and e.get("node") == "decide"]
    assert decisions[0] == "replan" and "replan" not in decisions[1:], decisions  # searched once, then fixing
    assert row["result"]["launches"] == "inferred; 2 of 2 answers checked, none verified"
