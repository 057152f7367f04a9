"""bench.format + bench.convert + bench.pairs: records -> kernel task files. No TVM needed."""

import json
import subprocess

import pytest

from bench.convert import c_prototype, convert_file, ir_signature, to_task
from bench.format import BenchFormatError, Record, load_records
from bench.pairs import write_pairs
from tools.spec import load_task

CUDA = '''extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ compute, float* __restrict__ data, float* __restrict__ new_) {
  compute[threadIdx.x] = max(data[threadIdx.x] + new_[threadIdx.x], 0.0f);
}
'''
C_REF = '''void default_function_kernel(float* data, float* new, float* compute) {
  float big_buffer[2097152];
  for (int i = 0; i < 64; ++i) {
    big_buffer[i] = data[i] + new[i];
    compute[i] = max(big_buffer[i], 0.0f);
  }
}
'''
IR = '''@T.prim_func
def main(data: T.Buffer((64,), "float32"), new: T.Buffer((64,), "float32"), compute: T.Buffer((64,), "float32")):
    pass
'''


def published_record() -> dict:
    # Published HPCTransEval records: no dtypes, no launches, scalar names/shapes in places.
    return {"op_name": "add_relu", "op_args": "[64]", "input_shape": [[64], [64]], "output_shape": [64],
            "input_name": ["data", "new"], "output_name": "compute", "cuda_code": CUDA, "c_code": C_REF, "ir_code": IR}


def test_published_record_becomes_a_loadable_task(tmp_path):
    bench = tmp_path / "published.json"
    bench.write_text(json.dumps([published_record()]))
    [path] = convert_file(bench, tmp_path / "tasks")
    task = load_task(path)
    assert task.launches is None  # the planner infers them
    assert [b.name for b in task.buffers] == ["data", "new_", "compute"]
    assert [b.role for b in task.buffers] == ["input", "input", "output"]
    assert task.reference.kind == "c" and task.reference.function == "default_function_kernel"
    assert task.reference.args == ["data", "new_", "compute"]
    assert "repaired" in (task.description or "")
    ref = task.path_of(task.reference.path)
    proc = subprocess.run(["g++", "-c", str(ref), "-o", str(tmp_path / "ref.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_argument_order_from_prototype_and_ir():
    assert c_prototype(C_REF) == ("default_function_kernel", [("data", "float"), ("new", "float"), ("compute", "float")])
    assert ir_signature(IR) == ["data", "new", "compute"]


def test_bad_benchmark_files_name_the_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BenchFormatError, match="bad.json"):
        load_records(bad)
    bad.write_text(json.dumps([{"op_name": "x"}]))
    with pytest.raises(BenchFormatError, match="record 0: field 'cuda_code'"):
        load_records(bad)


def test_pairs_are_deduplicated(tmp_path):
    def named(name: str, c_ref: str = C_REF) -> Record:
        # generated records embed their name in every symbol
        return Record.model_validate({**published_record(), "output_name": ["compute"], "output_shape": [[64]], "name": name,
                                      "cuda_code": CUDA.replace("default_function", name),
                                      "c_code": c_ref.replace("default_function", name)})

    same_code_other_name = named("op_1")
    other_code = named("op_2", C_REF.replace("0.0f", "1.0f"))
    out = tmp_path / "pairs.jsonl"
    assert write_pairs([named("op_0"), same_code_other_name, other_code], out) == 2
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["name"] for line in lines] == ["op_0", "op_2"]
    assert set(lines[0]) == {"name", "category", "op_name", "cuda", "cpu", "ir"}


def test_generated_record_keeps_launches(tmp_path):
    rec = Record.model_validate({
        **published_record(), "output_name": ["compute"], "output_shape": [[64]], "name": "add_relu_0",
        "input_dtype": ["float32", "float32"], "output_dtype": ["float32"], "input_range": [None, [0.1, 2.0]],
        "launches": [{"kernel": "default_function_kernel", "grid": [1], "block": [64], "args": ["compute", "data", "new"]}],
        "scratch": [{"name": "tmp", "shape": [64]}], "c_function": "default_function_kernel",
    })
    task = load_task(to_task(rec, tmp_path))
    assert task.launches[0].args == ["compute", "data", "new_"]
    assert task.buffer("tmp").role == "scratch"
    assert task.buffer("new_").inputs.low == 0.1
