"""tools/optimize/memo_calls.py and the guard hoisting before it: TVM's unscheduled dense layer
with its producer inlined (every output column recomputes `expf` of the same input row). The
shared values are keyed by the thread index they depend on, the result stays correct with 1 and
2 threads, and near misses where sharing would be wrong are refused. Real g++, real sandbox; no
timing (speed: scripts/bench_speed.py --hte --per-category 0 --applies memo_calls)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.analysis.expressions import parse_expression
from tools.optimize.base import Context
from tools.optimize.passes.memo_calls import _every_trip, memo_calls
from tools.optimize.passes.specialize import specialize
from tools.spec import load_task
from tools.verify import check

SEEDS = [1234, 1235]
IDX = "((((int)blockIdx.x) * 256) + ((int)threadIdx.x))"
DENSE = r"""
extern "C" __global__ void __launch_bounds__(256) dense_exp(float* __restrict__ out, float* __restrict__ x, float* __restrict__ w) {
  if (IDX < 600) {
    out[IDX] = 0x0p+0f/*0.000000e+00*/;
  }
  for (int k = 0; k < 40; ++k) {
    if (IDX < 600) {
      out[IDX] = (out[IDX] + ((expf((x[(((IDX / 24) * 40) + k)] * 0x1p-1f/*5.000000e-01*/)) + 0x1p+0f/*1.000000e+00*/) * w[(((IDX % 24) * 40) + k)]));
    }
  }
}
""".replace("IDX", IDX)
# the same with the step taken only where the weight is positive: not every trip uses the value
STEP = "out[IDX] = (out[IDX] + ((expf(".replace("IDX", IDX)
SOME_TRIPS = DENSE.replace(STEP, "if (w[(((IDX % 24) * 40) + k)] > 0x0p+0f) ".replace("IDX", IDX) + STEP)
REF = """
import numpy as np

def dense_exp(inputs, scalars):
    x = inputs["x"].reshape(25, 40).astype(np.float64)
    w = inputs["w"].reshape(24, 40).astype(np.float64)
    return {"out": ((np.exp(x * 0.5) + 1.0) @ w.T).astype(np.float32)}

def some_trips(inputs, scalars):
    x = inputs["x"].reshape(25, 40).astype(np.float64)
    w = inputs["w"].reshape(24, 40).astype(np.float64)
    return {"out": ((np.exp(x * 0.5) + 1.0) @ np.where(w > 0, w, 0).T).astype(np.float32)}
"""


def _task(tmp_path: Path, cuda: str = DENSE, args=("out", "x", "w"), ref: str = "dense_exp"):
    (tmp_path / "dense_exp.cu").write_text(cuda)
    (tmp_path / "dense_exp_ref.py").write_text(REF)
    raw = {"name": "dense_exp", "cuda": "dense_exp.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [25, 40], "role": "input"},
                       {"name": "w", "dtype": "float32", "shape": [24, 40], "role": "input"},
                       {"name": "out", "dtype": "float32", "shape": [25, 24], "role": "output"}],
           "launches": [{"kernel": "dense_exp", "grid": [3], "block": [256], "args": list(args)}],
           "reference": {"kind": "python", "function": f"dense_exp_ref:{ref}"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-5}}
    (tmp_path / "dense_exp.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "dense_exp.json")


def test_guards_leave_the_loop_and_the_thread_range_replaces_them(tmp_path, box):
    task = _task(tmp_path)
    new = specialize(Context(task), lower_task(task))
    assert new is not None
    assert "tx < tx_hi" in new  # one guard left, turned into the admitted range
    assert f"if ({IDX} < 600)" not in new
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


ROW, WHERE_NEEDED = "memo_row[k] = ", "[&]() { return "


@pytest.mark.parametrize("cuda, ref, filled", [
    (DENSE, "dense_exp", ROW),  # every trip uses it (once the guard left the loop): the row filled before it
    (SOME_TRIPS, "some_trips", WHERE_NEEDED),  # some trips: each value computed where first needed
])
def test_expf_of_a_row_is_computed_once_per_row_and_step(tmp_path, box, cuda, ref, filled):
    task = _task(tmp_path, cuda, ref=ref)
    lowered = lower_task(task)  # the guard still in the loop: not every trip
    for code, filled in ((lowered, WHERE_NEEDED), (specialize(Context(task), lowered), filled)):
        new = memo_calls(Context(task), code)
        assert new is not None
        # the whole shared expression, keyed by the row (IDX / 24, 32 rows per block of 256) and k
        assert "threads with the same (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 24), k" in new
        shared = new.split(filled)[1].split(";")[0]
        assert shared.startswith("expf((x[") and shared.endswith("+ 0x1p+0f") and "w[" not in shared
        report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
        assert report.correct, report.summary()


@pytest.mark.parametrize("change", [
    ("x[(((IDX / 24) * 40) + k)]", "x[((IDX % 960) + k)]"),  # every thread its own element: nothing shared
    ("expf((x[", "expf((out[0] + x["),  # reads what the kernel writes
    ("0x1p-1f/*5.000000e-01*/))", "((float)threadIdx.x)))"),  # the thread outside a subscript
    ("x[(((IDX / 24) * 40) + k)]", "x[(((IDX / 24) * 40) + (int)w[k])]"),  # a memory read in the index
])
def test_sharing_is_refused_where_threads_could_differ(tmp_path, change):
    old, new = (part.replace("IDX", IDX) for part in change)
    assert old in DENSE
    task = _task(tmp_path, DENSE.replace(old, new))
    assert memo_calls(Context(task), lower_task(task)) is None


def test_sharing_is_refused_when_a_launch_passes_one_buffer_twice(tmp_path):
    task = _task(tmp_path, args=("out", "x", "x"))
    assert memo_calls(Context(task), lower_task(task)) is None


def _nodes(tree):
    return [tree] + [n for child in tree.args for n in _nodes(child)]


def test_expressions_are_read_with_their_place_in_the_text():
    text = "((float)x[((((int)threadIdx.x) / 12) * 103) + k] * 0x1.6a09e667f3bcdp-1f/*7.07e-01*/) < (a ? expf(b) : -c[2])"
    tree = parse_expression(text)
    assert (tree.kind, tree.op) == ("binary", "<")
    nodes = _nodes(tree)
    call = next(n for n in nodes if n.kind == "call")
    assert text[call.start:call.end] == "expf(b)"
    assert {n.kind for n in nodes} >= {"cast", "index", "num", "cond", "unary", "paren"}
    for bad in ("x = 1", "a b", "f(x", "f(a b)", "(a)(b)", "x[i++]", "--y"):
        with pytest.raises(ValueError):
            parse_expression(bad)


@pytest.mark.parametrize("statement, every_trip", [
    ("y[t] = y[t] + @;", True),
    ("{ float v = @; y[t] = v; }", True),  # a plain block
    ("if (@ > 0.0f) y[t] = 1.0f;", True),  # an if's condition
    ("if (w[k] > 0.0f) y[t] = @;", False),  # the statement an if guards
    ("if (w[k] > 0.0f) { y[t] = @; }", False),
    ("y[t] = 1.0f; if (w[k] > 0.0f) continue; y[t] = @;", False),  # a jump in the loop
    ("while (w[k] > 0.0f) { y[t] = @; }", False),
])
def test_a_row_is_filled_only_for_uses_in_every_trip(statement, every_trip):
    nest = "for (int k = 0; k < 8; ++k) {\n" + statement.replace("@", "expf(x[k])") + "\n}"
    loops = [("k", 8, nest.index("{"), len(nest) - 1)]
    assert _every_trip(nest, loops, nest.index("expf")) is every_trip


def test_the_speed_benchmark_selects_the_tasks_a_step_applies_to(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_speed", Path(__file__).resolve().parents[1] / "scripts" / "bench_speed.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert bench.applies(_task(tmp_path / "a"), "memo_calls")
    unshared = DENSE.replace("x[(((IDX / 24) * 40) + k)]".replace("IDX", IDX), "x[((IDX % 960) + k)]".replace("IDX", IDX))
    assert not bench.applies(_task(tmp_path / "b", unshared), "memo_calls")
