import numpy as np


def gather_scatter(inputs, scalars):
    n, m, stride = scalars["n"], scalars["m"], scalars["stride"]
    g = inputs["table"][inputs["idx"].astype(np.int64) % m]
    s = np.empty_like(g)
    s[(np.arange(n, dtype=np.int64) * stride) % n] = np.float32(2) * g
    return {"gathered": g, "scattered": s}
