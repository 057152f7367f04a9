import numpy as np


def dynamic_shared_aliasing(inputs, scalars):
    n = scalars["n"]
    x = np.zeros(24 * 128, dtype=np.float32)
    k = np.zeros(24 * 128, dtype=np.float32)
    x[:n] = inputs["x"]
    k[:n] = inputs["keys"]
    xb, kb = x.reshape(24, 128), k.reshape(24, 128)
    out = np.roll(xb, -1, axis=1) * np.roll(kb, -2, axis=1)
    return {"out": out.reshape(-1)[:n].astype(np.float32)}
