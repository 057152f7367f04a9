import numpy as np


def sync_in_uniform_branch(inputs, scalars):
    n, mode = scalars["n"], scalars["mode"]
    v = np.zeros(8 * 256, dtype=np.float32)
    v[:n] = inputs["x"]
    y = np.empty_like(v)
    t = np.arange(256)
    for b in range(8):
        vb = v[b * 256:(b + 1) * 256]
        s = vb[(t + 1) % 256] + vb if b % 2 == 0 else vb[255 - t] * vb
        if mode > 0:
            s = s[(t + mode) % 256] - vb
        y[b * 256:(b + 1) * 256] = s + vb
    return {"y": y[:n]}
