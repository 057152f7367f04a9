"""tools.cuda.launch_inference: launches read from the kernels of tasks that give none.

The kernels below are TVM's own output (from bench/data) or the usual hand-written forms; the
modules are built by hand (names and parameters, as the libclang front end reports them) so that
the unit tests stay fast; the end-to-end test parses for real and runs `agent eval`.
"""

import io
import json
import math
from pathlib import Path

import pytest

from tools.cuda import CudaModule
from tools.cuda.frontend import KernelInfo, Param, SharedVar
from tools.cuda.launch_inference import infer
from tools.spec import parse_task

DATA = Path(__file__).resolve().parents[1] / "bench" / "data"


def _task(source: str, buffers: list[tuple[str, list[int], str]], scalars=()) -> object:
    return parse_task({
        "name": "t", "cuda_code": source,
        "buffers": [{"name": n, "dtype": "float32", "shape": s, "role": r} for n, s, r in buffers],
        "scalars": [{"name": n, "dtype": "int32", "value": v} for n, v in scalars],
        "reference": {"kind": "python", "function": "m:f"},
    })


def _module(*kernels: tuple[str, list[str]], shared=()) -> CudaModule:
    infos = [KernelInfo(name=name, params=[Param(name=p.split()[-1], type=" ".join(p.split()[:-1])) for p in params],
                        file="k.cu", line=1) for name, params in kernels]
    return CudaModule(filename="k.cu", kernels=infos, shared=list(shared))


RELU = """
extern "C" __global__ void __launch_bounds__(1024) relu_kernel(float* __restrict__ compute_ptr, float* __restrict__ x_ptr) {
  if (((((int)blockIdx.x) * 32) + (((int)threadIdx.x) >> 5)) < 75) {
    int cse_v1 = ((((int)blockIdx.x) * 1024) + ((int)threadIdx.x));
    compute_ptr[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = max(x_ptr[cse_v1], 0x0p+0f/*0.000000e+00*/);
  }
}
"""


def test_grid_solved_from_tvm_guard_and_block_from_launch_bounds():
    task = _task(RELU, [("x", [120, 20], "input"), ("compute", [120, 20], "output")])
    found = infer(task, _module(("relu_kernel", ["float * compute_ptr", "float * x_ptr"])))
    [launch] = found.launches
    # 75 warps of 32 threads, 32 warps a block: 3 blocks (the last one partly idle)
    assert (launch.grid, launch.block, launch.args) == ([3], [1024], ["compute", "x"])
    assert found.explanation.startswith("inferred: relu_kernel<<<3, 1024>>>(compute, x)")
    assert "__launch_bounds__(1024)" in found.explanation and "guard" in found.explanation
    assert found.scratch == []


# TVM's cross-thread reduction (bench/data reduction sum_1): 32 threads as (2, 16), threadIdx.y reduces.
SUM_2D = """
extern "C" __global__ void __launch_bounds__(32) sum_kernel(float* __restrict__ x_ptr, float* __restrict__ x_red_ptr) {
  alignas(64) float x_red_rf_local_ptr[1];
  __shared__ alignas(64) float red_buf0_ptr[32];
  x_red_rf_local_ptr[0] = 0x0p+0f/*0.000000e+00*/;
  for (int ax1_fused_0 = 0; ax1_fused_0 < 7; ++ax1_fused_0) {
    if (((ax1_fused_0 * 8) + (((int)threadIdx.y) >> 1)) < 53) {
      x_red_rf_local_ptr[0] = (x_red_rf_local_ptr[0] + x_ptr[((((ax1_fused_0 * 544) + (((int)threadIdx.y) * 34)) + (((int)blockIdx.x) * 2)) + ((int)threadIdx.x))]);
    }
  }
  __syncthreads();
  ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = x_red_rf_local_ptr[0];
  __syncthreads();
  if (((int)threadIdx.y) < 8) {
    ((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] = (((volatile float*)red_buf0_ptr)[((((int)threadIdx.x) * 16) + ((int)threadIdx.y))] + ((volatile float*)red_buf0_ptr)[(((((int)threadIdx.x) * 16) + ((int)threadIdx.y)) + 8)]);
  }
  __syncthreads();
  if (((int)threadIdx.y) == 0) {
    x_red_ptr[((((int)blockIdx.x) * 2) + ((int)threadIdx.x))] = ((volatile float*)red_buf0_ptr)[(((int)threadIdx.x) * 16)];
  }
}
"""


def test_two_dimensional_block_split_and_grid_from_output_extent():
    task = _task(SUM_2D, [("x", [106, 34], "input"), ("x_red", [34], "output")])
    found = infer(task, _module(("sum_kernel", ["float * x_ptr", "float * x_red_ptr"])))
    [launch] = found.launches
    # (1, 32) would leave every odd output unwritten, (4, 8) runs past the shared array of 32
    assert (launch.grid, launch.block) == ([17], [2, 16])
    assert "split as [2, 16]" in found.explanation and "extent of x_red (34 elements" in found.explanation


# Hand-written kernels, defined consumer first: the order must come from the data flow; `tmp` is no
# buffer of the task, so it becomes a scratch buffer sized by what the producer writes.
TWO_KERNELS = """
__global__ void finish(const float* tmp, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = tmp[i] * 2.0f;
}
__global__ void start(const float* x, float* tmp, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) tmp[i] = x[i] + 1.0f;
}
"""


def test_kernels_ordered_by_data_flow_with_an_inferred_scratch_buffer():
    task = _task(TWO_KERNELS, [("x", [1000], "input"), ("y", [1000], "output")], scalars=[("n", 1000)])
    module = _module(("finish", ["const float * tmp", "float * y", "int n"]), ("start", ["const float * x", "float * tmp", "int n"]))
    found = infer(task, module)
    assert [(l.kernel, l.grid, l.block, l.args) for l in found.launches] == [
        ("start", [4], [256], ["x", "tmp", "n"]), ("finish", [4], [256], ["tmp", "y", "n"])]
    [tmp] = found.scratch
    assert (tmp.name, tmp.dtype, tmp.shape, tmp.role) == ("tmp", "float32", [1000], "scratch")
    assert "finish reads tmp from start" in found.explanation and "blockDim" in found.explanation


MATMUL = """
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float acc = 0;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
  }
}
__global__ void block_sum(const float* x, float* out, int n) {
  __shared__ float s[128];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  s[t] = x[min(i, n - 1)];
  __syncthreads();
  if (t == 0) out[blockIdx.x] = s[0];
}
"""


def test_hand_written_kernels_two_dimensional_guard_and_shared_array_block():
    task = _task(MATMUL, [("A", [100, 50], "input"), ("B", [50, 70], "input"), ("C", [100, 70], "output"),
                          ("x", [1000], "input"), ("out", [8], "output")], scalars=[("M", 100), ("N", 70), ("K", 50), ("n", 1000)])
    module = _module(("mm", ["const float * A", "const float * B", "float * C", "int M", "int N", "int K"]),
                     ("block_sum", ["const float * x", "float * out", "int n"]))
    found = infer(task, module)
    mm, block_sum = found.launches
    # a 2-D kernel that reads blockDim gets (16, 16); the guard `row < M && col < N` (through locals) sizes the grid
    assert (mm.grid, mm.block) == ([5, 7], [16, 16])
    assert "grid.x = 5 from the guard `row < M && col < N`" in found.explanation
    # blockDim is free, but the shared array of 128 (one element per thread) rules out the default 256
    assert (block_sum.grid, block_sum.block) == ([8], [128])


def test_refusals_say_why():
    task = _task(RELU, [("x", [2400], "input"), ("compute", [2400], "output")])
    odd = infer(task, _module(("relu_kernel", ["float * compute_ptr", "int zz"])))
    assert odd.launches is None and "parameters ['zz'] match no buffer or scalar" in odd.explanation
    missing = infer(task, _module(("relu_kernel", ["float * compute_ptr", "float * x_ptr"]), ("gone", ["float * x_ptr"])))
    assert missing.launches is None and "body of kernel gone is not in the source" in missing.explanation
    dynamic = infer(task, _module(("relu_kernel", ["float * compute_ptr", "float * x_ptr"]),
                                  shared=[SharedVar(name="buf", type="float []", kernel="relu_kernel", extern=True, file="k.cu", line=1)]))
    assert dynamic.launches is None and "dynamic shared memory (buf)" in dynamic.explanation
    # every block writes tmp[blockIdx.x], tmp is no task buffer and nothing else bounds the grid
    unbounded = "__global__ void k(float* tmp) { tmp[blockIdx.x] = 1.0f; }"
    found = infer(_task(unbounded, [("x", [4], "input")]), _module(("k", ["float * tmp"])))
    assert found.launches is None and "nothing bounds blockIdx.x" in found.explanation
    stray = infer(_task(RELU, [("x", [2400], "input"), ("compute", [2400], "output")]),
                  _module(("relu_kernel", ["float * compute_ptr", "float * input_ptr"])))
    assert stray.launches is None and "['input'] match no buffer of the task, and no kernel writes them" in stray.explanation


def test_kernels_that_feed_each_other_have_no_order():
    cyclic = """
    __global__ void a(const float* p, float* q) { q[threadIdx.x] = p[threadIdx.x]; }
    __global__ void b(const float* q, float* p) { p[threadIdx.x] = q[threadIdx.x]; }
    """
    task = _task(cyclic, [("p", [32], "output"), ("q", [32], "output")])
    found = infer(task, _module(("a", ["const float * p", "float * q"]), ("b", ["const float * q", "float * p"])))
    assert found.launches is None and "read what each other write" in found.explanation


def _smallest_multi_kernel_record():
    from bench.format import load_records

    records = [r for f in ("graph.json", "block.json") for r in load_records(DATA / f) if len(r.launches) > 1 and r.scratch]
    return min(records, key=lambda r: sum(math.prod(s) for s in [*r.input_shape, *r.output_shape]))


@pytest.mark.skipif(not (DATA / "graph.json").is_file(), reason="bench/data not generated")
def test_agent_eval_infers_a_multi_kernel_graph_without_launches_or_scratch(tmp_path):
    """A shipped multi-kernel record stripped like a published HPCTransEval record (no launches, no
    scratch) goes through `agent eval` and comes out correct, with its launches inferred."""
    from rich.console import Console

    from agent.commands.evaluate import run
    from agent.configuration import load_settings
    from bench.format import save_records

    record = _smallest_multi_kernel_record()
    recorded = [(l.kernel, l.grid, l.block) for l in record.launches]
    subset = tmp_path / "published.json"
    save_records([record.model_copy(update={"launches": [], "scratch": []})], subset)
    cfg = load_settings(llm="compiler", sandbox="local", jobs=1)
    cfg = cfg.model_copy(update={"budgets": cfg.budgets.model_copy(update={"max_iters": 1})})
    status = run(subset, cfg, out=tmp_path / "report", limit=1, console=Console(file=io.StringIO(), width=200))
    [row] = json.loads((tmp_path / "report" / "report.json").read_text())["tasks"]
    assert row["launches_inferred"] is True
    assert row["status"] == "correct" and status == 0
    plan = _plan_of(tmp_path / "report")
    assert plan.startswith("inferred: ") and all(f"{k}<<<" in plan for k, _, _ in recorded)


def _plan_of(report_dir: Path) -> str:
    """The plan's launches line, from the run's trace."""
    for trace in report_dir.rglob("*.jsonl"):
        for line in trace.read_text().splitlines():
            event = json.loads(line)
            launches = event.get("data", {}).get("result", {}).get("launches") if isinstance(event.get("data"), dict) else None
            if isinstance(launches, str):
                return launches
    return ""


# TVM's CUDA of a whole graph: the kernels defined out of launch order, each naming its own
# parameters (`ph` is any placeholder, `T_sq` two different intermediates), one kernel in place.
GRAPH = """
extern "C" __global__ void __launch_bounds__(64) default_function_kernel_2(float* __restrict__ T_sq, float* __restrict__ T_sq_1, float* __restrict__ out) {
  out[((int)blockIdx.x) * 64 + ((int)threadIdx.x)] = T_sq[((int)blockIdx.x) * 64 + ((int)threadIdx.x)] + T_sq_1[(((int)blockIdx.x) * 64 + ((int)threadIdx.x)) % 32];
}
extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ T_sq, float* __restrict__ ph) {
  T_sq[((int)blockIdx.x) * 64 + ((int)threadIdx.x)] = ph[((int)blockIdx.x) * 64 + ((int)threadIdx.x)] * 2.0f;
}
extern "C" __global__ void __launch_bounds__(32) default_function_kernel_1(float* __restrict__ T_sq, float* __restrict__ ph) {
  T_sq[((int)threadIdx.x)] = 0.0f;
  T_sq[((int)threadIdx.x)] = T_sq[((int)threadIdx.x)] + ph[((int)threadIdx.x)];
}
"""


def test_tvm_numbered_kernels_bind_each_parameter_along_the_launch_sequence():
    task = _task(GRAPH, [("ph", [256], "input"), ("ph_1", [32], "input"), ("T_add", [256], "output")])
    module = _module(("default_function_kernel_2", ["float * T_sq", "float * T_sq_1", "float * out"]),
                     ("default_function_kernel", ["float * T_sq", "float * ph"]),
                     ("default_function_kernel_1", ["float * T_sq", "float * ph"]))
    found = infer(task, module)
    assert found.launches is not None, found.explanation
    # order from TVM's numbering; kernel_1 starts a second T_sq (it stores before it reads) and
    # reads the placeholder of 32 elements; kernel_2's T_sq_1 is that second buffer (its extent)
    assert [(l.kernel, l.grid, l.block, l.args) for l in found.launches] == [
        ("default_function_kernel", [4], [64], ["T_sq", "ph"]),
        ("default_function_kernel_1", [1], [32], ["T_sq_v2", "ph_1"]),
        ("default_function_kernel_2", [4], [64], ["T_sq", "T_sq_v2", "T_add"])]
    assert {(b.name, b.shape[0]) for b in found.scratch} == {("T_sq", 256), ("T_sq_v2", 32)}
    assert "out (written by default_function_kernel_2) is output T_add" in found.explanation
    assert "ph is ph_1" in found.explanation


def test_a_kernel_that_reads_no_thread_index_runs_one_thread():
    serial = """
extern "C" __global__ void default_function_kernel(float* __restrict__ data, float* __restrict__ data_red) {
  data_red[0] = 1.0f;
  for (int k = 0; k < 60; ++k) { data_red[0] = data_red[0] * data[k]; }
}
"""
    task = _task(serial, [("data", [60], "input"), ("data_red", [1], "output")])
    [launch] = infer(task, _module(("default_function_kernel", ["float * data", "float * data_red"]))).launches
    assert (launch.grid, launch.block) == ([1], [1])


def test_an_atomic_through_tvm_parentheses_is_a_store():
    from tools.cuda.launch_inference import read_kernel

    source = ('__global__ void k(float* out, float* x) { atomicAdd((&(out[threadIdx.x % 4])), x[threadIdx.x]); }')
    body = read_kernel(source, "k")
    assert {(a.base, a.write) for a in body.accesses if a.base == "out"} == {("out", True), ("out", False)}


def test_an_input_that_alone_bounds_the_launch_is_the_first_not_taken_in_the_task_order():
    """`out[i] = ph[i]` reads any `ph` whole, whatever its size: the size decides nothing, so the
    kernel's `ph` is the task's first input of the family not taken yet (TVM reads main's
    placeholders in the order it uses them), not the largest."""
    src = """
extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ T_cast, float* __restrict__ ph) {
  T_cast[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] = ph[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))];
}
extern "C" __global__ void __launch_bounds__(64) default_function_kernel_1(float* __restrict__ T_add, float* __restrict__ T_cast, float* __restrict__ ph) {
  T_add[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] = T_cast[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] + ph[((((int)threadIdx.x) & 7))];
}
"""
    task = _task(src, [("ph", [128], "input"), ("ph_1", [8], "input"), ("ph_2", [1024], "input"), ("T_add", [128], "output")])
    found = infer(task, _module(("default_function_kernel", ["float * T_cast", "float * ph"]),
                                ("default_function_kernel_1", ["float * T_add", "float * T_cast", "float * ph"])))
    assert [(l.kernel, l.grid, l.args) for l in found.launches] == [
        ("default_function_kernel", [2], ["T_cast", "ph"]),
        ("default_function_kernel_1", [2], ["T_add", "T_cast", "ph_1"])]
    assert "the first not taken yet" in found.explanation


# TVM's CUDA made for a padded extent (published topology_expansion records): no guard, so the
# last block stores past the 10 elements of the buffer, which a GPU's allocation absorbs.
UNGUARDED = """
extern "C" __global__ void __launch_bounds__(4) default_function_kernel(float* __restrict__ compute, float* __restrict__ ph_0) {
  compute[((((int)blockIdx.x) * 4) + ((int)threadIdx.x))] = asinhf(ph_0[((((int)blockIdx.x) * 4) + ((int)threadIdx.x))]);
}
"""


def test_stores_past_a_buffer_with_no_guard_pad_it_instead_of_failing_the_launch():
    task = _task(UNGUARDED, [("ph_0", [2, 5], "input"), ("compute", [2, 5], "output")])
    found = infer(task, _module(("default_function_kernel", ["float * compute", "float * ph_0"])))
    [launch] = found.launches
    assert (launch.grid, launch.block) == ([3], [4])
    assert found.padding == {"compute": 2}  # 12 stores into 10 elements
    assert "padded: compute by 2 element(s)" in found.explanation


def _evaluate_record(tmp_path, cuda_code: str) -> tuple[dict, int]:
    """`agent eval` (compiler, one attempt) of a published-format record: an asinh over a (2, 5)
    buffer with `cuda_code` as its CUDA; its report row and the exit status."""
    from rich.console import Console

    from agent.commands.evaluate import run
    from agent.configuration import load_settings

    record = {
        "op_name": "asinh",
        "c_code": "void default_function_kernel(float* compute, float* ph_0) {\n"
                  "  for (int32_t i = 0; i < 10; ++i) {\n    compute[i] = asinhf(ph_0[i]);\n  }\n}\n",
        "cuda_code": cuda_code,
        "ir_code": "@I.ir_module\nclass Module:\n    @T.prim_func\n"
                   "    def main(ph_0: T.Buffer((2, 5), \"float32\"), compute: T.Buffer((2, 5), \"float32\")):\n"
                   "        T.func_attr({\"tir.noalias\": T.bool(True)})\n",
        "op_args": [["asinh"]], "input_shape": [[2, 5]], "output_shape": [[2, 5]],
    }
    published = tmp_path / "IndependentOperator.json"
    published.write_text(json.dumps([record]))
    cfg = load_settings(llm="compiler", sandbox="local", jobs=1)
    cfg = cfg.model_copy(update={"budgets": cfg.budgets.model_copy(update={"max_iters": 1})})
    status = run(published, cfg, out=tmp_path / "report", console=Console(file=io.StringIO(), width=200))
    [row] = json.loads((tmp_path / "report" / "report.json").read_text())["tasks"]
    return row, status


def test_agent_eval_allocates_the_padding_a_published_kernel_stores_to(tmp_path):
    """A published-format record whose CUDA stores past its output (as it does on a GPU, harmlessly)
    comes out correct: the harness allocates the padding and compares the buffer's own elements."""
    row, status = _evaluate_record(tmp_path, UNGUARDED)
    assert row["status"] == "correct" and status == 0, row
    assert "padded: compute by 2 element(s)" in _plan_of(tmp_path / "report")


def test_a_guard_that_leaves_part_of_an_output_unwritten_is_said():
    """TVM's CUDA made for a smaller shape than the task's: the plan says how much its guard lets it write."""
    source = UNGUARDED.replace("  compute[", "  if (((int)blockIdx.x) < 2) compute[")
    task = _task(source, [("ph_0", [2, 5], "input"), ("compute", [2, 5], "output")])
    found = infer(task, _module(("default_function_kernel", ["float * compute", "float * ph_0"])))
    assert found.launches is not None
    assert "at this launch its stores reach 8 of the 10 elements of compute" in found.explanation
    assert found.short == {"compute": (8, 10)}


def test_agent_eval_says_when_the_record_s_cuda_cannot_write_what_its_reference_computes(tmp_path):
    """A published record whose CUDA's guard stops its stores short of its C reference's output (as
    topology_expansion_1's does): incorrect, and the reason names that cause before the mismatch."""
    row, _ = _evaluate_record(tmp_path, UNGUARDED.replace("  compute[", "  if (((int)blockIdx.x) < 2) compute["))
    assert row["status"] == "incorrect", row
    assert row["detail"].startswith("the task's CUDA stores 8 of the 10 elements of compute"), row


# A branch, as in a residual block: kernel_2 reads what kernel 0 wrote, not the latest buffer of
# that name (kernel_1's). Every kernel names its parameters `conv`/`conv_1`, as TVM does; only the
# C reference's stages, one per kernel, say which value each is.
BRANCH = """
extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ conv, float* __restrict__ ph) {
  conv[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] * 2.000000e+00f);
}
extern "C" __global__ void __launch_bounds__(64) default_function_kernel_1(float* __restrict__ conv, float* __restrict__ conv_1) {
  conv[((int)threadIdx.x)] = (conv_1[((int)threadIdx.x)] + 1.000000e+00f);
}
extern "C" __global__ void __launch_bounds__(64) default_function_kernel_2(float* __restrict__ conv, float* __restrict__ conv_1) {
  conv[((int)threadIdx.x)] = (conv_1[((int)threadIdx.x)] * 3.000000e+00f);
}
extern "C" __global__ void __launch_bounds__(64) default_function_kernel_3(float* __restrict__ T_out, float* __restrict__ conv, float* __restrict__ conv_1) {
  T_out[((int)threadIdx.x)] = (conv[((int)threadIdx.x)] - conv_1[((int)threadIdx.x)]);
}
"""
BRANCH_C = """
#include <stdint.h>
void default_function_kernel(float* T_out, float* x) {
  float a[64];
  float b[64];
  float c[64];
  for (int32_t i = 0; i < 64; ++i) {
    a[i] = (x[i] * 2.000000e+00f);
  }
  for (int32_t i = 0; i < 64; ++i) {
    b[i] = (a[i] + 1.000000e+00f);
  }
  for (int32_t i = 0; i < 64; ++i) {
    c[i] = (a[i] * 3.000000e+00f);
  }
  for (int32_t i = 0; i < 64; ++i) {
    T_out[i] = (c[i] - b[i]);
  }
}
"""


def _branch_task(tmp_path, c_source: str, args=("T_out", "ph"), scalars=()):
    (tmp_path / "ref.c").write_text(c_source)
    return parse_task({
        "name": "branch", "cuda_code": BRANCH,
        "buffers": [{"name": "ph", "dtype": "float32", "shape": [64], "role": "input"},
                    {"name": "T_out", "dtype": "float32", "shape": [64], "role": "output"}],
        "scalars": [{"name": n, "dtype": "int32", "value": v} for n, v in scalars],
        "reference": {"kind": "c", "path": "ref.c", "function": "default_function_kernel", "args": list(args)},
    }, base_dir=tmp_path)


BRANCH_MODULE = _module(("default_function_kernel", ["float * conv", "float * ph"]),
                        ("default_function_kernel_1", ["float * conv", "float * conv_1"]),
                        ("default_function_kernel_2", ["float * conv", "float * conv_1"]),
                        ("default_function_kernel_3", ["float * T_out", "float * conv", "float * conv_1"]))


def test_the_c_reference_stages_bind_parameters_that_names_and_sizes_leave_open(tmp_path):
    found = infer(_branch_task(tmp_path, BRANCH_C), BRANCH_MODULE)
    assert found.launches is not None, found.explanation
    # kernel_2 reads the reference's `a`, which its first stage wrote, not kernel_1's `b`; kernel_3
    # reads `c` and `b` in the order the reference's last stage first loads them
    assert [l.args for l in found.launches] == [["a", "ph"], ["b", "a"], ["c", "a"], ["T_out", "c", "b"]]
    assert "buffers of its stage of the C reference (4 stages" in found.explanation


def test_a_reference_with_other_stages_leaves_the_bindings_to_the_sequence(tmp_path):
    # one fused loop for the four kernels: the stages do not align, and the names decide as before
    fused = BRANCH_C.replace("  }\n  for (int32_t i = 0; i < 64; ++i) {\n", "")
    found = infer(_branch_task(tmp_path, fused), BRANCH_MODULE)
    assert found.launches is not None, found.explanation
    assert "stage of the C reference" not in found.explanation


def test_a_branch_bound_by_the_reference_stages_compiles_correct(tmp_path):
    from agent.toolbox import infer_launches
    from sandboxes import LocalSandbox
    from tools.cuda import lower_task, parse_cuda
    from tools.verify import check

    task = _branch_task(tmp_path, BRANCH_C)
    launches, how, buffers, _ = infer_launches(task, parse_cuda(task.source(), "branch.cu"))
    assert launches, how
    task = task.model_copy(update={"launches": launches, "buffers": buffers})
    with LocalSandbox(root=tmp_path) as sandbox:
        report = check(task, lower_task(task), sandbox, threads=[1])
    assert report.status == "correct", report.summary()


def test_a_scalar_parameter_of_the_reference_keeps_the_buffers_in_their_places(tmp_path):
    # reference.args names every parameter of the C function in order, scalars too
    with_scalar = BRANCH_C.replace("(float* T_out, float* x)", "(int32_t n, float* T_out, float* x)")
    task = _branch_task(tmp_path, with_scalar, args=("n", "T_out", "ph"), scalars=[("n", 64)])
    found = infer(task, BRANCH_MODULE)
    assert [l.args for l in found.launches] == [["a", "ph"], ["b", "a"], ["c", "a"], ["T_out", "c", "b"]], found.explanation


# Inputs of one size that TVM's kernels name themselves (`ph` in one kernel may be the task's
# `ph_2`): the C reference says which is which by the order it uses them.
SAME_SIZE_C = """
#include <stdint.h>
void default_function_kernel(float* T_out, float* ph, float* ph_1, float* ph_2) {
  for (int32_t i = 0; i < 64; ++i) {
    T_out[i] = (((ph_2[i] * 2.000000e+00f) - ph[i]) * ph_1[i]);
  }
}
"""
SAME_SIZE_CUDA = """
extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ T_a, float* __restrict__ ph) {
  T_a[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] * 2.000000e+00f);
}
extern "C" __global__ void __launch_bounds__(64) default_function_kernel_1(float* __restrict__ T_a, float* __restrict__ T_out, float* __restrict__ ph, float* __restrict__ ph_1) {
  T_out[((int)threadIdx.x)] = ((T_a[((int)threadIdx.x)] - ph_1[((int)threadIdx.x)]) * ph[((int)threadIdx.x)]);
}
"""
LONE_C = """
#include <stdint.h>
void default_function_kernel(float* T_out, float* ph, float* ph_1) {
  for (int32_t i = 0; i < 64; ++i) {
    T_out[i] = ((ph[i] * 2.000000e+00f) - ph_1[i]);
  }
}
"""
LONE_CUDA = """
extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ T_out, float* __restrict__ ph, float* __restrict__ ph_1) {
  T_out[((int)threadIdx.x)] = ((ph_1[((int)threadIdx.x)] * 2.000000e+00f) - ph[((int)threadIdx.x)]);
}
"""


def _same_size_task(tmp_path, c_source: str, cuda: str, inputs: list[str]):
    (tmp_path / "ref.c").write_text(c_source)
    return parse_task({
        "name": "same", "cuda_code": cuda,
        "buffers": [*({"name": n, "dtype": "float32", "shape": [64], "role": "input"} for n in inputs),
                    {"name": "T_out", "dtype": "float32", "shape": [64], "role": "output"}],
        "reference": {"kind": "c", "path": "ref.c", "function": "default_function_kernel", "args": ["T_out", *inputs]},
    }, base_dir=tmp_path)


def _correct(tmp_path, task, launches, buffers) -> str:
    from sandboxes import LocalSandbox
    from tools.cuda import lower_task
    from tools.verify import check

    task = task.model_copy(update={"launches": launches, "buffers": buffers})
    with LocalSandbox(root=tmp_path) as sandbox:
        return check(task, lower_task(task), sandbox, threads=[1]).summary()


def test_inputs_of_one_size_bind_in_the_order_the_kernels_and_the_reference_use_them(tmp_path):
    from agent.toolbox import infer_launches
    from tools.cuda import parse_cuda

    task = _same_size_task(tmp_path, SAME_SIZE_C, SAME_SIZE_CUDA, ["ph", "ph_1", "ph_2"])
    launches, how, buffers, _ = infer_launches(task, parse_cuda(task.source(), "same.cu"))
    assert launches, how
    # the first kernel's `ph` is the input the reference reads first (ph_2), not the first listed;
    # the second kernel reads its ph_1 before its ph, as the reference reads ph before ph_1
    assert [l.args for l in launches] == [["T_a", "ph_2"], ["T_a", "T_out", "ph_1", "ph"]]
    assert "paired in the order the kernel and the C reference use them" in how
    assert _correct(tmp_path, task, launches, buffers).startswith("correct")


def test_a_lone_kernel_s_placeholders_bind_in_the_order_of_use_not_by_their_numbers(tmp_path):
    from agent.toolbox import infer_launches
    from tools.cuda import parse_cuda

    task = _same_size_task(tmp_path, LONE_C, LONE_CUDA, ["ph", "ph_1"])
    launches, how, buffers, _ = infer_launches(task, parse_cuda(task.source(), "same.cu"))
    assert [l.args for l in launches] == [["T_out", "ph_1", "ph"]], how
    assert _correct(tmp_path, task, launches, buffers).startswith("correct")


INLINED_C = """
#include <stdint.h>
void default_function_kernel(float* T_out, float* ph, float* ph_1) {
  float scale[64];
  for (int32_t i = 0; i < 64; ++i) {
    scale[i] = (ph[i] * 5.000000e-01f);
  }
  for (int32_t i = 0; i < 64; ++i) {
    T_out[i] = fmaxf(ph_1[i], scale[i]);
  }
}
"""
INLINED_CUDA = """
extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ T_out, float* __restrict__ ph, float* __restrict__ ph_1) {
  T_out[((int)threadIdx.x)] = max(ph[((int)threadIdx.x)], (ph_1[((int)threadIdx.x)] * 5.000000e-01f));
}
"""


def test_a_kernel_that_inlines_a_producer_pairs_its_inputs_in_the_order_of_the_inlined_expression(tmp_path):
    """The reference computes `scale` from ph in a loop of its own, then max(ph_1, scale); the kernel
    inlines it: max(its ph, its ph_1 * 0.5). Its ph is the task's ph_1: the order of use that pairs
    them is the reference's with `scale` replaced by its expression, not the order of its loops."""
    from agent.toolbox import infer_launches
    from tools.cuda import parse_cuda

    task = _same_size_task(tmp_path, INLINED_C, INLINED_CUDA, ["ph", "ph_1"])
    launches, how, buffers, _ = infer_launches(task, parse_cuda(task.source(), "same.cu"))
    assert [l.args for l in launches] == [["T_out", "ph_1", "ph"]], how
    assert _correct(tmp_path, task, launches, buffers).startswith("correct")
