import numpy as np


def heat_multi_step(inputs, scalars):
    u = inputs["u"].astype(np.float64)
    a = np.float64(np.float32(scalars["alpha"]))
    for _ in range(4):
        p = np.concatenate([u[:1], u, u[-1:]])
        u = u + a * (p[:-2] - 2.0 * u + p[2:])
    return {"u": u.astype(np.float32)}
