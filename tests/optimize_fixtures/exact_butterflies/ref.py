"""Each butterfly step in the kernel's order, in float32 (numpy adds two float32 arrays in float32),
with IEEE comparisons (NaN compares false). The pairs of one step are disjoint, so a step computed
for all pairs at once is the kernel's step."""

import numpy as np

BLOCK = 64
BIG = np.float32(1048576.0)
LANE = np.arange(BLOCK)


def _lower(j: int) -> np.ndarray:
    """The threads whose partner t ^ j lies above them."""
    return LANE[(LANE ^ j) > LANE]


def _bitonic(v: np.ndarray) -> np.ndarray:
    s = v.reshape(-1, BLOCK).copy()
    k = 2
    while k <= BLOCK:
        j = k // 2
        while j > 0:
            t = _lower(j)
            a, b = s[:, t], s[:, t ^ j]
            swap = (a > b) == ((t & k) == 0)
            s[:, t], s[:, t ^ j] = np.where(swap, b, a), np.where(swap, a, b)
            j //= 2
        k *= 2
    return s.reshape(-1)


def _walsh(x: np.ndarray) -> np.ndarray:
    s = x.reshape(-1, BLOCK) + np.where(LANE & 1, -BIG, BIG).astype(np.float32)
    h = 1
    while h < BLOCK:
        t = _lower(h)
        a, b = s[:, t], s[:, t ^ h]
        s[:, t], s[:, t ^ h] = a + b, a - b
        h *= 2
    return s.reshape(-1)


def exact_butterflies(inputs, scalars):
    with np.errstate(invalid="ignore", over="ignore"):
        return {"sorted": _bitonic(inputs["special"]), "walsh": _walsh(inputs["x"])}
