import numpy as np


def atomic_cas_loops(inputs, scalars):
    x = inputs["x"]
    slot = (np.arange(x.size) // 7) % 8
    maxes = inputs["maxes"].copy()
    sums = np.zeros(8)
    for s in range(8):
        maxes[s] = max(maxes[s], x[slot == s].max())
        sums[s] = x[slot == s].astype(np.float64).sum()
    return {"maxes": maxes.astype(np.float32), "sums": sums}
