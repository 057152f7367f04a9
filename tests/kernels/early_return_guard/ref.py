import numpy as np


def early_return_guard(inputs, scalars):
    x = inputs["x"].astype(np.int64)
    i = np.arange(x.size, dtype=np.int64)
    r = x * 3 + i
    r = np.where(x < 0, -r, r)
    return {"out": (r ^ (i >> 2)).astype(np.int32)}
