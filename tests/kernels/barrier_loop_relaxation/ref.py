import numpy as np


def barrier_loop_relaxation(inputs, scalars):
    own = inputs["x"].astype(np.float64).reshape(16, 128)
    acc = np.zeros_like(own)
    for _ in range(scalars["iters"]):
        own = 0.5 * own + 0.25 * (np.roll(own, 1, axis=1) + np.roll(own, -1, axis=1))
        acc += own
    return {"y": (acc / scalars["iters"] + own).reshape(-1).astype(np.float32)}
