import numpy as np


def dot_product_double(inputs, scalars):
    return {"result": np.array([np.dot(inputs["a"], inputs["b"])], dtype=np.float64)}
