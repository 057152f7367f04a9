import numpy as np


def threadfence_last_block(inputs, scalars):
    return {"counter": np.zeros(1, dtype=np.uint32),
            "total": np.array([inputs["x"].astype(np.float64).sum()], dtype=np.float32)}
