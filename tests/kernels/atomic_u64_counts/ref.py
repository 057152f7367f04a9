import numpy as np


def atomic_u64_counts(inputs, scalars):
    keys = inputs["keys"].astype(np.uint64)
    k = (keys & np.uint64(15)).astype(np.int64)
    counts = np.bincount(k, minlength=16).astype(np.uint64)
    sumsq = np.zeros(16, dtype=np.uint64)
    np.add.at(sumsq, k, keys * keys)  # wraps modulo 2**64 like the GPU
    return {"counts": counts, "sumsq": sumsq}
