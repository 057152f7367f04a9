import numpy as np


def atomic_int_ops(inputs, scalars):
    v = inputs["v"].astype(np.int64).reshape(-1, 16)
    u = inputs["u"].astype(np.uint64).reshape(-1, 16)
    m32 = np.uint64(0xFFFFFFFF)
    out = {
        "iadd": (inputs["iadd"] + v.sum(axis=0)).astype(np.int32),
        "isub": (inputs["isub"] - v.sum(axis=0)).astype(np.int32),
        "imax": np.maximum(inputs["imax"], v.max(axis=0)).astype(np.int32),
        "imin": np.minimum(inputs["imin"], v.min(axis=0)).astype(np.int32),
        "umax": np.maximum(inputs["umax"], u.max(axis=0)).astype(np.uint32),
        "uand": (inputs["uand"] & np.bitwise_and.reduce(u | np.uint64(0x0F0F0F0F), axis=0)).astype(np.uint32),
        "uor": (inputs["uor"] | np.bitwise_or.reduce(u & np.uint64(0x00FF00FF), axis=0)).astype(np.uint32),
        "uxor": (inputs["uxor"] ^ np.bitwise_xor.reduce(u, axis=0)).astype(np.uint32),
        "usub": ((inputs["usub"].astype(np.uint64) - (u.sum(axis=0) & m32)) & m32).astype(np.uint32),
    }
    return out
