import numpy as np


def warp_vote(inputs, scalars):
    n = scalars["n"]
    x = inputs["x"]
    ballots, anys, alls, active = [], [], [], []
    for blk in range(50):
        for w, lanes in ((0, 32), (1, 16)):
            b = 0
            all_big = True
            for lane in range(lanes):
                i = blk * 48 + w * 32 + lane
                if i < n and x[i] > 0:
                    b |= 1 << lane
                if i < n and not x[i] > -90:
                    all_big = False
            ballots.append(b)
            anys.append(int(b != 0))
            alls.append(int(all_big))
            active.append((1 << lanes) - 1)
    return {"ballots": np.array(ballots, dtype=np.uint32), "anys": np.array(anys, dtype=np.int32),
            "alls": np.array(alls, dtype=np.int32), "active": np.array(active, dtype=np.uint32)}
