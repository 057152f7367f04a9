"""bench.published + bench.convert: HPCTransEval records as their authors published them.

The signatures are the authority on buffers (names, order, shapes, dtypes, outputs); a record
that cannot become a task is reported and the others go on. The development slice of the
published files (../shared/hpctranseval-dev) is read in place where it exists."""

import json
import subprocess
from pathlib import Path

import pytest

from bench.convert import convert_records
from bench.evaluate import build_report, invalid_row, resolve
from bench.format import Record
from bench.published import category_of, ir_main_buffers
from tools.cuda import parse_cuda
from tools.cuda.launch_inference import infer
from tools.spec import load_task

DEV = Path(__file__).resolve().parents[2] / "shared" / "hpctranseval-dev"

# A published-style scatter: no names, an input listed that the computation does not take
# (`unused`), a bare C function (int32_t, no includes), an integer index input.
C_REF = """void default_function_kernel(float* data, int32_t* indices, float* out, float* updates) {
  for (int32_t i = 0; i < 8; ++i) {
    out[i] = data[i];
  }
  for (int32_t j = 0; j < 2; ++j) {
    for (int32_t k = 0; k < 4; ++k) {
      out[((indices[j] * 4) + k)] = (out[((indices[j] * 4) + k)] + updates[((j * 4) + k)]);
    }
  }
}
"""
IR = """# from tvm.script import tir as T
@I.ir_module
class Module:
    @T.prim_func
    def main(data: T.Buffer((2, 4), "float32"), indices: T.Buffer((1, 2), "int32"), unused: T.Buffer((2, 4), "float32"), updates: T.Buffer((2, 4), "float32"), out: T.Buffer((2, 4), "float32")):
        out_1 = T.Buffer((8,), data=out.data)
        for i in range(8):
            data_1 = T.Buffer((8,), data=data.data)
            out_1[i] = data_1[i]
"""
CUDA = """extern "C" __global__ void __launch_bounds__(8) default_function_kernel(float* __restrict__ data, float* __restrict__ out_cuda) {
  out_cuda[((int)threadIdx.x)] = data[((int)threadIdx.x)];
}
"""


def published(**changes) -> dict:
    return {"op_name": "scatter_nd", "c_code": C_REF, "cuda_code": CUDA, "ir_code": IR, "op_args": "None",
            "input_shape": [[2, 4], [1, 2], [2, 4], [2, 4]], "output_shape": [[2, 4]], **changes}


def test_buffers_come_from_the_signatures_and_the_repairs_are_said(tmp_path):
    bench = tmp_path / "IndependentOperator.json"
    bench.write_text(json.dumps([published()]))
    [path], invalid = convert_records(bench, tmp_path / "tasks")
    assert invalid == []
    task = load_task(path)
    assert [(b.name, b.role, b.shape, b.dtype) for b in task.buffers] == [
        ("data", "input", [2, 4], "float32"), ("indices", "input", [1, 2], "int32"),
        ("updates", "input", [2, 4], "float32"), ("out", "output", [2, 4], "float32")]
    assert task.category == "layout"
    # indices index axes of 2 and 4 elements: drawn in [0, 1]
    assert (task.buffer("indices").inputs.low, task.buffer("indices").inputs.high) == (0.0, 1.0)
    for said in ("dropped: unused", "no names listed", "included math.h", "integer inputs drawn"):
        assert said in task.description
    ref = task.path_of(task.reference.path)
    proc = subprocess.run(["gcc", "-c", str(ref), "-o", str(tmp_path / "ref.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_outputs_are_what_the_tvmscript_stores_to_even_where_views_reuse_a_name():
    ir = """@T.prim_func
def main(x: T.Buffer((4,), "float32"), a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
    v = T.Buffer((4,), data=a.data)
    v[0] = T.float32(1)
    v = T.Buffer((4,), data=b.data)
    v[0] = T.float32(2)
"""
    buffers = ir_main_buffers(ir)
    assert [(b.name, b.stored) for b in buffers] == [("x", False), ("a", True), ("b", True)]


def test_categories_from_the_operator_name_and_the_file():
    def cat(name: str, kind: str = "operator") -> str:
        return category_of(Record.model_validate(published(op_name=name)), kind)

    assert [cat(n) for n in ("rsqrt", "log_softmax", "batch_to_space_nd", "max_pool2d", "where", "fifo_buffer",
                             "reduce_max", "conv2d_nchw")] == [
        "elementwise", "reduction", "layout", "compute", "logic", "layout", "reduction", "compute"]
    assert cat("rsqrt", "graph") == "graph" and cat("transformer", "block") == "block"
    assert cat("something_new") in ("elementwise", "reduction", "layout", "logic")  # from its C reference


def test_a_record_that_cannot_be_a_task_is_reported_and_the_others_go_on(tmp_path):
    broken = published(name="broken", c_code=C_REF.replace("float* updates", "float* missing"))
    bench = tmp_path / "IndependentOperator.json"
    bench.write_text(json.dumps([broken, published()]))
    found = resolve(bench, tmp_path / "work")
    assert [t.task.name for t in found.tasks] == ["scatter_nd_1"]
    [bad] = found.invalid
    assert bad.name == "broken" and "['missing'] are not buffers of the TVMScript main" in bad.reason
    report = build_report(str(bench), "compiler", [invalid_row(bad)])
    [row] = report["tasks"]
    assert row["status"] == "invalid_task" and row["category"] == "layout" and "missing" in row["detail"]
    assert report["summary"]["total"] == 1 and report["summary"]["correct"] == 0


@pytest.mark.skipif(not DEV.is_dir(), reason="../shared/hpctranseval-dev (the published development slice) is absent")
@pytest.mark.parametrize("file", ["IndependentOperator", "ComputationGraph", "ModelBuildingBlock"])
def test_every_published_development_record_becomes_a_categorized_task(tmp_path, file):
    paths, invalid = convert_records(DEV / f"{file}.json", tmp_path)
    assert invalid == [] and paths
    for path in paths:
        task = load_task(path)
        assert task.category in {"IndependentOperator": ("elementwise", "reduction", "layout", "logic", "compute"),
                                 "ComputationGraph": ("graph",), "ModelBuildingBlock": ("block",)}[file]
        assert {b.role for b in task.buffers} >= {"input", "output"}
        if file != "ModelBuildingBlock":  # launch inference for the 46-kernel transformer is still open
            found = infer(task, parse_cuda(task.source(), str(task.source_path())))
            assert found.launches is not None, f"{task.name}: {found.explanation}"


# A block whose C reference numbers its placeholders in another order than the TVMScript `main`:
# the C's `ph_1` is main's `ph` (4 elements) and the C's `ph` is main's `ph_1` (8 elements).
BLOCK_C = """void default_function_kernel(float* T_add, float* ph, float* ph_1) {
  for (int32_t i = 0; i < 4; ++i) {
    T_add[i] = ph_1[i];
  }
  for (int32_t j = 0; j < 8; ++j) {
    T_add[(j % 4)] = (T_add[(j % 4)] + ph[j]);
  }
}
"""
BLOCK_IR = """@I.ir_module
class Module:
    @T.prim_func
    def main(ph: T.Buffer((4,), "float32"), ph_1: T.Buffer((8,), "float32"), T_add: T.Buffer((4,), "float32")):
        for i in range(4):
            T_add[i] = ph[i]
        for j in range(8):
            T_add[j % 4] = T_add[j % 4] + ph_1[j]
"""


def test_c_parameters_are_the_tvmscript_buffers_they_access_not_those_they_are_named_after(tmp_path):
    from bench.published import c_first_use, ir_first_use, params_by_use

    assert ir_first_use(BLOCK_IR) == ["T_add", "ph", "ph_1"]
    assert c_first_use(BLOCK_C, ["T_add", "ph", "ph_1"]) == ["T_add", "ph_1", "ph"]
    params = [("T_add", "float"), ("ph", "float"), ("ph_1", "float")]
    # by name the C's `ph` (8 elements read) would run past main's `ph` (4): paired by use instead
    assert params_by_use(BLOCK_C, "default_function_kernel", params, BLOCK_IR) == {"ph_1": "ph", "ph": "ph_1"}
    # where the names fit what the code accesses they stay, even if a hoisted let reorders the uses
    fitting = BLOCK_C.replace("ph[j]", "ph_1[j]").replace("= ph_1[i]", "= ph[i]")
    assert params_by_use(fitting, "default_function_kernel", params, BLOCK_IR) is None
    bench = tmp_path / "ModelBuildingBlock.json"
    bench.write_text(json.dumps([{"op_name": "block", "c_code": BLOCK_C, "cuda_code": CUDA, "ir_code": BLOCK_IR,
                                  "op_args": "None", "input_shape": [[4], [8]], "output_shape": [[4]]}]))
    [path], invalid = convert_records(bench, tmp_path / "tasks")
    assert invalid == []
    task = load_task(path)
    assert [(b.name, b.shape) for b in task.buffers] == [("ph", [4]), ("ph_1", [8]), ("T_add", [4])]
    ref = task.path_of(task.reference.path).read_text()
    assert "T_add[i] = ph[i]" in ref and "ph_1[j]" in ref and "renamed to the TVMScript buffers" in task.description


def test_an_input_the_c_reference_reads_past_is_padded_and_said(tmp_path):
    """The C reads data[i + 4] for i < 8 of 8 elements (as a published block's convolution reads past a
    weight): the task pads data by 4, so both sides read defined values there."""
    c_ref = C_REF.replace("out[i] = data[i];", "out[i] = data[i] + data[i + 4];")
    bench = tmp_path / "IndependentOperator.json"
    bench.write_text(json.dumps([published(c_code=c_ref)]))
    [path], _ = convert_records(bench, tmp_path / "tasks")
    task = load_task(path)
    assert task.buffer("data").padding == 4 and task.buffer("updates").padding == 0
    assert "input data padded by 4 elements: the C reference reads 12 of its 8" in task.description


def test_shipped_records_rewritten_in_the_published_layout_convert_and_infer(tmp_path):
    """bench.as_published (scripts/check_published_layout.py) makes published-layout records from
    ours: no launches or scratch, a bare `default_function_kernel`, `main`, kernels numbered and
    defined out of order that name their parameters themselves; they read back as published ones."""
    import random
    import re

    from bench.as_published import as_published
    from bench.format import load_records

    data = Path(__file__).resolve().parents[1] / "bench" / "data"
    [rec] = [r for r in load_records(data / "graph.json") if r.name == "graph_2"]
    out = as_published(rec, random.Random(0))
    assert set(out) <= {"op_name", "c_code", "cuda_code", "ir_code", "op_args", "input_shape", "output_shape",
                        "input_name", "output_name"}
    assert out["c_code"].startswith("void default_function_kernel(float* T_divide, float* T_layer_norm, float* ph,")
    assert "#include" not in out["c_code"] and "def main(ph: T.Buffer" in out["ir_code"]
    kernels = re.findall(r"void __launch_bounds__\(\d+\) (\w+)\(([^)]*)\)", out["cuda_code"])
    assert sorted(k for k, _ in kernels) == ["default_function_kernel"] + [f"default_function_kernel_{i}" for i in range(1, 5)]
    assert not any("_ptr" in params or "x0" in params for _, params in kernels)
    bench = tmp_path / "ComputationGraph.json"
    bench.write_text(json.dumps([out]))
    [path], invalid = convert_records(bench, tmp_path / "tasks")
    assert invalid == []
    task = load_task(path)
    assert task.launches is None and [b.name for b in task.buffers] == ["ph", "ph_1", "ph_2", "ph_3", "ph_4", "T_divide", "T_layer_norm"]
    found = infer(task, parse_cuda(task.source(), str(task.source_path())))
    # the dense reads x1 and w2 (the task's ph_1 and ph_2), whatever the kernel calls them
    assert found.launches[0].args == ["T_matmul_NT", "ph_2", "ph_1"], found.explanation


def test_shapes_written_with_typed_integers_are_constant_shapes(tmp_path):
    """A TVMScript signature may type its axes (`T.Buffer((T.int64(42), T.int64(9)), ...)`): they are
    constants, and a record without names still takes its buffers from the signature."""
    ir = IR.replace('unused: T.Buffer((2, 4), "float32")', 'unused: T.Buffer((T.int64(2), T.int64(4)), "float32")') \
           .replace('out: T.Buffer((2, 4), "float32")', 'out: T.Buffer((T.int64(2), T.int32(4)), "float32")')
    assert [b.shape for b in ir_main_buffers(ir)] == [(2, 4), (1, 2), (2, 4), (2, 4), (2, 4)]
    bench = tmp_path / "IndependentOperator.json"
    bench.write_text(json.dumps([published(ir_code=ir, input_shape=[[2, 4]])]))  # lists that disagree
    [path], invalid = convert_records(bench, tmp_path / "tasks")
    assert invalid == []
    assert [(b.name, b.shape) for b in load_task(path).buffers] == [
        ("data", [2, 4]), ("indices", [1, 2]), ("updates", [2, 4]), ("out", [2, 4])]


# One of our records (launches, its own names): an elementwise kernel that binds threads and a
# single-thread sum that binds none; the C reference's first loop writes one element per
# iteration, its second accumulates into one.
OURS_CUDA = """extern "C" __global__ void __launch_bounds__(8) toy_0_kernel(float* __restrict__ T_add_ptr, float* __restrict__ x_ptr, float* __restrict__ y_ptr) {
  T_add_ptr[((int)threadIdx.x)] = (x_ptr[((int)threadIdx.x)] + y_ptr[((int)threadIdx.x)]);
}

extern "C" __global__ void __launch_bounds__(1) toy_0_kernel_1(float* __restrict__ T_add_ptr, float* __restrict__ T_sum_ptr) {
  T_sum_ptr[0] = 0.000000e+00f;
  for (int k = 0; k < 8; ++k) {
    T_sum_ptr[0] = (T_sum_ptr[0] + T_add_ptr[k]);
  }
}
"""
OURS_C = """#include <stdint.h>

void toy_0(float* __restrict__ x, float* __restrict__ y, float* __restrict__ T_add, float* __restrict__ T_sum) {
  for (int32_t i = 0; i < 8; ++i) {
    int32_t cse_v1 = i;
    T_add[cse_v1] = (x[cse_v1] + y[cse_v1]);
  }
  T_sum[0] = 0.000000e+00f;
  for (int32_t k = 0; k < 8; ++k) {
    T_sum[0] = (T_sum[0] + T_add[k]);
  }
}
"""
OURS_IR = """@I.ir_module
class Module:
    @T.prim_func
    def toy_0(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32"), T_add: T.Buffer((8,), "float32"), T_sum: T.Buffer((1,), "float32")):
        for i in range(8):
            T_add[i] = x[i] + y[i]
        T_sum[0] = T.float32(0)
        for k in range(8):
            T_sum[0] = T_sum[0] + T_add[k]
"""


def test_the_published_layout_generator_imitates_what_the_published_files_do(tmp_path):
    """bench.as_published writes what the published files have: no names or one name for many
    buffers, an input listed (and in `main`) that the computation does not take, C parameters in
    name order, `#pragma omp parallel for` on the outer loops whose iterations write their own
    elements (not on an accumulation), `__launch_bounds__` only on kernels that bind threads.
    Such records convert, and the one with all of it infers, lowers and verifies."""
    import random

    from bench.as_published import as_published
    from sandboxes import open_sandbox
    from tools.cuda import lower_task
    from tools.verify import check

    rec = Record.model_validate({
        "op_name": "toy", "name": "toy_0", "category": "graph", "c_function": "toy_0", "op_args": None,
        "input_shape": [[8], [8]], "output_shape": [[8], [1]], "input_name": ["x", "y"], "output_name": ["T_add", "T_sum"],
        "cuda_code": OURS_CUDA, "c_code": OURS_C, "ir_code": OURS_IR,
        "launches": [{"kernel": "toy_0_kernel", "grid": [1], "block": [8], "args": ["T_add", "x", "y"]},
                     {"kernel": "toy_0_kernel_1", "grid": [1], "block": [1], "args": ["T_add", "T_sum"]}]})
    seen = set()
    full = None
    for seed in range(40):
        out = as_published(rec, random.Random(seed))
        assert out["c_code"].startswith("void default_function_kernel(float* T_add, float* T_sum, float* ph, float* ph_1)")
        assert "void __launch_bounds__(8) default_function_kernel(" in out["cuda_code"]
        assert "void default_function_kernel_1(" in out["cuda_code"] and "__launch_bounds__(1)" not in out["cuda_code"]
        pragmas = out["c_code"].count("#pragma omp parallel for")
        assert pragmas in (0, 1) and (not pragmas or "#pragma omp parallel for\n  for (int32_t i = 0;" in out["c_code"])
        unused = len(out["input_shape"]) == 3
        assert unused == ("ph_2: T.Buffer(" in out["ir_code"])
        if "input_name" in out:
            assert out["input_name"] == ["ph"] * len(out["input_shape"])
        seen |= {"names" if "input_name" in out else "no names"} | ({"pragma"} if pragmas else set()) | \
            ({"unused"} if unused else set())
        if pragmas and unused:
            full = out
    assert seen == {"pragma", "unused", "names", "no names"} and full is not None
    bench = tmp_path / "ComputationGraph.json"
    bench.write_text(json.dumps([full]))
    [path], invalid = convert_records(bench, tmp_path / "tasks")
    assert invalid == []
    task = load_task(path)
    assert [(b.name, b.role) for b in task.buffers] == [("ph", "input"), ("ph_1", "input"), ("T_add", "output"),
                                                        ("T_sum", "output")]
    found = infer(task, parse_cuda(task.source(), str(task.source_path())))
    assert [(l.kernel, l.block, l.args) for l in found.launches] == [
        ("default_function_kernel", [8], ["T_add", "ph", "ph_1"]), ("default_function_kernel_1", [1], ["T_add", "T_sum"])
    ], found.explanation
    task = task.model_copy(update={"launches": found.launches})
    report = check(task, lower_task(task), open_sandbox("local"), seeds=[1], threads=[2])
    assert report.status == "correct", report.summary()
