"""__match_any_sync / __match_all_sync lowered as lockstep exchanges of the warp, compiled with
real g++ -fopenmp, run with 1 and 2 OpenMP threads and compared with Python."""

import pytest

from tools.cuda import lower_source

from cuda_fixtures.build import build_and_run

KERNELS = r"""
// Group lanes by key (a histogram's usual idiom): the lowest lane of each group adds its size.
__global__ void count_keys(const int* keys, unsigned* peers, int* counts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int key = keys[i];
    unsigned same = __match_any_sync(0xffffffffu, key);
    peers[i] = same;
    int lane = threadIdx.x % 32;
    if (lane == __ffs(same) - 1) atomicAdd(&counts[key], __popc(same));
}

// Whole-warp agreement on a float, and a partial mask.
__global__ void agree(const float* v, unsigned* masks, int* preds, unsigned* lower_half) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pred;
    masks[i] = __match_all_sync(0xffffffffu, v[i], &pred);
    preds[i] = pred;
    lower_half[i] = __match_any_sync(0x0000ffffu, v[i]);
}
"""

MAIN = r"""
#include <cstdio>
#include <vector>
int main() {
    std::vector<int> keys(128), counts(5);
    std::vector<unsigned> peers(128);
    for (int i = 0; i < 128; ++i) keys[i] = (i * 7 + i / 32) % 5;
    cudacpu_kernels::count_keys(dim3(2), dim3(64), 0, keys.data(), peers.data(), counts.data());
    std::printf("peers"); for (unsigned x : peers) std::printf(" %u", x); std::printf("\n");
    std::printf("counts"); for (int x : counts) std::printf(" %d", x); std::printf("\n");
    std::vector<float> v(64, 2.5f);
    for (int i = 32; i < 64; ++i) v[i] = i < 40 ? 1.0f : 3.0f;  // the second warp disagrees
    std::vector<unsigned> masks(64), lower(64);
    std::vector<int> preds(64);
    cudacpu_kernels::agree(dim3(1), dim3(64), 0, v.data(), masks.data(), preds.data(), lower.data());
    std::printf("masks"); for (unsigned x : masks) std::printf(" %u", x); std::printf("\n");
    std::printf("preds"); for (int x : preds) std::printf(" %d", x); std::printf("\n");
    std::printf("lower"); for (unsigned x : lower) std::printf(" %u", x); std::printf("\n");
}
"""


def expected() -> dict[str, list[int]]:
    keys = [(i * 7 + i // 32) % 5 for i in range(128)]
    peers = []
    for i in range(128):
        warp = range(i - i % 32, i - i % 32 + 32)
        peers.append(sum(1 << (j % 32) for j in warp if keys[j] == keys[i]))
    v = [2.5] * 32 + [1.0 if i < 40 else 3.0 for i in range(32, 64)]
    lower = []
    for i in range(64):
        base = i - i % 32
        lower.append(sum(1 << (j - base) for j in range(base, base + 16) if v[j] == v[i]))
    return {"peers": peers, "counts": [keys.count(k) for k in range(5)],
            "masks": [0xFFFFFFFF] * 32 + [0] * 32, "preds": [1] * 32 + [0] * 32, "lower": lower}


@pytest.mark.parametrize("threads", [1, 2])
def test_match_intrinsics_match_python(tmp_path, threads):
    mod = lower_source(KERNELS, "match.cu")
    assert not mod.unsupported, mod.unsupported
    out = build_and_run(mod.cpp, MAIN, tmp_path, threads=threads)
    got = {line.split()[0]: [int(x) for x in line.split()[1:]] for line in out.splitlines()}
    assert got == expected()
