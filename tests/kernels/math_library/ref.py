import math

import numpy as np


def math_library(inputs, scalars):
    a = inputs["x"].astype(np.float64)
    b = inputs["y"].astype(np.float64)
    a32, b32 = inputs["x"], inputs["y"]
    f32 = np.float32
    erf = np.vectorize(math.erf)
    rows = [
        np.sin(a) + np.cos(b),
        np.exp(a) - np.log(b),
        np.power(b, a) + np.sqrt(b),
        np.tanh(a) * erf((b32 - f32(2)).astype(np.float64)),
        np.arctan2(a, b),
        np.floor(a32 * f32(3)) + np.ceil(b) + np.abs(a),
        np.minimum(a, (b32 - f32(2)).astype(np.float64)) + np.maximum(a, 0.5),
        # roundf rounds half away from zero
        np.copysign(b, a) + np.trunc(a32 * f32(5)) + np.sign(b32 * 2) * np.floor(np.abs(b32 * f32(2)) + 0.5),
    ]
    return {"out": np.stack(rows).astype(np.float32)}
