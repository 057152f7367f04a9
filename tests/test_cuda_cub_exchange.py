"""CUB's BlockExchange (tools/cuda/cub_blocks.py) lowered through a shared tile and barriers,
compiled with real g++ -fopenmp and run with 1 and 2 OpenMP threads; each thread's items after the
exchange are compared with the arrangement computed here in Python."""

import pytest

from cuda_fixtures.build import assert_rows, build_and_run, kernels_code, lowered

KERNELS = r"""
#include <cub/block/block_exchange.cuh>

// 48 threads (not a power of two), 3 items each: a striped tile read into blocked items, and
// blocked items (in place) into a striped arrangement. Each thread writes its items in its own order.
__global__ void striped_blocked(const int* in, int* blocked, int* striped) {
    typedef cub::BlockExchange<int, 48, 3> Exchange;
    __shared__ typename Exchange::TempStorage temp;
    int a[3], b[3], c[3];
    for (int i = 0; i < 3; ++i) a[i] = c[i] = in[blockIdx.x * 144 + i * 48 + threadIdx.x];
    Exchange(temp).StripedToBlocked(a, b);
    __syncthreads();
    Exchange(temp).BlockedToStriped(c);
    for (int i = 0; i < 3; ++i) {
        blocked[blockIdx.x * 144 + threadIdx.x * 3 + i] = b[i];
        striped[blockIdx.x * 144 + threadIdx.x * 3 + i] = c[i];
    }
}

// Warp-striped arrangements on a 2-D block of 32 x 2 threads with 4 float items each.
__global__ void warp_striped(const float* in, float* blocked, float* warp_striped) {
    typedef cub::BlockExchange<float, 32, 4, false, 2> Exchange;
    __shared__ typename Exchange::TempStorage temp;
    const int t = threadIdx.y * 32 + threadIdx.x;
    float a[4], b[4], c[4];
    for (int i = 0; i < 4; ++i) a[i] = c[i] = in[t * 4 + i];
    Exchange(temp).WarpStripedToBlocked(a, b);
    __syncthreads();
    Exchange(temp).BlockedToWarpStriped(c, c);
    for (int i = 0; i < 4; ++i) { blocked[t * 4 + i] = b[i]; warp_striped[t * 4 + i] = c[i]; }
}

// Scatters by rank (a permutation of the tile) into blocked and striped arrangements, 24 threads of 2.
__global__ void scatters(const int* in, const int* ranks_in, int* blocked, int* striped) {
    typedef cub::BlockExchange<int, 24, 2> Exchange;
    __shared__ typename Exchange::TempStorage temp;
    int items[2], again[2], out[2], ranks[2];
    for (int i = 0; i < 2; ++i) { items[i] = again[i] = in[threadIdx.x * 2 + i]; ranks[i] = ranks_in[threadIdx.x * 2 + i]; }
    Exchange(temp).ScatterToBlocked(items, ranks);
    __syncthreads();
    Exchange(temp).ScatterToStriped(again, out, ranks);
    for (int i = 0; i < 2; ++i) { blocked[threadIdx.x * 2 + i] = items[i]; striped[threadIdx.x * 2 + i] = out[i]; }
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
int main() {
    {
        std::vector<int> in(288), blocked(288), striped(288);
        for (int i = 0; i < 288; ++i) in[i] = i * 3 + 1;
        cudacpu_kernels::striped_blocked(dim3(2), dim3(48), 0, in.data(), blocked.data(), striped.data());
        std::printf("blocked"); for (int x : blocked) std::printf(" %d", x); std::printf("\n");
        std::printf("striped"); for (int x : striped) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<float> in(256), blocked(256), warp(256);
        for (int i = 0; i < 256; ++i) in[i] = (float)i;
        cudacpu_kernels::warp_striped(dim3(1), dim3(32, 2), 0, in.data(), blocked.data(), warp.data());
        std::printf("warp_to_blocked"); for (float x : blocked) std::printf(" %d", (int)x); std::printf("\n");
        std::printf("blocked_to_warp"); for (float x : warp) std::printf(" %d", (int)x); std::printf("\n");
    }
    {
        std::vector<int> in(48), ranks(48), blocked(48), striped(48);
        for (int i = 0; i < 48; ++i) { in[i] = 100 + i; ranks[i] = (i * 7) % 48; }
        cudacpu_kernels::scatters(dim3(1), dim3(24), 0, in.data(), ranks.data(), blocked.data(), striped.data());
        std::printf("scatter_blocked"); for (int x : blocked) std::printf(" %d", x); std::printf("\n");
        std::printf("scatter_striped"); for (int x : striped) std::printf(" %d", x); std::printf("\n");
    }
    return 0;
}
"""


def expected() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    v = [i * 3 + 1 for i in range(288)]
    out["blocked"], out["striped"] = [], []
    for b in range(2):
        tile = v[b * 144:(b + 1) * 144]
        # thread t's items were tile[i * 48 + t] (striped): blocked, thread t's item i is the tile's t * 3 + i
        out["blocked"] += [tile[t * 3 + i] for t in range(48) for i in range(3)]
        # the same items held as blocked (thread t's item i is the tile's t * 3 + i, which is
        # tile[i * 48 + t]); striped, thread t's item i is the tile's i * 48 + t
        held = {t * 3 + i: tile[i * 48 + t] for t in range(48) for i in range(3)}
        out["striped"] += [held[i * 48 + t] for t in range(48) for i in range(3)]

    def warp_at(t: int, i: int) -> int:
        return (t // 32) * 32 * 4 + i * 32 + t % 32

    w = list(range(256))
    held = {warp_at(t, i): w[t * 4 + i] for t in range(64) for i in range(4)}
    out["warp_to_blocked"] = [held[t * 4 + i] for t in range(64) for i in range(4)]
    held = {t * 4 + i: w[t * 4 + i] for t in range(64) for i in range(4)}
    out["blocked_to_warp"] = [held[warp_at(t, i)] for t in range(64) for i in range(4)]
    tile = {(j * 7) % 48: 100 + j for j in range(48)}
    out["scatter_blocked"] = [tile[t * 2 + i] for t in range(24) for i in range(2)]
    out["scatter_striped"] = [tile[i * 24 + t] for t in range(24) for i in range(2)]
    return out


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cub_exchange.cu")


def test_exchanges_become_a_shared_tile(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for call in ("StripedToBlocked(", "BlockedToStriped(", "WarpStripedToBlocked(", "BlockedToWarpStriped(",
                 "ScatterToBlocked(", "ScatterToStriped("):
        assert "." + call not in body, call


@pytest.mark.parametrize("threads", [1, 2])
def test_block_exchange_matches_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert_rows(out, expected())
