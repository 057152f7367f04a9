"""tools/optimize/matrix_products.py: a launch whose kernel is a polynomial of its float inputs
(a sum of products, index-only control flow) and whose buffers' shapes fit a matrix product is
replaced by a register-tiled product; each product the shapes allow is an alternative, and the
first that matches the reference is kept. Kernels that are not polynomials (comparisons, division,
math calls, conversions to int, atomics) are refused before anything is built. Real libclang,
g++ and sandbox; no timing (speed: scripts/bench_speed.py --hte --applies matrix_products)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.cuda import frontend as fe
from tools.cuda import lower_task
from tools.optimize.analysis.launch_replacement import stored_params
from tools.optimize.base import Context
from tools.optimize.passes.matrix_products import MATRIX_PRODUCTS, is_polynomial, matrix_products, proposals
from tools.optimize.search import Budget, _first_correct, search
from tools.spec import Buffer, load_task
from tools.verify import check

SEEDS = [4321, 4322]
NAIVE = r"""
__global__ void product(const float* A, const float* B, float* C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
  }
}
"""
# shared-memory tiles with zero-filled tails, one barrier per phase
TILED = r"""
#define T 8
__global__ void product(const float* A, const float* B, float* C, int m, int n, int kk) {
  __shared__ float a[T][T];
  __shared__ float b[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (kk + T - 1) / T; ++t) {
    a[threadIdx.y][threadIdx.x] = (row < m && t * T + threadIdx.x < kk) ? A[row * kk + t * T + threadIdx.x] : 0.0f;
    b[threadIdx.y][threadIdx.x] = (col < n && t * T + threadIdx.y < kk) ? B[(t * T + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += a[threadIdx.y][k] * b[k][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) C[row * n + col] = acc;
}
"""
# a dense layer: weights stored [n][k], a bias per output column, fused multiply-adds
DENSE = r"""
__global__ void product(const float* x, const float* w, const float* bias, float* y, int m, int n, int kk) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m * n) return;
  int row = i / n, col = i % n;
  float acc = bias[col];
  for (int k = 0; k < kk; ++k) acc = fmaf(x[row * kk + k], w[col * kk + k], acc);
  y[i] = acc;
}
"""
# two launches: a product into scratch, accumulated in place (TVM's dense in a graph), then a ReLU
GRAPH = r"""
__global__ void dense(float* t, const float* x, const float* w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 30 * 20) {
    t[i] = 0.0f;
    for (int k = 0; k < 12; ++k) t[i] = t[i] + x[(i / 20) * 12 + k] * w[(i % 20) * 12 + k];
  }
}
__global__ void relu(float* y, const float* t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 30 * 20) y[i] = fmaxf(t[i], 0.0f);
}
"""
REF = """
import numpy as np

def square(inputs, scalars):
    n = int(scalars["n"])
    a, b = (inputs[k].reshape(n, n).astype(np.float64) for k in ("A", "B"))
    return {"C": (a @ b).astype(inputs["A"].dtype).ravel()}

def square_bt(inputs, scalars):
    n = int(scalars["n"])
    a, b = (inputs[k].reshape(n, n).astype(np.float64) for k in ("A", "B"))
    return {"C": (a @ b.T).astype(np.float32).ravel()}

def tiled(inputs, scalars):
    return {"C": (inputs["A"].astype(np.float64) @ inputs["B"].astype(np.float64)).astype(np.float32)}

def dense(inputs, scalars):
    x, w, b = (inputs[k].astype(np.float64) for k in ("x", "w", "bias"))
    return {"y": (x @ w.T + b).astype(np.float32)}

def dense_relu(inputs, scalars):
    x, w = inputs["x"].astype(np.float64), inputs["w"].astype(np.float64)
    return {"y": np.maximum(x @ w.T, 0.0).astype(np.float32)}

def mul_add(inputs, scalars):
    a, b = inputs["A"].astype(np.float64), inputs["B"].astype(np.float64)
    return {"C": (a * b + a).astype(np.float32)}
"""


def _write(tmp_path: Path, cuda: str, raw: dict):
    (tmp_path / "product.cu").write_text(cuda)
    (tmp_path / "product_ref.py").write_text(REF)
    raw = {"name": "product", "cuda": "product.cu", "tolerance": {"rtol": 1e-4, "atol": 1e-4}, **raw}
    (tmp_path / "product.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "product.json")


def _square(tmp_path: Path, cuda: str = NAIVE, ref: str = "square", n: int = 24, dtype: str = "float32"):
    flat = [n * n]
    return _write(tmp_path, cuda, {
        "buffers": [{"name": "A", "dtype": dtype, "shape": flat, "role": "input"},
                    {"name": "B", "dtype": dtype, "shape": flat, "role": "input"},
                    {"name": "C", "dtype": dtype, "shape": flat, "role": "output"}],
        "scalars": [{"name": "n", "dtype": "int32", "value": n}],
        "launches": [{"kernel": "product", "grid": [2, 2], "block": [16, 16], "args": ["A", "B", "C", "n"]}],
        "reference": {"kind": "python", "function": f"product_ref:{ref}"}})


def _tiled(tmp_path: Path, m: int = 40, n: int = 36, k: int = 20):
    return _write(tmp_path, TILED, {
        "buffers": [{"name": "A", "dtype": "float32", "shape": [m, k], "role": "input"},
                    {"name": "B", "dtype": "float32", "shape": [k, n], "role": "input"},
                    {"name": "C", "dtype": "float32", "shape": [m, n], "role": "output"}],
        "scalars": [{"name": "m", "dtype": "int32", "value": m}, {"name": "n", "dtype": "int32", "value": n},
                    {"name": "kk", "dtype": "int32", "value": k}],
        "launches": [{"kernel": "product", "grid": [(n + 7) // 8, (m + 7) // 8], "block": [8, 8],
                      "args": ["A", "B", "C", "m", "n", "kk"]}],
        "reference": {"kind": "python", "function": "product_ref:tiled"}})


def _dense(tmp_path: Path, m: int = 37, n: int = 70, k: int = 19):
    return _write(tmp_path, DENSE, {
        "buffers": [{"name": "x", "dtype": "float32", "shape": [m, k], "role": "input"},
                    {"name": "w", "dtype": "float32", "shape": [n, k], "role": "input"},
                    {"name": "bias", "dtype": "float32", "shape": [n], "role": "input"},
                    {"name": "y", "dtype": "float32", "shape": [m, n], "role": "output"}],
        "scalars": [{"name": "m", "dtype": "int32", "value": m}, {"name": "n", "dtype": "int32", "value": n},
                    {"name": "kk", "dtype": "int32", "value": k}],
        "launches": [{"kernel": "product", "grid": [(m * n + 127) // 128], "block": [128],
                      "args": ["x", "w", "bias", "y", "m", "n", "kk"]}],
        "reference": {"kind": "python", "function": "product_ref:dense"}})


def _graph(tmp_path: Path, scratch_role: str = "scratch"):
    return _write(tmp_path, GRAPH, {
        "buffers": [{"name": "x", "dtype": "float32", "shape": [30, 12], "role": "input"},
                    {"name": "w", "dtype": "float32", "shape": [20, 12], "role": "input"},
                    {"name": "t", "dtype": "float32", "shape": [30, 20], "role": scratch_role},
                    {"name": "y", "dtype": "float32", "shape": [30, 20], "role": "output"}],
        "launches": [{"kernel": "dense", "grid": [5], "block": [128], "args": ["t", "x", "w"]},
                     {"kernel": "relu", "grid": [5], "block": [128], "args": ["y", "t"]}],
        "reference": {"kind": "python", "function": "product_ref:dense_relu"}})


def _kernel(task):
    return fe.parse_translation(task.source(), str(task.source_path())).kernels["product"]


def test_a_naive_square_product_is_replaced_and_stays_correct(tmp_path, box):
    task = _square(tmp_path)
    alternatives = matrix_products(Context(task), lower_task(task))
    assert alternatives is not None and len(alternatives) == 8  # flat and square: every layout fits
    assert "cudaopt_product_0(A, B, nullptr, C);" in alternatives[0]
    result = search(task, lower_task(task), box, budget=Budget(max_variants=1, seeds=1, timing_s=0.1),
                    transforms=[MATRIX_PRODUCTS])
    assert result.steps[0].outcome in ("kept", "slower"), result.steps[0].detail  # correct; timing decides the rest
    report = check(task, alternatives[0], box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_double_operands(tmp_path, box):
    task = _square(tmp_path, NAIVE.replace("float", "double"), n=20, dtype="float64")
    alternatives = matrix_products(Context(task), lower_task(task))
    assert alternatives is not None and "static void cudaopt_product_0(const double*" in alternatives[0]
    report = check(task, alternatives[0], box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_the_first_alternative_that_matches_is_taken(tmp_path, box):
    transposed = NAIVE.replace("B[k * n + col]", "B[col * n + k]")
    task = _square(tmp_path, transposed, ref="square_bt")
    alternatives = matrix_products(Context(task), lower_task(task))
    chosen, _ = _first_correct(task, alternatives, box, SEEDS)
    assert chosen == alternatives[1] and "A^T" not in chosen and "= A B^T" in chosen
    report = check(task, chosen, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_shared_memory_tiles_with_barriers_are_a_product(tmp_path, box):
    task = _tiled(tmp_path)
    assert is_polynomial(_kernel(task))
    alternatives = matrix_products(Context(task), lower_task(task))
    assert alternatives is not None and len(alternatives) == 1  # rectangular: one layout fits
    assert "namespace cudacpu_kernels" in alternatives[0] and "__syncthreads" not in alternatives[0].split("Entry point")[1]
    report = check(task, alternatives[0], box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_a_dense_layer_with_bias_and_fma(tmp_path, box):
    task = _dense(tmp_path)
    buffers = {b.name: b for b in task.buffers}
    (p,) = proposals(buffers["y"], [buffers[n] for n in ("x", "w", "bias")])
    assert (p.left, p.right, p.bias, p.right_transposed, p.left_transposed) == ("x", "w", "bias", True, False)
    assert (p.m, p.n, p.k) == (37, 70, 19)
    (variant,) = matrix_products(Context(task), lower_task(task))
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_nan_inf_and_overflow_come_out_as_the_kernel_computes_them(tmp_path, box):
    """NaN, +-Inf, the largest float and tiny values in one operand (one element in eight) against
    the kernel itself (the faithful lowering as the reference): same propagation, same overflows,
    since both sum over k in the same order."""
    task = _tiled(tmp_path, m=24, n=40, k=36)
    raw = json.loads((tmp_path / "product.json").read_text())
    raw["buffers"][0]["inputs"] = {"distribution": "special"}
    raw["reference"] = {"kind": "lowered"}
    (tmp_path / "product.json").write_text(json.dumps(raw))
    task = load_task(tmp_path / "product.json")
    (variant,) = matrix_products(Context(task), lower_task(task))
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_in_a_graph_only_the_product_launch_is_replaced(tmp_path, box):
    task = _graph(tmp_path)
    (variant,) = matrix_products(Context(task), lower_task(task))
    entry = variant.split("// Entry point of the task")[1]
    assert "cudaopt_product_0(x, w, nullptr, t);" in entry and "cudacpu_kernels::relu(" in entry
    assert "void dense(dim3 gridDim" not in variant and "void relu(dim3 gridDim" in variant
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_a_kernel_reading_what_it_stores_needs_a_buffer_that_holds_nothing_before(tmp_path):
    task = _graph(tmp_path, scratch_role="inout")  # t's old values could matter: not a product
    assert matrix_products(Context(task), lower_task(task)) is None


def test_a_polynomial_that_is_no_product_keeps_the_input(tmp_path, box):
    mul_add = NAIVE.replace("for (int k = 0; k < n; ++k) sum += A[row * n + k] * B[k * n + col];",
                            "sum = A[row * n + col] * B[row * n + col] + A[row * n + col];")
    task = _square(tmp_path, mul_add, ref="mul_add", n=16)
    lowered = lower_task(task)
    result = search(task, lowered, box, budget=Budget(max_variants=1, seeds=1), transforms=[MATRIX_PRODUCTS])
    assert result.steps[0].outcome == "incorrect" and "none of 8 alternatives matched" in result.steps[0].detail
    assert not result.applied and "cudaopt_product" not in result.code


@pytest.mark.parametrize("old, new", [
    ("sum += A[row * n + k] * B[k * n + col];", "sum += fmaxf(A[row * n + k], 0.0f) * B[k * n + col];"),  # a math call
    ("C[row * n + col] = sum;", "C[row * n + col] = sum / n;"),  # a division
    ("C[row * n + col] = sum;", "C[row * n + col] = sum > 0.0f ? sum : 0.0f;"),  # a comparison of floats
    ("sum += A[row * n + k] * B[k * n + col];", "if (A[row * n + k]) sum += A[row * n + k] * B[k * n + col];"),
    ("sum += A[row * n + k] * B[k * n + col];", "sum += A[row * n + (int)B[k]] * B[k * n + col];"),  # float as index
    ("C[row * n + col] = sum;", "atomicAdd(&C[row * n + col], sum);"),
    ("sum += A[row * n + k] * B[k * n + col];", "sum += A[row * n + k];"),  # sums, no products
])
def test_kernels_that_are_not_polynomials_of_products_are_refused(tmp_path, old, new):
    assert old in NAIVE
    task = _square(tmp_path, NAIVE.replace(old, new))
    assert not is_polynomial(_kernel(task))
    assert matrix_products(Context(task), lower_task(task)) is None


def test_a_local_pointer_that_could_alias_is_refused(tmp_path):
    aliased = NAIVE.replace("C[row * n + col] = sum;", "float* out = C + row * n;\n    out[col] = sum;")
    task = _square(tmp_path, aliased)
    assert is_polynomial(_kernel(task)) and stored_params(_kernel(task)) is None
    assert matrix_products(Context(task), lower_task(task)) is None


def test_a_float_scalar_operand_is_refused(tmp_path):
    scaled = NAIVE.replace("int n)", "int n, float alpha)").replace("= sum;", "= alpha * sum;")
    task = _square(tmp_path, scaled)
    raw = json.loads((tmp_path / "product.json").read_text())
    raw["scalars"].append({"name": "alpha", "dtype": "float32", "value": 1.0})
    raw["launches"][0]["args"].append("alpha")
    (tmp_path / "product.json").write_text(json.dumps(raw))
    task = load_task(tmp_path / "product.json")
    assert is_polynomial(_kernel(task))  # alpha * sum is a polynomial, but of the task's alpha only
    assert matrix_products(Context(task), lower_task(task)) is None


def test_shapes_propose_batches_transposes_and_flat_factorizations():
    def fits(**shapes: list[int]):
        buffers = [Buffer(name=k, dtype="float32", shape=v, role="output" if k == "C" else "input")
                   for k, v in shapes.items()]
        return proposals(buffers[-1], buffers[:-1])

    (batched,) = fits(A=[3, 5, 7], B=[3, 7, 4], C=[3, 5, 4])
    assert (batched.batch, batched.m, batched.n, batched.k) == (3, 5, 4, 7)
    (left_t,) = fits(A=[7, 5], B=[7, 4], C=[5, 4])
    assert left_t.left_transposed and not left_t.right_transposed
    flat = fits(A=[24], B=[20], C=[30])  # 6x4 by 4x5
    assert [(p.left, p.m, p.n, p.k) for p in flat][0] == ("A", 6, 5, 4)
    (full,) = fits(A=[5, 7], B=[7, 4], D=[5, 4], C=[5, 4])  # an addend shaped like the output
    assert full.bias == "D" and full.bias_full
    assert fits(A=[5, 7], B=[3, 4], C=[5, 4]) == []
    assert fits(A=[5, 7], B=[7, 4], D=[9], C=[5, 4]) == []
