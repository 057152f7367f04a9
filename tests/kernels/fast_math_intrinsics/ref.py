import numpy as np


def fast_math_intrinsics(inputs, scalars):
    x, y, z = inputs["x"], inputs["y"], inputs["z"]
    x64, y64, z64 = x.astype(np.float64), y.astype(np.float64), z.astype(np.float64)
    f32 = np.float32
    return {
        "e": np.exp(x64).astype(f32),
        "q": (x64 / y64).astype(f32),
        "r": (1.0 / np.sqrt(y64)).astype(f32),
        "f": (x64 * y64 + z64).astype(f32),
        "s": np.clip(x * f32(0.75), 0, 1).astype(f32),
        "k": np.rint(x * f32(100)).astype(np.int32),
    }
