import numpy as np


def syncthreads_count_or_and(inputs, scalars):
    x = inputs["x"]
    counts, anys, alls = [], [], []
    for b in range(8):
        seg = x[b * 128:(b + 1) * 128]
        counts.append(int((seg > 0).sum()))
        anys.append(int((seg > 90).any()))
        alls.append(int((seg > -95).all()))
    return {"counts": np.array(counts, dtype=np.int32), "anys": np.array(anys, dtype=np.int32),
            "alls": np.array(alls, dtype=np.int32)}
