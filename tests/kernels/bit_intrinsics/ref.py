import numpy as np


def _popcount(v):
    return sum(int(b) for b in bin(int(v))[2:])


def bit_intrinsics(inputs, scalars):
    u = [int(v) for v in inputs["u"]]
    f = inputs["f"]
    out = {
        "popc": [_popcount(x) for x in u],
        "clz": [32 - x.bit_length() for x in u],
        "ffs": [(x & -x).bit_length() for x in u],
        "brev": [int(format(x, "032b")[::-1], 2) for x in u],
        "mulhi": [(x * 0x9E3779B9) >> 32 for x in u],
        "mul24": [(x & 0x7FFFFF) * ((x >> 8) & 0xFF) for x in u],
        "popcll": [_popcount(x) + _popcount((x * 2654435761) & 0xFFFFFFFF) for x in u],
    }
    dtypes = {"brev": np.uint32, "mulhi": np.uint32}
    res = {k: np.array(v, dtype=np.int64).astype(dtypes.get(k, np.int32)) for k, v in out.items()}
    res["fbits"] = f.view(np.uint32).copy()
    res["from_bits"] = ((inputs["u"] & np.uint32(0x007FFFFF)) | np.uint32(0x3F800000)).view(np.float32)
    res["f2u"] = np.rint(np.abs(f) * np.float32(1000)).astype(np.uint32)
    return res
