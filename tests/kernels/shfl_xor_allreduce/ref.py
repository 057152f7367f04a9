import numpy as np


def shfl_xor_allreduce(inputs, scalars):
    x = inputs["x"]
    seg = x.astype(np.float64).reshape(-1, 16).sum(axis=1)
    mx = x.reshape(-1, 32).max(axis=1)
    return {"seg_sum": np.repeat(seg, 16).astype(np.float32), "warp_max": np.repeat(mx, 32).astype(np.float32)}
