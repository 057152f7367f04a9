import numpy as np


def scan_blelloch(inputs, scalars):
    x = inputs["inp"].astype(np.int64)
    out = np.empty_like(x)
    for start in range(0, x.size, 512):
        seg = x[start:start + 512]
        out[start:start + 512] = np.cumsum(seg) - seg
    return {"out": out.astype(np.int32)}
