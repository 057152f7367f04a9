"""CUB's BlockRadixSort (tools/cuda/cub_blocks.py) lowered through shared slots and barriers,
compiled with real g++ -fopenmp and run with 1 and 2 OpenMP threads; each sorted tile is compared
with a stable sort computed here in Python by CUB's radix order (signed keys by their flipped sign
bit, floats by their sign-flipped bits or all bits flipped, -0.0 as +0.0)."""

import struct

import pytest

from cuda_fixtures.build import assert_rows, build_and_run, kernels_code, lowered

KERNELS = r"""
#include <cub/block/block_radix_sort.cuh>

// Unsigned keys alone, 3 per thread on 40 threads (not a power of two), sorted into a blocked
// arrangement; then the same keys by their bits [4, 12) only (equal digits keep their order).
__global__ void sort_keys(const unsigned int* in, unsigned int* out, unsigned int* by_bits) {
    typedef cub::BlockRadixSort<unsigned int, 40, 3> Sort;
    __shared__ typename Sort::TempStorage temp;
    unsigned int keys[3], again[3];
    for (int i = 0; i < 3; ++i) keys[i] = again[i] = in[blockIdx.x * 120 + threadIdx.x * 3 + i];
    Sort(temp).Sort(keys);
    for (int i = 0; i < 3; ++i) out[blockIdx.x * 120 + threadIdx.x * 3 + i] = keys[i];
    __syncthreads();
    Sort(temp).Sort(again, 4, 12);
    for (int i = 0; i < 3; ++i) by_bits[blockIdx.x * 120 + threadIdx.x * 3 + i] = again[i];
}

// Signed keys with their positions as values, descending, into a striped arrangement, on a 2-D
// block of 8 x 5 threads with 4 items each (in a kernel template).
template <typename K, int X, int Y, int N>
__global__ void sort_pairs_descending(const K* in, K* keys_out, int* values_out) {
    typedef cub::BlockRadixSort<K, X, N, int, 4, true, cub::BLOCK_SCAN_WARP_SCANS, cudaSharedMemBankSizeFourByte, Y> Sort;
    __shared__ typename Sort::TempStorage temp;
    const int t = threadIdx.y * X + threadIdx.x, tile = blockIdx.x * X * Y * N;
    K keys[N];
    int values[N];
    for (int i = 0; i < N; ++i) { keys[i] = in[tile + t * N + i]; values[i] = t * N + i; }
    Sort(temp).SortDescendingBlockedToStriped(keys, values);
    for (int i = 0; i < N; ++i) { keys_out[tile + i * X * Y + t] = keys[i]; values_out[tile + i * X * Y + t] = values[i]; }
}

// Float keys (negative, zeros of both signs, ties) with values, ascending and blocked; then
// ascending into a striped arrangement, and descending, of keys alone.
__global__ void sort_floats(const float* in, float* sorted, int* positions, float* striped, float* descending) {
    typedef cub::BlockRadixSort<float, 24, 2, int> Sort;
    __shared__ typename Sort::TempStorage temp;
    float keys[2], more[2], less[2];
    int values[2];
    for (int i = 0; i < 2; ++i) {
        keys[i] = more[i] = less[i] = in[threadIdx.x * 2 + i];
        values[i] = threadIdx.x * 2 + i;
    }
    Sort(temp).Sort(keys, values, 0, 32);
    __syncthreads();
    Sort(temp).SortBlockedToStriped(more);
    __syncthreads();
    Sort(temp).SortDescending(less);
    for (int i = 0; i < 2; ++i) {
        sorted[threadIdx.x * 2 + i] = keys[i];
        positions[threadIdx.x * 2 + i] = values[i];
        striped[i * 24 + threadIdx.x] = more[i];
        descending[threadIdx.x * 2 + i] = less[i];
    }
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
#include <cstring>
static unsigned int bits_of(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
int main() {
    {
        std::vector<unsigned int> in(240), out(240), by_bits(240);
        for (int i = 0; i < 240; ++i) in[i] = (unsigned int)(i * 2654435761u) ^ (i % 7 == 0 ? 0x80000000u : 0u);
        cudacpu_kernels::sort_keys(dim3(2), dim3(40), 0, in.data(), out.data(), by_bits.data());
        std::printf("keys"); for (unsigned int x : out) std::printf(" %u", x); std::printf("\n");
        std::printf("by_bits"); for (unsigned int x : by_bits) std::printf(" %u", x); std::printf("\n");
    }
    {
        std::vector<int> in(320), keys(320), values(320);
        for (int i = 0; i < 320; ++i) in[i] = (i * 7919) % 61 - 30;
        cudacpu_kernels::sort_pairs_descending<int, 8, 5, 4>(dim3(2), dim3(8, 5), 0, in.data(), keys.data(), values.data());
        std::printf("pair_keys"); for (int x : keys) std::printf(" %d", x); std::printf("\n");
        std::printf("pair_values"); for (int x : values) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<float> in(48), sorted(48), striped(48), descending(48);
        std::vector<int> positions(48);
        for (int i = 0; i < 48; ++i) in[i] = (float)((i * 37) % 23 - 11) * 0.75f;
        in[5] = -0.0f; in[9] = 0.0f; in[30] = -0.0f; in[40] = 1e30f; in[41] = -1e-30f;
        cudacpu_kernels::sort_floats(dim3(1), dim3(24), 0, in.data(), sorted.data(), positions.data(), striped.data(),
                                     descending.data());
        std::printf("floats"); for (float x : sorted) std::printf(" %u", bits_of(x)); std::printf("\n");
        std::printf("positions"); for (int x : positions) std::printf(" %d", x); std::printf("\n");
        std::printf("striped"); for (float x : striped) std::printf(" %u", bits_of(x)); std::printf("\n");
        std::printf("descending"); for (float x : descending) std::printf(" %u", bits_of(x)); std::printf("\n");
    }
    return 0;
}
"""


def radix_order(key, kind: str, bits: int = 32) -> int:
    """CUB's radix order of a key, as an unsigned integer."""
    if kind == "float":
        b = struct.unpack("<I", struct.pack("<f", key))[0]
        b = (~b & 0xFFFFFFFF) if b & 0x80000000 else b | 0x80000000
        return 0x80000000 if b == 0x7FFFFFFF else b  # -0.0 as +0.0
    if kind == "int":
        return (key & 0xFFFFFFFF) ^ 0x80000000
    return key


def stable_sort(keys: list, kind: str, descending: bool = False, begin: int = 0, end: int = 32) -> list[int]:
    """Positions of keys in their stable order by the bits [begin, end) of their radix order."""
    def digit(i: int) -> int:
        d = (radix_order(keys[i], kind) >> begin) & ((1 << (end - begin)) - 1)
        return -d if descending else d
    return sorted(range(len(keys)), key=digit)


def float_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def expected() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    u = [((i * 2654435761) & 0xFFFFFFFF) ^ (0x80000000 if i % 7 == 0 else 0) for i in range(240)]
    out["keys"], out["by_bits"] = [], []
    for b in range(2):
        tile = u[b * 120:(b + 1) * 120]
        out["keys"] += [tile[j] for j in stable_sort(tile, "unsigned")]
        out["by_bits"] += [tile[j] for j in stable_sort(tile, "unsigned", begin=4, end=12)]
    s = [(i * 7919) % 61 - 30 for i in range(320)]
    out["pair_keys"], out["pair_values"] = [], []
    for b in range(2):
        tile = s[b * 160:(b + 1) * 160]
        order = stable_sort(tile, "int", descending=True)
        # thread t's item i holds rank i * 40 + t; it is stored at i * 40 + t: the tile in rank order
        out["pair_keys"] += [tile[j] for j in order]
        out["pair_values"] += order
    f = [float(struct.unpack("<f", struct.pack("<f", ((i * 37) % 23 - 11) * 0.75))[0]) for i in range(48)]
    f[5], f[9], f[30] = -0.0, 0.0, -0.0
    f[40] = struct.unpack("<f", struct.pack("<f", 1e30))[0]
    f[41] = struct.unpack("<f", struct.pack("<f", -1e-30))[0]
    order = stable_sort(f, "float")
    out["floats"] = [float_bits(f[j]) for j in order]
    out["positions"] = order
    out["striped"] = out["floats"]  # stored back at each item's striped rank
    out["descending"] = [float_bits(f[j]) for j in stable_sort(f, "float", descending=True)]
    return out


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cub_radix_sort.cu")


def test_sorts_become_shared_slots_and_barriers(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for call in (".Sort(", ".SortDescending(", ".SortBlockedToStriped(", ".SortDescendingBlockedToStriped("):
        assert call not in body, call


@pytest.mark.parametrize("threads", [1, 2])
def test_block_radix_sort_matches_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert_rows(out, expected())
