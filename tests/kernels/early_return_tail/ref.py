import numpy as np


def early_return_tail(inputs, scalars):
    n = scalars["n"]
    s = np.zeros(12 * 128, dtype=np.float32)
    s[:n] = inputs["x"]
    blocks = s.reshape(12, 128)
    v = (blocks - blocks[:, ::-1]).reshape(-1)[:n]
    y = np.where(v < 0, np.float32(0), v * np.float32(2))
    return {"y": y.astype(np.float32), "block_sum": blocks.astype(np.float64).sum(axis=1).astype(np.float32)}
