import numpy as np


def argmax_block(inputs, scalars):
    x = inputs["x"]
    vals, idxs = [], []
    for b in range(40):
        seg = x[b * 128: min((b + 1) * 128, x.size)]
        k = int(np.argmax(seg))  # first occurrence of the maximum
        vals.append(seg[k])
        idxs.append(b * 128 + k)
    return {"best_val": np.array(vals, dtype=np.float32), "best_idx": np.array(idxs, dtype=np.int32)}
