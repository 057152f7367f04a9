import numpy as np


def runs_transpose(inputs, scalars):
    x = inputs["x"].astype(np.float32)
    b = inputs["b"].astype(np.float32)
    return {"T_transpose": np.ascontiguousarray(x.transpose(1, 0, 2)),
            "T_add": (x.reshape(-1) + np.tile(b, 60)).astype(np.float32).reshape(6, 10, 12),
            "T_up": np.repeat(np.repeat(x.reshape(60, 12), 2, axis=0), 2, axis=1)}
