import numpy as np


def index_3d(inputs, scalars):
    D, H, W = scalars["D"], scalars["H"], scalars["W"]
    z, y, x = np.meshgrid(np.arange(D), np.arange(H), np.arange(W), indexing="ij")
    tx, ty, tz = x % 8, y % 4, z % 4
    bx, by, bz = x // 8, y // 4, z // 4
    out = inputs["inp"] * (x + 2 * y + 3 * z).astype(np.float32) + (tx * 100 + ty * 10 + tz).astype(np.float32)
    return {"out": out.astype(np.float32), "block_id": (bx + 3 * (by + 4 * bz)).astype(np.int32)}
