import numpy as np


def gs_cancel(inputs, scalars):
    big = np.float32(scalars["big"])
    t = (inputs["x"] + big).astype(np.float32)
    return {"y": (t - big).astype(np.float32)}
