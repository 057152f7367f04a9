import numpy as np


def shfl_width_patterns(inputs, scalars):
    n = scalars["n"]
    total = 32 * 128
    v = np.zeros(total, dtype=np.float32)
    v[:n] = inputs["x"]
    w = v.reshape(-1, 32)
    lane = np.arange(32)
    rot = w[:, (lane + 3) % 32]
    bcast = w[:, (lane // 8) * 8 + 5]
    src = np.where(lane % 8 + 2 < 8, lane + 2, lane)
    down = w[:, src]
    seg = np.cumsum(v.astype(np.float64).reshape(-1, 16), axis=1)
    out = {"rot": rot, "bcast": bcast, "down": down, "seg_scan": seg}
    return {k: a.reshape(-1)[:n].astype(np.float32) for k, a in out.items()}
