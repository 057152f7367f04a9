"""The kernels' own association orders, in float32 (numpy adds two float32 arrays in float32)."""

import numpy as np

BIG = np.float32(1048576.0)
BLOCK = 64


def _signed_big(count: int) -> np.ndarray:
    return np.where(np.arange(count) % 2 == 1, -BIG, BIG).astype(np.float32)


def _tree(x: np.ndarray, n: int) -> np.ndarray:
    blocks = -(-n // BLOCK)
    s = np.zeros(blocks * BLOCK, dtype=np.float32)
    s[:n] = x[:n]
    s = s.reshape(blocks, BLOCK) + _signed_big(BLOCK)
    stride = BLOCK // 2
    while stride > 0:
        s[:, :stride] = s[:, :stride] + s[:, stride:2 * stride]
        stride //= 2
    return s[:, 0]


def _warps(x: np.ndarray, n: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    v = np.zeros(threads, dtype=np.float32)
    v[:n] = x[:n]
    v = v.reshape(-1, 32) + _signed_big(32)
    lane = np.arange(32)
    d = v.copy()
    for offset in (16, 8, 4, 2, 1):  # __shfl_down_sync: a lane past the end reads its own value
        src = np.where(lane + offset < 32, lane + offset, lane)
        d = d + d[:, src]
    b = v.copy()
    for mask in (16, 8, 4, 2, 1):
        b = b + b[:, lane ^ mask]
    return d[:, 0], b.reshape(-1)


def _serial(x: np.ndarray, rows: int, k: int) -> np.ndarray:
    terms = x[:rows * k].reshape(rows, k) + _signed_big(k)
    acc = np.zeros(rows, dtype=np.float32)
    for j in range(k):
        acc = acc + terms[:, j]
    return acc


def exact_float_sums(inputs, scalars):
    x, n = inputs["x"], int(scalars["n"])
    down, butterfly = _warps(x, n, 1024)
    return {
        "tree_out": _tree(x, n),
        "down_out": down,
        "xor_out": butterfly,
        "serial_out": _serial(x, int(scalars["rows"]), int(scalars["k"])),
    }
