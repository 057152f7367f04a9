"""Seeded inputs and the element-wise comparison (pure numpy: no compiler needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tools.spec import Buffer, Tolerance, load_task, parse_task
from tools.verify import compare_buffer, generate_inputs
from tools.verify.inputs import bfloat16_bits_to_float32, distinct_values, float32_to_bfloat16_bits

FIX = Path(__file__).parent / "verify_fixtures"


def task_with(buffers, inputs=None):
    raw = {"name": "t", "cuda_code": "__global__ void k() {}", "buffers": buffers, "reference": {"kind": "golden"},
           "inputs": inputs or {"seed": 3}}
    return parse_task(raw)


def test_inputs_are_seeded_per_buffer_and_shaped():
    task = load_task(FIX / "prefix" / "task.json")
    one, again, other = generate_inputs(task, 1), generate_inputs(task, 1), generate_inputs(task, 2)
    assert set(one) == {"x", "total"}  # inputs and inouts; never outputs
    assert one["x"].shape == (20000,) and one["x"].dtype == np.int32
    assert np.array_equal(one["x"], again["x"]) and not np.array_equal(one["x"], other["x"])
    assert one["x"].min() == 0 and one["x"].max() == 9  # randint bounds are inclusive
    # adding a buffer does not change another buffer's values
    bigger = task.model_copy(update={"buffers": [Buffer(name="w", dtype="float32", shape=[5], role="input"), *task.buffers]})
    assert np.array_equal(generate_inputs(bigger, 1)["x"], one["x"])


def test_special_values_and_denormals():
    task = task_with([{"name": "x", "dtype": "float32", "shape": [4000], "role": "input",
                       "inputs": {"distribution": "special", "denormals": True}}])
    x = generate_inputs(task, 0)["x"]
    assert np.isnan(x).any() and np.isposinf(x).any() and np.isneginf(x).any()
    assert (x == 0).any() and (x < 0).any()
    sub = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
    assert sub.sum() > 50


def test_distributions_by_dtype():
    task = task_with([
        {"name": "h", "dtype": "float16", "shape": [100], "role": "input", "inputs": {"distribution": "normal"}},
        {"name": "b", "dtype": "bfloat16", "shape": [100], "role": "inout"},
        {"name": "u", "dtype": "uint8", "shape": [100], "role": "input", "inputs": {"distribution": "arange"}},
        {"name": "f", "dtype": "bool", "shape": [100], "role": "input"},
        {"name": "o", "dtype": "float64", "shape": [3], "role": "input", "inputs": {"distribution": "ones"}},
    ], {"seed": 1, "low": -4, "high": 4})
    got = generate_inputs(task, 1)
    assert got["h"].dtype == np.float16 and abs(float(got["h"].mean())) < 1.0
    assert got["b"].dtype == np.uint16 and np.all(np.abs(bfloat16_bits_to_float32(got["b"])) <= 4)
    assert list(got["u"][:3]) == [0, 1, 2] and got["f"].dtype == np.bool_ and got["f"].any() and not got["f"].all()
    assert np.array_equal(got["o"], np.ones(3))


def test_distinct_values_say_what_random_tests_can_rely_on():
    task = task_with([
        {"name": "f", "dtype": "float32", "shape": [8], "role": "input"},
        {"name": "i", "dtype": "int32", "shape": [8], "role": "input"},
        {"name": "r", "dtype": "int32", "shape": [8], "role": "input", "inputs": {"distribution": "randint", "low": 0, "high": 100}},
        {"name": "o", "dtype": "float32", "shape": [8], "role": "input", "inputs": {"distribution": "ones"}},
        {"name": "a", "dtype": "int64", "shape": [8], "role": "input", "inputs": {"distribution": "arange"}},
    ])
    counts = {b.name: distinct_values(task, b) for b in task.buffers}
    assert counts == {"f": float("inf"), "i": 3.0, "r": 101.0, "o": 1.0, "a": 1.0}  # ints default to -1, 0 and 1
    one, other = generate_inputs(task, 5), generate_inputs(task, 6)
    for name in "firo":
        assert len(np.unique(one[name])) <= counts[name]
    assert np.array_equal(one["a"], other["a"])  # a range is the same on every seed: no randomness to rely on


def test_bfloat16_rounds_to_nearest_even():
    values = np.array([1.0, 1.00390625, 1.01171875, -2.5, np.nan], dtype=np.float32)
    back = bfloat16_bits_to_float32(float32_to_bfloat16_bits(values))
    assert list(back[:4]) == [1.0, 1.0, 1.015625, -2.5] and np.isnan(back[4])


def buf(dtype, shape):
    return Buffer(name="y", dtype=dtype, shape=shape, role="output")


def test_compare_tolerances_nan_inf_and_integers():
    tol = Tolerance(rtol=1e-3, atol=1e-6)
    exp = np.array([[1.0, 2.0], [np.inf, np.nan]], dtype=np.float32)
    assert compare_buffer(buf("float32", [2, 2]), exp, exp * np.float32(1.0005), tol, seed=0, threads=1) is None
    m = compare_buffer(buf("float32", [2, 2]), exp, np.array([[1.0, 2.1], [-np.inf, np.nan]], dtype=np.float32), tol, seed=0, threads=1)
    assert m.count == 2 and m.first_index == (0, 1) and m.max_abs_err == float("inf")
    m = compare_buffer(buf("float32", [2, 2]), exp, np.array([[1.0, 2.0], [np.inf, 0.0]], dtype=np.float32), tol, seed=0, threads=1)
    assert m.count == 1 and m.first_index == (1, 1)  # NaN position must match
    ints = np.arange(6, dtype=np.int32)
    m = compare_buffer(buf("int32", [6]), ints, ints + np.array([0, 0, 0, 1, 0, 0], dtype=np.int32), tol, seed=0, threads=2)
    assert (m.count, m.first_index, m.max_abs_err) == (1, (3,), 1.0)
    assert "[3]" in m.excerpt and "<- differs" in m.excerpt
    assert compare_buffer(buf("bool", [2]), np.array([True, False]), np.array([True, False]), tol, seed=0, threads=1) is None


def test_constant_reference_output_is_noted():
    from tools.verify.check import constant_output_notes

    task = load_task(FIX / "vadd" / "task.json")
    assert "is 0.0 everywhere for seed 5" in constant_output_notes(task, {"c": np.zeros((100, 37), np.float32)}, 5)[0]
    assert constant_output_notes(task, {"c": np.arange(3700, dtype=np.float32).reshape(100, 37)}, 5) == []
