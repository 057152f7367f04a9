import numpy as np


def syncwarp_reduction(inputs, scalars):
    x = np.zeros(47 * 128)
    x[: scalars["n"]] = inputs["x"]
    return {"partial": x.reshape(47, 128).sum(axis=1).astype(np.float32)}
