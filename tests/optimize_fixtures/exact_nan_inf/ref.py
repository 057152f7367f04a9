"""The kernels' reduction orders in float32, with IEEE comparisons (NaN compares false)."""

import numpy as np

BLOCK = 64


def _tree(x: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    blocks = -(-n // BLOCK)
    v = np.zeros(blocks * BLOCK, dtype=np.float32)
    v[:n] = x[:n]
    smax, ssum = v.reshape(blocks, BLOCK).copy(), v.reshape(blocks, BLOCK).copy()
    stride = BLOCK // 2
    while stride > 0:
        a, b = smax[:, :stride], smax[:, stride:2 * stride]
        smax[:, :stride] = np.where(b > a, b, a)
        ssum[:, :stride] = ssum[:, :stride] + ssum[:, stride:2 * stride]
        stride //= 2
    return smax[:, 0], ssum[:, 0]


def _warps(x: np.ndarray, n: int, threads: int):
    v = np.zeros(threads, dtype=np.float32)
    v[:n] = x[:n]
    v = v.reshape(-1, 32)
    lane = np.arange(32)
    hi = v.copy()
    for mask in (16, 8, 4, 2, 1):
        hi = np.fmax(hi, hi[:, lane ^ mask])
    lo = v.copy()
    for offset in (16, 8, 4, 2, 1):
        lo = np.fmin(lo, lo[:, np.where(lane + offset < 32, lane + offset, lane)])
    return hi.reshape(-1), lo[:, 0], np.isnan(v).sum(axis=1).astype(np.int32)


def _rows(x: np.ndarray, rows: int, k: int):
    t = x[:rows * k].reshape(rows, k)
    m = t[:, 0].copy()
    below = np.zeros(rows, dtype=np.int32)
    for j in range(1, k):
        v = t[:, j]
        m = np.where(v > m, v, m)
        below += (v < m).astype(np.int32)
    return m, below


def exact_nan_inf(inputs, scalars):
    x, n = inputs["x"], int(scalars["n"])
    with np.errstate(invalid="ignore", over="ignore"):
        tmax, tsum = _tree(x, n)
        wmax, wmin, nan_count = _warps(x, n, 1024)
        row_max, row_below = _rows(x, int(scalars["rows"]), int(scalars["k"]))
    return {"tmax": tmax, "tsum": tsum, "wmax": wmax, "wmin": wmin, "nan_count": nan_count,
            "row_max": row_max, "row_below": row_below}
