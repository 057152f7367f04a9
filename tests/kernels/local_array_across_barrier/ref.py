import numpy as np


def local_array_across_barrier(inputs, scalars):
    v = inputs["x"].astype(np.float64)  # [block, thread, k]
    t = np.arange(64)
    for r in range(scalars["rounds"]):
        total = v.sum(axis=2)
        neighbour = total[:, (t + 1 + r) % 64]
        v = 0.5 * v + 0.125 * neighbour[:, :, None]
    return {"y": v.astype(np.float32)}
