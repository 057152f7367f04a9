import numpy as np


def half2_vector_ops(inputs, scalars):
    h = np.float16
    a, b = inputs["a"], inputs["b"]
    one = np.array([1.0, -1.0], dtype=h)
    inner = (one + (a * one).astype(h)).astype(h)
    # fma rounds once: compute exactly in float64, round to half
    r = (a.astype(np.float64) * b.astype(np.float64) + inner.astype(np.float64)).astype(h)
    s = r[:, 0].astype(np.float32) + r[:, 1].astype(np.float32)
    return {"c": r, "lo_hi_sum": s.astype(np.float32)}
