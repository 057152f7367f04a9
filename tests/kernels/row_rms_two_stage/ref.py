import numpy as np


def row_rms_two_stage(inputs, scalars):
    x = inputs["x"].astype(np.float64)
    scale = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-5)
    return {"y": (x * scale).astype(np.float32)}
