import numpy as np

COEFFS = [1.0, -0.5, 0.25, 0.125, -0.0625, 0.03125, 0.015625]


def constant_polynomial(inputs, scalars):
    x = inputs["x"].astype(np.float64)
    return {"y": (np.polyval(COEFFS[::-1], x) + 3.0).astype(np.float32)}
