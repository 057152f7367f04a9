import numpy as np


def complex_mul_float2(inputs, scalars):
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    za = a[:, 0] + 1j * a[:, 1]
    zb = b[:, 0] + 1j * b[:, 1]
    zc = za * zb
    return {"c": np.stack([zc.real, zc.imag], axis=1).astype(np.float32)}
