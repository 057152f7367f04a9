"""Launch inference for published-layout records whose kernels re-read buffers.

In the published HPCTransEval files every kernel names its parameters itself: its inputs `ph`,
`ph_1`, ... and the buffers earlier kernels wrote by their operator, numbered within the
kernel (`T_a`, `T_a_1`), so a name says nothing of which buffer of the task it is. These
records are small graphs written for the tests (a C reference with a loop nest per operator,
not one per kernel, so that the reference gives no binding and the kernels' order and sizes
must).
"""

import json
from pathlib import Path


def _record(c_code: str, cuda_code: str, buffers: list[tuple[str, int]], output: str = "T_out") -> dict:
    params = ", ".join(f'{n}: T.Buffer(({size},), "float32")' for n, size in buffers)
    inputs = [size for n, size in buffers if n != output]
    out = next(size for n, size in buffers if n == output)
    return {
        "op_name": "graph_t", "c_code": c_code, "cuda_code": cuda_code,
        "ir_code": "@I.ir_module\nclass Module:\n    @T.prim_func\n"
                   f"    def main({params}):\n        T.func_attr({{\"tir.noalias\": T.bool(True)}})\n"
                   f"        {output}[0] = T.float32(0)\n",
        "op_args": [["graph_t"]], "input_shape": [[n] for n in inputs], "output_shape": [[out]],
    }


def _inferred(tmp_path: Path, record: dict, alternatives: int = 0):
    from bench.convert import convert_records
    from tools.cuda import parse_cuda
    from tools.cuda.launch_inference import infer
    from tools.spec import load_task

    published = tmp_path / "ComputationGraph.json"
    published.write_text(json.dumps([record]))
    [path], invalid = convert_records(published, tmp_path / "tasks")
    assert not invalid
    task = load_task(path)
    found = infer(task, parse_cuda(task.source(), str(task.source_path())), alternatives=alternatives)
    assert found.launches, found.explanation
    return found


# Two kernels compute one operator each into a buffer each calls `T_a`; the third subtracts them
# and calls them `T_a` and `T_a_1`, numbered in the order they were written.
NUMBERED_C = """void default_function_kernel(float* T_out, float* ph, float* ph_1) {
  float T_a[8];
  float T_b[8];
  for (int32_t i = 0; i < 8; ++i) {
    T_a[i] = (ph[i] * 2.000000e+00f);
  }
  for (int32_t i_1 = 0; i_1 < 8; ++i_1) {
    T_b[i_1] = (ph_1[i_1] * 3.000000e+00f);
  }
  for (int32_t i_2 = 0; i_2 < 8; ++i_2) {
    T_b[i_2] = (T_a[i_2] - T_b[i_2]);
  }
  for (int32_t i_3 = 0; i_3 < 8; ++i_3) {
    T_out[i_3] = (T_b[i_3] * 5.000000e-01f);
  }
}
"""
NUMBERED_CUDA = """
extern "C" __global__ void __launch_bounds__(8) default_function_kernel_2(float* __restrict__ T_a, float* __restrict__ T_a_1, float* __restrict__ T_out) {
  T_out[((int)threadIdx.x)] = ((T_a[((int)threadIdx.x)] - T_a_1[((int)threadIdx.x)]) * 5.000000e-01f);
}

extern "C" __global__ void __launch_bounds__(8) default_function_kernel(float* __restrict__ T_a, float* __restrict__ ph) {
  T_a[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] * 2.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(8) default_function_kernel_1(float* __restrict__ T_a, float* __restrict__ ph) {
  T_a[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] * 3.000000e+00f);
}
"""


def test_a_kernels_own_numbers_of_one_name_follow_the_order_the_buffers_were_written(tmp_path):
    found = _inferred(tmp_path, _record(NUMBERED_C, NUMBERED_CUDA, [("ph", 8), ("ph_1", 8), ("T_out", 8)]))
    first, second, last = found.launches
    assert first.args[1] == "ph" and second.args[1] == "ph_1", found.explanation
    # the subtraction's T_a is what the first kernel wrote, its T_a_1 what the second wrote
    assert last.args[:2] == [first.args[0], second.args[0]], found.explanation
    assert first.args[0] != second.args[0]


# x is read by the first two kernels (a scale, then a sum with it), then g and w by the last; w has
# x's size but the reference reads it after g, which no kernel has read yet when the second runs.
REREAD_C = """void default_function_kernel(float* T_out, float* ph, float* ph_1, float* ph_2) {
  float T_m[10];
  for (int32_t i = 0; i < 10; ++i) {
    T_m[i] = (ph[i] * 2.000000e+00f);
  }
  for (int32_t i_1 = 0; i_1 < 10; ++i_1) {
    T_m[i_1] = (T_m[i_1] + ph[i_1]);
  }
  for (int32_t i_2 = 0; i_2 < 10; ++i_2) {
    T_m[i_2] = (T_m[i_2] * ph_1[(i_2 >> 1)]);
  }
  for (int32_t i_3 = 0; i_3 < 10; ++i_3) {
    T_out[i_3] = (T_m[i_3] + ph_2[i_3]);
  }
}
"""
REREAD_CUDA = """
extern "C" __global__ void __launch_bounds__(10) default_function_kernel_1(float* __restrict__ T_add, float* __restrict__ T_multiply, float* __restrict__ ph) {
  T_add[((int)threadIdx.x)] = (T_multiply[((int)threadIdx.x)] + ph[((int)threadIdx.x)]);
}

extern "C" __global__ void __launch_bounds__(10) default_function_kernel(float* __restrict__ T_multiply, float* __restrict__ ph) {
  T_multiply[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] * 2.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(10) default_function_kernel_2(float* __restrict__ T_add, float* __restrict__ T_out, float* __restrict__ ph, float* __restrict__ ph_1) {
  T_out[((int)threadIdx.x)] = ((T_add[((int)threadIdx.x)] * ph[(((int)threadIdx.x) >> 1)]) + ph_1[((int)threadIdx.x)]);
}
"""


def test_a_later_kernel_reads_again_an_input_an_earlier_one_read_rather_than_one_read_out_of_turn(tmp_path):
    record = _record(REREAD_C, REREAD_CUDA, [("ph", 10), ("ph_1", 5), ("ph_2", 10), ("T_out", 10)])
    found = _inferred(tmp_path, record)
    scale, add, last = found.launches
    assert scale.args[1] == "ph", found.explanation
    assert add.args[2] == "ph", found.explanation  # x again, not w (the reference reads g before w)
    assert last.args[2:] == ["ph_1", "ph_2"], found.explanation


# The reference takes x0 and x1 and reads x1 alone; the one kernel calls x1 `ph`, its own first input.
LONE_C = """void default_function_kernel(float* T_out, float* ph, float* ph_1) {
  for (int32_t i = 0; i < 8; ++i) {
    T_out[i] = (ph_1[i] * 2.000000e+00f);
  }
}
"""
LONE_CUDA = """
extern "C" __global__ void __launch_bounds__(8) default_function_kernel(float* __restrict__ T_out, float* __restrict__ ph) {
  T_out[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] * 2.000000e+00f);
}
"""


def test_a_lone_kernels_own_ph_is_the_input_the_reference_reads(tmp_path):
    found = _inferred(tmp_path, _record(LONE_C, LONE_CUDA, [("ph", 8), ("ph_1", 8), ("T_out", 8)]))
    [launch] = found.launches
    assert launch.args == ["T_out", "ph_1"], found.explanation


# graph_15's shape: two kernels write a T_s each; the third multiplies them into its own T_s in place
# (`T_s = T_s * T_s_1`) and the last reads what it updated. The reference computes it all in one
# expression, so only the kernels say which buffer is which.
IN_PLACE_C = """void default_function_kernel(float* T_out, float* ph, float* ph_1) {
  for (int32_t i = 0; i < 6; ++i) {
    T_out[i] = (((ph[i] + 1.000000e+00f) * (ph_1[i] - 2.000000e+00f)) * 3.000000e+00f);
  }
}
"""
IN_PLACE_CUDA = """
extern "C" __global__ void __launch_bounds__(6) default_function_kernel(float* __restrict__ T_s, float* __restrict__ ph) {
  T_s[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] + 1.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(6) default_function_kernel_1(float* __restrict__ T_s, float* __restrict__ ph) {
  T_s[((int)threadIdx.x)] = (ph[((int)threadIdx.x)] - 2.000000e+00f);
}

extern "C" __global__ void __launch_bounds__(6) default_function_kernel_2(float* __restrict__ T_s, float* __restrict__ T_s_1) {
  T_s[((int)threadIdx.x)] = (T_s[((int)threadIdx.x)] * T_s_1[((int)threadIdx.x)]);
}

extern "C" __global__ void __launch_bounds__(6) default_function_kernel_3(float* __restrict__ T_out, float* __restrict__ T_s) {
  T_out[((int)threadIdx.x)] = (T_s[((int)threadIdx.x)] * 3.000000e+00f);
}
"""


def test_a_buffer_updated_in_place_is_the_one_the_next_kernel_reads(tmp_path):
    found = _inferred(tmp_path, _record(IN_PLACE_C, IN_PLACE_CUDA, [("ph", 6), ("ph_1", 6), ("T_out", 6)]))
    first, second, update, last = found.launches
    assert sorted(update.args) == sorted([first.args[0], second.args[0]]), found.explanation
    assert last.args[1] == update.args[0], found.explanation  # what the update wrote, not the other product
