import numpy as np


def histogram_global_atomics(inputs, scalars):
    nb = scalars["nbins"]
    k = (inputs["x"] * np.float32(nb)).astype(np.int64)
    k = np.clip(k, 0, nb - 1)
    return {"hist": np.bincount(k, minlength=nb).astype(np.int32)}
