import numpy as np


def atomic_exch_inc_distinct(inputs, scalars):
    nk = scalars["nkeys"]
    k = np.abs(np.fmod(inputs["keys"].astype(np.int64), nk))
    seen = np.zeros(nk, dtype=np.int32)
    seen[k] = 1
    distinct = int(np.unique(k).size)
    ticket = scalars["n"] % (scalars["wrap"] + 1)
    seen_cas = np.zeros(nk, dtype=np.int32)
    seen_cas[k] = k + 1
    return {"seen_exch": seen, "seen_cas": seen_cas, "counts": np.array([distinct, distinct], dtype=np.int32),
            "ticket": np.array([ticket], dtype=np.uint32)}
