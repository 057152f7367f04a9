import numpy as np


def nan_inf_propagation(inputs, scalars):
    a, b = inputs["x"], inputs["y"]
    with np.errstate(invalid="ignore", over="ignore"):
        return {
            "sel_max": np.where(a > b, a, b),
            "fmax_out": np.fmax(a, b),
            "sum": (a + b).astype(np.float32),
            "times_zero": (a * np.float32(0)).astype(np.float32),
            "self_sub": (a - a).astype(np.float32),
            "is_nan": np.isnan(a).astype(np.int32),
            "sel_min": np.where(a < b, a, b),
        }
