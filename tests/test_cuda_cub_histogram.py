"""CUB's BlockHistogram (tools/cuda/cub_blocks.py) lowered into bins zeroed over the block's
threads, a barrier and atomic adds, compiled with real g++ -fopenmp and run with 1 and 2 OpenMP
threads; the counts are compared with those computed here in Python."""

from collections import Counter

import pytest

from cuda_fixtures.build import build_and_run, kernels_code, lowered, named_rows

KERNELS = r"""
#include <cub/cub.cuh>
#define BINS 20
// 36 threads (not a power of two; more threads than the 20 bins) of 3 items each, per
// block: Histo of the first tile, then the second tile's counts added by Composite.
__global__ void histograms(const unsigned char* in, unsigned int* out) {
    typedef cub::BlockHistogram<unsigned char, 36, 3, BINS> Histogram;
    __shared__ typename Histogram::TempStorage temp;
    __shared__ unsigned int bins[BINS];
    unsigned char items[3];
    const int tile = blockIdx.x * 2 * 108;
    for (int i = 0; i < 3; ++i) items[i] = in[tile + threadIdx.x * 3 + i];
    Histogram(temp).Histo(items, bins);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += 36) out[blockIdx.x * 2 * BINS + b] = bins[b];
    __syncthreads();
    for (int i = 0; i < 3; ++i) items[i] = in[tile + 108 + threadIdx.x * 3 + i];
    Histogram(temp).Composite(items, bins);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += 36) out[(blockIdx.x * 2 + 1) * BINS + b] = bins[b];
}

// A 2-D block of 4 x 2 threads, 5 items each, 64 bins (more bins than threads), the atomic
// algorithm, and the bins zeroed by InitHistogram and counted by Composite.
__global__ void wide(const int* in, int* out) {
    typedef cub::BlockHistogram<int, 4, 5, 64, cub::BLOCK_HISTO_ATOMIC, 2> Histogram;
    __shared__ typename Histogram::TempStorage temp;
    __shared__ int bins[64];
    const int t = threadIdx.y * 4 + threadIdx.x;
    int items[5];
    for (int i = 0; i < 5; ++i) items[i] = in[t * 5 + i];
    Histogram(temp).InitHistogram(bins);
    __syncthreads();
    Histogram(temp).Composite(items, bins);
    __syncthreads();
    for (int b = t; b < 64; b += 8) out[b] = bins[b];
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
int main() {
    std::vector<unsigned char> in(3 * 216);
    for (int i = 0; i < (int)in.size(); ++i) in[i] = (unsigned char)((i * i * 7 + i) % 20);
    std::vector<unsigned int> out(3 * 2 * 20);
    cudacpu_kernels::histograms(dim3(3), dim3(36), 0, in.data(), out.data());
    std::printf("histo"); for (unsigned int x : out) std::printf(" %u", x); std::printf("\n");
    std::vector<int> wide_in(40), wide_out(64);
    for (int i = 0; i < 40; ++i) wide_in[i] = (i * 37) % 64;
    cudacpu_kernels::wide(dim3(1), dim3(4, 2), 0, wide_in.data(), wide_out.data());
    std::printf("wide"); for (int x : wide_out) std::printf(" %d", x); std::printf("\n");
    return 0;
}
"""


def expected() -> dict[str, list[int]]:
    values = [(i * i * 7 + i) % 20 for i in range(3 * 216)]
    histo = []
    for block in range(3):
        first = Counter(values[block * 216:block * 216 + 108])
        both = first + Counter(values[block * 216 + 108:(block + 1) * 216])
        histo += [first[b] for b in range(20)] + [both[b] for b in range(20)]
    wide = Counter((i * 37) % 64 for i in range(40))
    return {"histo": histo, "wide": [wide[b] for b in range(64)]}


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cub_histogram.cu")


def test_histogram_calls_are_rewritten(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for call in (".Histo(", ".Composite(", ".InitHistogram("):
        assert call not in body, call


@pytest.mark.parametrize("threads", [1, 2])
def test_block_histogram_matches_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert named_rows(out) == expected()
