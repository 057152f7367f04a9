import numpy as np


def template_kernels(inputs, scalars):
    x = inputs["x"]
    k = np.arange(x.size) % 2
    y = scalars["a"] * x + k
    acc = np.maximum(inputs["acc"], y) + x
    return {"y": y, "acc": acc}
