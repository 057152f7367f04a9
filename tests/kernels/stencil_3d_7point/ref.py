import numpy as np


def stencil_3d_7point(inputs, scalars):
    u = inputs["u"].astype(np.float64)
    out = np.zeros_like(u)
    c = u[1:-1, 1:-1, 1:-1]
    out[1:-1, 1:-1, 1:-1] = (u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:] + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
                             + u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1] - 6.0 * c)
    return {"out": out.astype(np.float32)}
