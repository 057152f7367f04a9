import numpy as np


def reduce_warp_shuffle(inputs, scalars):
    return {"out": np.array([inputs["x"].astype(np.float64).sum()], dtype=np.float32)}
