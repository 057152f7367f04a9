"""Run the C references of benchmark records on seeded inputs.

C references of many records are compiled together into one shared library (one gcc
run per batch) and called through ctypes. Used at generation time (against TVM's LLVM
build) and by the tests (against the statistics stored in each record).

`python -m bench.check FILE.json [--sample N]` checks stored records in a child process,
so that a crashing reference cannot take the caller down.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .format import OutputStats, Record

RTOL, ATOL = 1e-4, 1e-4
# -fopenmp: tuned references share their parallel loops out with OpenMP
CFLAGS = ("-std=gnu11", "-O2", "-shared", "-fPIC", "-fno-fast-math", "-fopenmp")
# As the evaluation builds references: for timing them
FAST_CFLAGS = ("-std=gnu11", "-O3", "-march=native", "-fno-math-errno", "-shared", "-fPIC", "-fopenmp")


class CheckError(Exception):
    """A reference that does not compile or does not match."""


def make_inputs(shapes: list[list[int]], dtypes: list[str], ranges: list, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype, bounds in zip(shapes, dtypes, ranges):
        if dtype.startswith(("int", "uint")):
            low, high = bounds or (0, 8)
            arrays.append(rng.integers(int(low), int(high), size=shape).astype(dtype))
        else:
            low, high = bounds or (-1.0, 1.0)
            arrays.append(rng.uniform(low, high, size=shape).astype(dtype))
    return arrays


def record_inputs(rec: Record, seed: int) -> list[np.ndarray]:
    dtypes = rec.input_dtype or ["float32"] * len(rec.input_shape)
    ranges = rec.input_range or [None] * len(rec.input_shape)
    return make_inputs(rec.input_shape, dtypes, ranges, seed)


def stats(arrays: list[np.ndarray]) -> list[OutputStats]:
    out = []
    for a in arrays:
        flat = a.astype("float64").ravel()
        out.append(OutputStats(sum=float(flat.sum()), abs_sum=float(np.abs(flat).sum()), head=[float(v) for v in flat[:8]]))
    return out


def compile_batch(sources: dict[str, str], workdir: Path, flags: tuple[str, ...] = CFLAGS) -> ctypes.CDLL:
    """Compile C sources (name -> code) into one shared library."""
    files = []
    for name, code in sources.items():
        f = workdir / f"{name}.c"
        f.write_text(code)
        files.append(str(f))
    lib = workdir / "refs.so"
    proc = subprocess.run(["gcc", *flags, *files, "-o", str(lib), "-lm"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CheckError(f"gcc failed on the C references:\n{proc.stderr[-3000:]}")
    return ctypes.CDLL(str(lib))


def run_reference(lib: ctypes.CDLL, function: str, inputs: list[np.ndarray], output_shapes: list[list[int]],
                  output_dtypes: list[str]) -> list[np.ndarray]:
    outputs = [np.full(shape, np.nan if dt.startswith("float") else -7, dtype=dt) for shape, dt in zip(output_shapes, output_dtypes)]
    arrays = [np.ascontiguousarray(a) for a in inputs] + outputs
    getattr(lib, function)(*[a.ctypes.data_as(ctypes.c_void_p) for a in arrays])
    return outputs


def time_reference(lib: ctypes.CDLL, function: str, inputs: list[np.ndarray], output_shapes: list[list[int]],
                   output_dtypes: list[str], min_seconds: float = 0.2) -> float:
    """Fastest of repeated calls, in seconds (after one warm-up call), over at least `min_seconds`."""
    outputs = [np.zeros(shape, dtype=dt) for shape, dt in zip(output_shapes, output_dtypes)]
    pointers = [a.ctypes.data_as(ctypes.c_void_p) for a in [np.ascontiguousarray(a) for a in inputs] + outputs]
    fn = getattr(lib, function)
    fn(*pointers)
    best, spent, calls = float("inf"), 0.0, 0
    while spent < min_seconds or calls < 3:
        start = time.perf_counter()
        fn(*pointers)
        took = time.perf_counter() - start
        best, spent, calls = min(best, took), spent + took, calls + 1
    return best


def time_in_child(sources: dict[str, str], function: str, inputs: list[np.ndarray], output_shapes: list[list[int]],
                  output_dtypes: list[str], workdir: Path) -> dict[str, float]:
    """Fastest call of each version (tag -> C code) of one function, built with FAST_CFLAGS, in seconds.

    Timed in a child process with passive OpenMP waiting: in a process that has run TVM, or
    on a loaded machine, spinning OpenMP threads cost a scheduler slice per parallel loop.
    """
    spec = {"function": function, "output_shapes": output_shapes, "output_dtypes": output_dtypes,
            "inputs": [], "libs": {}}
    for k, a in enumerate(inputs):
        np.save(workdir / f"input{k}.npy", a)
        spec["inputs"].append(str(workdir / f"input{k}.npy"))
    for tag, code in sources.items():
        (workdir / tag).mkdir()
        compile_batch({function: code}, workdir / tag, FAST_CFLAGS)
        spec["libs"][tag] = str(workdir / tag / "refs.so")
    (workdir / "timing.json").write_text(json.dumps(spec))
    env = {**os.environ, "OMP_WAIT_POLICY": "passive", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "bench.check", "--time", str(workdir / "timing.json")],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise CheckError(f"timing {function} failed: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def _time_spec(path: Path) -> dict[str, float]:
    spec = json.loads(path.read_text())
    inputs = [np.load(f) for f in spec["inputs"]]
    return {tag: time_reference(ctypes.CDLL(lib), spec["function"], inputs, spec["output_shapes"], spec["output_dtypes"])
            for tag, lib in spec["libs"].items()}


def compare(got: list[np.ndarray], want: list[np.ndarray]) -> float:
    """Largest absolute error; raises CheckError where the tolerance is exceeded."""
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want)):
        g64, w64 = g.astype("float64"), w.astype("float64")
        if g64.shape != w64.shape:
            raise CheckError(f"output {i}: shape {g64.shape} != {w64.shape}")
        bad = ~np.isclose(g64, w64, rtol=RTOL, atol=ATOL, equal_nan=True)
        if bad.any():
            idx = np.unravel_index(int(np.argmax(bad)), g64.shape)
            raise CheckError(f"output {i}: {int(bad.sum())} mismatches, first at {list(map(int, idx))}: got {g64[idx]}, want {w64[idx]}")
        if g64.size:
            worst = max(worst, float(np.nanmax(np.abs(g64 - w64))))
    return worst


def check_stats(got: list[np.ndarray], want: list[OutputStats]) -> None:
    for i, (g, w) in enumerate(zip(got, want)):
        s = stats([g])[0]
        scale = max(1.0, w.abs_sum)
        if not np.isclose(s.abs_sum, w.abs_sum, rtol=1e-4, atol=1e-4 * scale) or not np.isclose(s.sum, w.sum, rtol=1e-4, atol=1e-4 * scale):
            raise CheckError(f"output {i}: sum {s.sum:.6g}/abs {s.abs_sum:.6g}, stored {w.sum:.6g}/{w.abs_sum:.6g}")
        if not np.allclose(s.head, w.head, rtol=RTOL, atol=ATOL, equal_nan=True):
            raise CheckError(f"output {i}: first values {s.head} != stored {w.head}")


def check_records(records: list[Record]) -> dict[str, str]:
    """Compile all references in one batch and check each against its stored statistics.

    Returns {record name: error} for the records that fail (empty when all pass).
    """
    failures: dict[str, str] = {}
    todo = [r for r in records if r.check and r.c_function]
    for r in records:
        if r not in todo:
            failures[r.task_name()] = "no stored check"
    if not todo:
        return failures
    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        lib = compile_batch({r.c_function: r.c_code for r in todo}, Path(tmp))
        for r in todo:
            try:
                out = run_reference(lib, r.c_function, record_inputs(r, r.check.seed), r.output_shape,
                                    r.output_dtype or ["float32"] * len(r.output_shape))
                check_stats(out, r.check.outputs)
            except CheckError as exc:
                failures[r.task_name()] = str(exc)
    return failures


def main(argv: list[str]) -> int:
    import argparse

    from .format import BenchFormatError, load_records

    parser = argparse.ArgumentParser(prog="python -m bench.check")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--sample", type=int, default=0, help="check every k-th record only (0: all)")
    parser.add_argument("--time", type=Path, help=argparse.SUPPRESS)  # time_in_child's child
    args = parser.parse_args(argv)
    if args.time:
        print(json.dumps(_time_spec(args.time)))
        return 0
    if not args.files:
        parser.error("no record files given")
    records = []
    for f in args.files:
        if f.name == "manifest.json":
            continue
        try:
            recs = load_records(f)
        except BenchFormatError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        records += recs[:: args.sample] if args.sample else recs
    failures = check_records(records)
    for name, err in failures.items():
        print(f"FAIL {name}: {err}")
    print(f"checked {len(records)} records, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
