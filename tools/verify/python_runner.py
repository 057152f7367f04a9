"""Runs a python reference inside its sandbox: `python runner.py JOB.json`.

Standalone on purpose (copied into the sandbox): only the standard library and numpy.
JOB.json: module_dir, module, function, inputs (.npz), outputs (.npz), times (.txt), scalars,
budget_s, outputs_expected. With budget_s > 0 it also times the call (fresh copies of the inputs
per call, prepared outside the timed region) and writes `t1 t2 ...` into the times file.
"""

import importlib
import json
import sys
import time

import numpy as np


def main(job_path: str) -> int:
    with open(job_path) as f:
        job = json.load(f)
    sys.path.insert(0, job["module_dir"])
    try:
        fn = getattr(importlib.import_module(job["module"]), job["function"])
    except (ImportError, AttributeError) as exc:
        print(f"cannot load {job['module']}:{job['function']}: {exc}", file=sys.stderr)
        return 2
    with np.load(job["inputs"]) as data:
        inputs = {k: data[k] for k in data.files}
    result = fn({k: v.copy() for k, v in inputs.items()}, dict(job["scalars"]))
    if not isinstance(result, dict):
        print(f"{job['module']}:{job['function']} returned {type(result).__name__}, expected a dict of arrays", file=sys.stderr)
        return 3
    missing = [n for n in job["outputs_expected"] if n not in result]
    if missing:
        print(f"{job['module']}:{job['function']} did not return {', '.join(missing)}", file=sys.stderr)
        return 3
    np.savez(job["outputs"], **{k: np.asarray(result[k]) for k in job["outputs_expected"]})
    budget = float(job.get("budget_s") or 0)
    if budget > 0:
        times: list[float] = []
        started = time.perf_counter()
        while len(times) < 3 or (sum(times) < budget and time.perf_counter() - started < 4 * budget + 0.2):
            fresh = {k: v.copy() for k, v in inputs.items()}
            t0 = time.perf_counter()
            fn(fresh, dict(job["scalars"]))
            times.append(time.perf_counter() - t0)
        # into a file: a fast function runs thousands of times, more than a sandbox keeps of stdout
        with open(job["times"], "w") as f:
            f.write(" ".join(f"{t:.9g}" for t in times))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
