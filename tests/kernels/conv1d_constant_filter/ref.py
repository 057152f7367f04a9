import numpy as np

FILTER = np.array([0.05, 0.1, -0.15, 0.2, 0.4, 0.2, -0.15, 0.1, 0.05], dtype=np.float32).astype(np.float64)


def conv1d_constant_filter(inputs, scalars):
    n = scalars["n"]
    x = np.pad(inputs["inp"].astype(np.float64), 4)
    out = np.zeros(n)
    for k in range(9):
        out += FILTER[k] * x[k: k + n]
    return {"out": out.astype(np.float32)}
