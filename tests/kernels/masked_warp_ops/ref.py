import numpy as np


def masked_warp_ops(inputs, scalars):
    x = inputs["x"].astype(np.int64).reshape(-1, 32)
    lane = np.arange(32)
    low = lane < 16
    pair = np.where(low, x + x[:, lane ^ 1], x)
    bits = ((x[:, :16] > 0) * (1 << np.arange(16))).sum(axis=1)
    ballot = np.where(low, bits[:, None], 0)
    upper_max = x[:, 16:].max(axis=1)
    seg_max = np.where(low, x, upper_max[:, None])
    return {"pair_sum": pair.reshape(-1).astype(np.int32), "low_ballot": ballot.reshape(-1).astype(np.uint32),
            "seg_max": seg_max.reshape(-1).astype(np.int32)}
