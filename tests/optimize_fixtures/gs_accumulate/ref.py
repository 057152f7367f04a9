import numpy as np


def gs_accumulate(inputs, scalars):
    x, n = inputs["x"], int(scalars["n"])
    threads = 128
    partial = np.zeros(threads, dtype=np.float32)
    for g in range(threads):
        acc = np.float32(0)
        for i in range(g, n, threads):
            v = np.float32(x[i] + np.float32(1.0e7)) if i % 4 == 0 else x[i]
            acc = np.float32(acc + np.float32(v))
        partial[g] = acc
    return {"partial": partial}
