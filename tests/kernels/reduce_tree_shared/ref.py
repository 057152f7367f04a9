import numpy as np


def reduce_tree_shared(inputs, scalars):
    x = inputs["x"].astype(np.float64)
    per_block = 512
    blocks = -(-x.size // per_block)
    padded = np.zeros(blocks * per_block)
    padded[: x.size] = x
    return {"partial": padded.reshape(blocks, per_block).sum(axis=1).astype(np.float32)}
