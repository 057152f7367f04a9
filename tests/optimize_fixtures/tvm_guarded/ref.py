import numpy as np


def tvm_guarded(inputs, scalars):
    x = inputs["x"].astype(np.float32)
    out = (np.maximum(x, np.float32(0)) * np.float32(2)).astype(np.float32)
    out[1:] += x[:-1]
    return {"out": out}
