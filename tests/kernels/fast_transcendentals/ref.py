import numpy as np


def fast_transcendentals(inputs, scalars):
    a = inputs["x"].astype(np.float64)
    b = inputs["y"].astype(np.float64)
    rows = [np.sin(a) * np.cos(a), np.log(b) + b ** 0.75, np.tan(a * 0.5), np.exp2(a) - np.log2(b),
            a * b + 1.0 / b, np.sqrt(b) + a / b]
    return {"out": np.stack(rows).astype(np.float32)}
