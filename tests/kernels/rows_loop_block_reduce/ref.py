import numpy as np


def rows_loop_block_reduce(inputs, scalars):
    x = inputs["x"].astype(np.float64)
    sums = x.sum(axis=1)
    centered = x - (sums / scalars["cols"])[:, None]
    skipped = np.arange(x.shape[0]) % 5 == 4
    sums[skipped] = 0.0
    centered[skipped] = 0.0
    return {"row_sums": sums.astype(np.float32), "centered": centered.astype(np.float32)}
