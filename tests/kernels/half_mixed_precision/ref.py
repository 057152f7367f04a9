import numpy as np


def half_mixed_precision(inputs, scalars):
    a = inputs["a"].astype(np.float32)
    b = inputs["b"].astype(np.float32)
    acc = np.zeros(a.shape[0], dtype=np.float32)
    for k in range(3):
        acc = (acc + a[:, k] * b[:, k]).astype(np.float32)
    return {"out": acc.astype(np.float16), "out_f": acc}
