"""tools/optimize/full_blocks.py: blocks where every bound guard is decided as in the interior of
the problem run a copy of their code with those guards folded to constants; the others run the
code unchanged. Corpus kernels with partial blocks at the edges (so both copies run) stay correct
with 1 and 2 threads; the per-block check is what keeps them so (skipping it breaks them); guards
that read memory, only the thread's coordinates, locals assigned twice, or counters of loops not
counted to a constant stay as they are. Real g++, real sandbox; no timing (speed:
scripts/bench_speed.py --corpus --only-sync)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.base import Context, NotApplicable
from tools.optimize.passes.full_blocks import full_blocks
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [2468, 2469]


def _copies(code: str) -> tuple[str, str]:
    """The interior copy and the unchanged one of the last block with a check (wide_indices puts
    its narrow copy of a kernel first)."""
    start = code.rindex("if (cudaopt_interior) {")
    middle = code.index("} else {", start)
    return code[start:middle], code[middle:]


def _corpus(name: str):
    return load_task(CORPUS / name / "task.json")


def test_bound_guards_of_a_tree_reduction_fold_in_interior_blocks(box):
    task = _corpus("reduce_tree_shared")  # 100000 elements in blocks of 512: the last one is partial
    new = full_blocks(Context(task), lower_task(task))
    assert new is not None
    assert "cudaopt_interior &= int((i < n));" in new and "cudaopt_interior &= int((i + blockDim.x < n));" in new
    fast, slow = _copies(new)
    assert "if (true)" in fast and "if (i < n)" not in fast and "if (i < n)" in slow
    assert "if (tid_2 < s)" in fast  # a guard on the thread's coordinates alone stays (the kernel's tid)
    assert "(std::size_t)" in fast  # wide_indices applied on top: the copy's loads vectorize
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_early_returns_fold_to_false_and_their_flag_tests_go(box):
    task = _corpus("stencil_2d_jacobi")  # 70 x 90 in tiles of 16: partial tiles on two sides
    new = full_blocks(Context(task), lower_task(task))
    assert new is not None
    fast, slow = _copies(new)
    assert "cudaopt_interior &= int(!(!inside));" in new
    assert "if(false||false||false||false)" in fast.replace(" ", "")
    assert "if (exited[" not in fast and "if (exited[" in slow  # (wide_indices spells out tid)
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_guards_in_counted_loops_are_checked_for_every_trip(box):
    task = _corpus("transpose_padded_tile")  # 100 x 70 in tiles of 32
    new = full_blocks(Context(task), lower_task(task))
    assert new is not None
    loop = "for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) cudaopt_interior &= "
    assert f"{loop}int((cudaopt_pt_x < cols));" in new and f"{loop}int((cudaopt_pt_y + j < rows));" in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_without_the_check_the_edge_blocks_go_wrong(box):
    """The interior copy is only right where the check passed: taken by every block, the partial
    block at the end reads and writes past the buffers."""
    task = _corpus("reduce_tree_shared")
    new = full_blocks(Context(task), lower_task(task))
    unchecked = new.replace("if (cudaopt_interior) {", "if (true) {")
    report = check(task, unchecked, box, seeds=SEEDS[:1], threads=[1])
    assert not report.correct


MIXED = r"""
#define STEP 4
__global__ void mixed(const float* x, const int* flags, float* y, int n, int m, int d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i;
    j = j + 1;
    float v = 0.0f;
    if (i < n) v = x[i];
    if (i < n && flags[i] > 0) v += 1.0f;
    if (threadIdx.x == 0) v += 2.0f;
    if (j < n) v += 3.0f;
    if (i / d < m) v += 4.0f;
    for (int k = 0; k < m; k += STEP)
        if (i + k < n) v += 0.5f;
    if (i < n) y[i] = v;
}
"""
MIXED_REF = """
import numpy as np

def mixed(inputs, scalars):
    n, m, d = scalars["n"], scalars["m"], scalars["d"]
    i = np.arange(n)
    v = inputs["x"].astype(np.float32).copy()
    v += np.where(inputs["flags"] > 0, 1.0, 0.0).astype(np.float32)
    v += np.where(i % 64 == 0, 2.0, 0.0).astype(np.float32)
    v += np.where(i + 1 < n, 3.0, 0.0).astype(np.float32)
    v += np.where(i // d < m, 4.0, 0.0).astype(np.float32)
    for k in range(0, m, 4):
        v += np.where(i + k < n, 0.5, 0.0).astype(np.float32)
    return {"y": v.astype(np.float32)}
"""


def _mixed_task(tmp_path: Path):
    (tmp_path / "mixed.cu").write_text(MIXED)
    (tmp_path / "mixed_ref.py").write_text(MIXED_REF)
    raw = {"name": "mixed", "cuda": "mixed.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [1000], "role": "input"},
                       {"name": "flags", "dtype": "int32", "shape": [1000], "role": "input",
                        "inputs": {"distribution": "randint", "low": -3, "high": 3}},
                       {"name": "y", "dtype": "float32", "shape": [1000], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": 1000}, {"name": "m", "dtype": "int32", "value": 10},
                       {"name": "d", "dtype": "int32", "value": 7}],
           "launches": [{"kernel": "mixed", "grid": [16], "block": [64], "args": ["x", "flags", "y", "n", "m", "d"]}],
           "reference": {"kind": "python", "function": "mixed_ref:mixed"},
           "tolerance": {"rtol": 1e-6, "atol": 1e-6}}
    (tmp_path / "mixed.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "mixed.json")


def test_only_guards_of_plain_index_arithmetic_fold(tmp_path, box):
    task = _mixed_task(tmp_path)
    new = full_blocks(Context(task), lower_task(task))
    assert new is not None
    fast, _ = _copies(new)
    assert re.search(r"if \(true && flags\[i\] > 0\)", fast)  # the bound conjunct folds, the read stays
    for kept in ("threadIdx.x == 0", "j < n", "i / d < m", "i + k < n"):
        assert kept in fast, kept  # thread coordinates alone, reassigned local, division, loop to a parameter
    assert fast.count("if (true)") == 2  # the two plain `if (i < n)`
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_kernels_without_bound_guards_are_left_alone_and_the_pass_says_why():
    task = _corpus("bitonic_sort_shared")
    with pytest.raises(NotApplicable, match="no guard of its threads compares an index with a bound"):
        full_blocks(Context(task), lower_task(task))


SHADOWED = r"""
__global__ void shadowed(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    {
        int i = 0;
        if (i < n) v = 1.0f;
    }
    for (int i = 5; i < n; ++i) { if (i < n) v += 0.0f; break; }
    if (i < n) y[i] = v + x[i];
}
"""


def test_a_local_declared_again_in_a_nested_statement_is_not_folded(tmp_path):
    (tmp_path / "shadowed.cu").write_text(SHADOWED)
    raw = {"name": "shadowed", "cuda": "shadowed.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [100], "role": "input"},
                       {"name": "y", "dtype": "float32", "shape": [100], "role": "output"}],
           "scalars": [{"name": "n", "dtype": "int32", "value": 100}],
           "launches": [{"kernel": "shadowed", "grid": [4], "block": [32], "args": ["x", "y", "n"]}],
           "reference": {"kind": "lowered"}}
    (tmp_path / "shadowed.json").write_text(json.dumps(raw))
    task = load_task(tmp_path / "shadowed.json")
    with pytest.raises(NotApplicable):  # no `i` here is one value: none folds
        full_blocks(Context(task), lower_task(task))
