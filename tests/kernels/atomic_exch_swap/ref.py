import numpy as np


def atomic_exch_swap(inputs, scalars):
    n = scalars["n"]
    u = inputs["u"].astype(np.uint64)
    bmax, band, bor = [], [], []
    for blk in range(8):
        seg = u[blk * 128: min(n, (blk + 1) * 128)]
        bmax.append(seg.max())
        band.append(np.bitwise_and.reduce(seg | np.uint64(0xF0F0F0F0)))
        bor.append(np.bitwise_or.reduce(seg & np.uint64(0x0000FFFF)))
    return {"a": (inputs["b"] * np.float32(2)).astype(np.float32), "old_a": inputs["a"].copy(),
            "block_max": np.array(bmax, dtype=np.uint32),
            "block_and": np.array(band, dtype=np.uint64).astype(np.uint32).view(np.int32),
            "block_or": np.array(bor, dtype=np.uint32).view(np.int32)}
