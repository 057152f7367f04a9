"""Run the C references of benchmark records on seeded inputs.

C references of many records are compiled together into one shared library (one gcc
run per batch) and called through ctypes. Used at generation time (against TVM's LLVM
build) and by the tests (against the statistics stored in each record).

`python -m bench.check FILE.json [--sample N]` checks stored records in a child process,
so that a crashing reference cannot take the caller down.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from .format import OutputStats, Record

RTOL, ATOL = 1e-4, 1e-4
# -fopenmp: tuned references share their parallel loops out with OpenMP
CFLAGS = ("-std=gnu11", "-O2", "-shared", "-fPIC", "-fno-fast-math", "-fopenmp")


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


def compile_batch(sources: dict[str, str], workdir: Path) -> ctypes.CDLL:
    """Compile C sources (name -> code) into one shared library."""
    files = []
    for name, code in sources.items():
        f = workdir / f"{name}.c"
        f.write_text(code)
        files.append(str(f))
    lib = workdir / "refs.so"
    proc = subprocess.run(["gcc", *CFLAGS, *files, "-o", str(lib), "-lm"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise CheckError(f"gcc failed on the C references:\n{proc.stderr[-3000:]}")
    return ctypes.CDLL(str(lib))


def run_reference(lib: ctypes.CDLL, function: str, inputs: list[np.ndarray], output_shapes: list[list[int]],
                  output_dtypes: list[str]) -> list[np.ndarray]:
    outputs = [np.full(shape, np.nan if dt.startswith("float") else -7, dtype=dt) for shape, dt in zip(output_shapes, output_dtypes)]
    arrays = [np.ascontiguousarray(a) for a in inputs] + outputs
    getattr(lib, function)(*[a.ctypes.data_as(ctypes.c_void_p) for a in arrays])
    return outputs


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
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--sample", type=int, default=0, help="check every k-th record only (0: all)")
    args = parser.parse_args(argv)
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
