import numpy as np


def histogram_shared_atomics(inputs, scalars):
    keys = inputs["data"].astype(np.int64) % 64
    return {"bins": np.bincount(keys, minlength=64).astype(np.uint32)}
