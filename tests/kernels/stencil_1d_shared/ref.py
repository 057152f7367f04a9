import numpy as np


def stencil_1d_shared(inputs, scalars):
    x = np.pad(inputs["inp"].astype(np.float64), 3)
    n = scalars["n"]
    out = np.zeros(n)
    for k in range(-3, 4):
        out += x[3 + k: 3 + k + n] * (4 - abs(k))
    return {"out": out.astype(np.float32)}
