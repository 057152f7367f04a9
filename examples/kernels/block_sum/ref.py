import numpy as np


def block_sum(inputs, scalars):
    return {"total": np.array([inputs["in"].astype(np.float64).sum()], dtype=np.float32)}
