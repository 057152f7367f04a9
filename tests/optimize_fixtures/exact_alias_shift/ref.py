"""What the launches compute with the pointers aliased as the task passes them."""

import numpy as np


def exact_alias_shift(inputs, scalars):
    rows, k, n, half = (int(scalars[s]) for s in ("rows", "k", "n", "half"))
    a = inputs["a"].copy()
    # shift_kernel(in = a, out = a + 1): a[r*k + j + 1] = a[r*k + j] * 0.5 + a[r*k + j + 1], j ascending
    t = a[:rows * k].reshape(rows, k)
    for j in range(k - 1):
        t[:, j + 1] = t[:, j] * np.float32(0.5) + t[:, j + 1]
    b = inputs["b"].copy()
    # twice_kernel(in = b, out = b): the second statement reads the first one's store
    b[:n] = b[:n] * np.float32(2.0)
    b[:n] = b[:n] + b[:n]
    p = inputs["p"].copy()
    p[:half] = p[:half] * np.float32(0.25) + p[half:2 * half]
    return {"a": a, "b": b, "p": p}
