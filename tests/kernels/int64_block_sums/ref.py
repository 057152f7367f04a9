import numpy as np


def int64_block_sums(inputs, scalars):
    n = scalars["n"]
    x = inputs["x"]
    padded = np.zeros(24 * 128, dtype=np.int64)
    padded[:n] = x
    sums = padded.reshape(24, 128).sum(axis=1)
    i = np.arange(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        mixed = x.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + (i << np.uint64(40))
    return {"block_sums": sums.astype(np.int64), "mixed": mixed}
