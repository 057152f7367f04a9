import numpy as np


def ordered_sum_magnitudes(inputs, scalars):
    big, small = inputs["big"], inputs["small"]
    acc = big.copy()
    for j in range(scalars["k"]):  # float32 additions in the kernel's order
        acc = (acc + small[:, j]).astype(np.float32)
    return {"out": (acc - big).astype(np.float32)}
