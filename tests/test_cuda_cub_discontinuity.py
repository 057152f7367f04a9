"""CUB's BlockDiscontinuity (tools/cuda/cub_blocks.py) lowered through shared slots of each
thread's first and last items and barriers, compiled with real g++ -fopenmp and run with 1 and 2
OpenMP threads; the flags are compared with those computed here in Python."""

import pytest

from cuda_fixtures.build import assert_rows, build_and_run, kernels_code, lowered

KERNELS = r"""
#include <cub/block/block_discontinuity.cuh>
struct Apart { __device__ bool operator()(int a, int b) const { return b - a > 2 || a - b > 2; } };

// 40 threads (not a power of two) of 3 items: heads (the tile's first set, then from the previous
// tile's last item), tails from the next tile's first item, and heads and tails with a predecessor.
__global__ void flags(const int* in, int* heads, int* heads_pred, int* tails_succ, int* both_heads, int* both_tails,
                      int n) {
    typedef cub::BlockDiscontinuity<int, 40> Flags;
    __shared__ typename Flags::TempStorage temp;
    const int tile = blockIdx.x * 120;
    int items[3], h[3], hp[3], ts[3], bh[3], bt[3];
    for (int i = 0; i < 3; ++i) items[i] = in[tile + threadIdx.x * 3 + i];
    Flags(temp).FlagHeads(h, items, cub::Inequality());
    __syncthreads();
    int before = blockIdx.x > 0 ? in[tile - 1] : items[0];
    int after = tile + 120 < n ? in[tile + 120] : -1000;
    Flags(temp).FlagHeads(hp, items, Apart(), before);
    __syncthreads();
    Flags(temp).FlagTails(ts, items, cub::Inequality(), after);
    __syncthreads();
    Flags(temp).FlagHeadsAndTails(bh, before, bt, items, Apart());
    for (int i = 0; i < 3; ++i) {
        const int at = tile + threadIdx.x * 3 + i;
        heads[at] = h[i]; heads_pred[at] = hp[i]; tails_succ[at] = ts[i]; both_heads[at] = bh[i]; both_tails[at] = bt[i];
    }
}

// Heads and tails together, of the tile alone and with both neighbours, on 2-D blocks of 6 x 4 with
// 2 bool flags per item.
__global__ void both(const float* in, bool* heads, bool* tails, bool* heads_both, bool* tails_both) {
    typedef cub::BlockDiscontinuity<float, 6, 4> Flags;
    __shared__ typename Flags::TempStorage temp;
    const int t = threadIdx.y * 6 + threadIdx.x;
    float items[2];
    bool h[2], e[2], hb[2], eb[2];
    for (int i = 0; i < 2; ++i) items[i] = in[t * 2 + i];
    Flags(temp).FlagHeadsAndTails(h, e, items, cub::Inequality());
    __syncthreads();
    Flags(temp).FlagHeadsAndTails(hb, 5.0f, eb, 2.0f, items, cub::Inequality());
    for (int i = 0; i < 2; ++i) { heads[t * 2 + i] = h[i]; tails[t * 2 + i] = e[i]; heads_both[t * 2 + i] = hb[i];
                                  tails_both[t * 2 + i] = eb[i]; }
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
int main() {
    {
        const int n = 240;
        std::vector<int> in(n), h(n), hp(n), ts(n), bh(n), bt(n);
        for (int i = 0; i < n; ++i) in[i] = (i / 3) % 5 == 0 ? i / 4 : (i * 7) % 9;
        cudacpu_kernels::flags(dim3(2), dim3(40), 0, in.data(), h.data(), hp.data(), ts.data(), bh.data(), bt.data(), n);
        std::printf("heads"); for (int x : h) std::printf(" %d", x); std::printf("\n");
        std::printf("heads_pred"); for (int x : hp) std::printf(" %d", x); std::printf("\n");
        std::printf("tails_succ"); for (int x : ts) std::printf(" %d", x); std::printf("\n");
        std::printf("both_heads"); for (int x : bh) std::printf(" %d", x); std::printf("\n");
        std::printf("both_tails"); for (int x : bt) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<float> in(48);
        bool h[48], e[48], hb[48], eb[48];
        for (int i = 0; i < 48; ++i) in[i] = (float)((i * i) % 7 / 3);
        in[0] = 5.0f; in[47] = 1.0f;
        cudacpu_kernels::both(dim3(1), dim3(6, 4), 0, in.data(), h, e, hb, eb);
        std::printf("h"); for (bool x : h) std::printf(" %d", (int)x); std::printf("\n");
        std::printf("e"); for (bool x : e) std::printf(" %d", (int)x); std::printf("\n");
        std::printf("hb"); for (bool x : hb) std::printf(" %d", (int)x); std::printf("\n");
        std::printf("eb"); for (bool x : eb) std::printf(" %d", (int)x); std::printf("\n");
    }
    return 0;
}
"""


def heads_of(tile: list, op, predecessor=None) -> list[int]:
    """CUB's head flags: op(previous item, item); the tile's first from its predecessor, or set."""
    first = 1 if predecessor is None else int(op(predecessor, tile[0]))
    return [first] + [int(op(tile[j - 1], tile[j])) for j in range(1, len(tile))]


def tails_of(tile: list, op, successor=None) -> list[int]:
    """CUB's tail flags: op(item, next item); the tile's last from its successor, or set."""
    last = 1 if successor is None else int(op(tile[-1], successor))
    return [int(op(tile[j], tile[j + 1])) for j in range(len(tile) - 1)] + [last]


def expected() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {k: [] for k in ("heads", "heads_pred", "tails_succ", "both_heads", "both_tails")}
    n = 240
    v = [i // 4 if (i // 3) % 5 == 0 else (i * 7) % 9 for i in range(n)]

    def unequal(a, b):
        return a != b

    def apart(a, b):
        return abs(b - a) > 2

    for b in range(2):
        tile = v[b * 120:(b + 1) * 120]
        before = v[b * 120 - 1] if b > 0 else tile[0]
        after = v[(b + 1) * 120] if (b + 1) * 120 < n else -1000
        out["heads"] += heads_of(tile, unequal)
        out["heads_pred"] += heads_of(tile, apart, before)
        out["tails_succ"] += tails_of(tile, unequal, after)
        out["both_heads"] += heads_of(tile, apart, before)
        out["both_tails"] += tails_of(tile, apart)
    f = [float((i * i) % 7 // 3) for i in range(48)]
    f[0], f[47] = 5.0, 1.0
    out["h"] = heads_of(f, unequal)
    out["e"] = tails_of(f, unequal)
    out["hb"] = heads_of(f, unequal, 5.0)
    out["eb"] = tails_of(f, unequal, 2.0)
    return out


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cub_discontinuity.cu")


def test_flags_become_shared_slots(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for call in (".FlagHeads(", ".FlagTails(", ".FlagHeadsAndTails("):
        assert call not in body, call


@pytest.mark.parametrize("threads", [1, 2])
def test_block_discontinuity_matches_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert_rows(out, expected())
