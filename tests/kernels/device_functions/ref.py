import numpy as np


def device_functions(inputs, scalars):
    x = inputs["x"]
    t = np.clip((x[:, 0].astype(np.float64) + 0.5) / 1.0, 0.0, 1.0)
    i = np.arange(x.shape[0])
    return {"sorted": np.sort(x, axis=1), "smooth": (t * t * (3 - 2 * t)).astype(np.float32),
            "powers": ((i % 7 + 1) ** (i % 5)).astype(np.int32)}
