"""CUB's BlockAdjacentDifference (tools/cuda/cub_blocks.py) lowered through shared slots of each
thread's first and last items and barriers, compiled with real g++ -fopenmp and run with 1 and 2
OpenMP threads; the differences are compared with those computed here in Python."""

import pytest

from cuda_fixtures.build import assert_rows, build_and_run, kernels_code, lowered

KERNELS = r"""
#include <cub/block/block_adjacent_difference.cuh>
struct Weighted { __device__ int operator()(int a, int b) const { return 3 * a - b; } };

#define KINDS 7
// 24 threads (not a power of two) of 4 items, two tiles: left differences in place, with the
// previous tile's last item, of a partial tile (with and without a predecessor); right
// differences, with the next tile's first item, and of a partial tile.
__global__ void differences(const int* in, int* out, int n) {
    typedef cub::BlockAdjacentDifference<int, 24> Adjacent;
    __shared__ typename Adjacent::TempStorage temp;
    const int tile = blockIdx.x * 96, valid = n - tile < 96 ? n - tile : 96;
    int items[4], r[KINDS][4];
    for (int i = 0; i < 4; ++i) items[i] = in[tile + threadIdx.x * 4 + i];
    int before = blockIdx.x > 0 ? in[tile - 1] : 0, after = in[tile + 96];
    Adjacent(temp).SubtractLeft(items, r[1], Weighted(), before);
    __syncthreads();
    Adjacent(temp).SubtractLeftPartialTile(items, r[2], cub::Difference(), valid);
    __syncthreads();
    Adjacent(temp).SubtractLeftPartialTile(items, r[3], Weighted(), valid, before);
    __syncthreads();
    Adjacent(temp).SubtractRight(items, r[4], cub::Difference());
    __syncthreads();
    Adjacent(temp).SubtractRight(items, r[5], Weighted(), after);
    __syncthreads();
    Adjacent(temp).SubtractRightPartialTile(items, r[6], Weighted(), valid);
    __syncthreads();
    Adjacent(temp).SubtractLeft(items, items, cub::Difference());
    for (int i = 0; i < 4; ++i) r[0][i] = items[i];
    for (int k = 0; k < KINDS; ++k)
        for (int i = 0; i < 4; ++i) out[(k * 2 + blockIdx.x) * 96 + threadIdx.x * 4 + i] = r[k][i];
}

// Float items into double differences, on a 2-D block of 5 x 3 threads with 2 items each.
__global__ void float_differences(const float* in, double* left, double* right) {
    typedef cub::BlockAdjacentDifference<float, 5, 3> Adjacent;
    __shared__ typename Adjacent::TempStorage temp;
    const int t = threadIdx.y * 5 + threadIdx.x;
    float items[2];
    double l[2], r[2];
    for (int i = 0; i < 2; ++i) items[i] = in[t * 2 + i];
    Adjacent(temp).SubtractLeft(items, l, cub::Difference());
    __syncthreads();
    Adjacent(temp).SubtractRight(items, r, cub::Difference(), 100.0f);
    for (int i = 0; i < 2; ++i) { left[t * 2 + i] = l[i]; right[t * 2 + i] = r[i]; }
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
int main() {
    {
        const int n = 150;
        std::vector<int> in(192 + 1), out(7 * 192);
        for (int i = 0; i < 193; ++i) in[i] = (i * i * 13) % 41 - 20;
        cudacpu_kernels::differences(dim3(2), dim3(24), 0, in.data(), out.data(), n);
        const char* names[7] = {"left_in_place", "left_pred", "left_partial", "left_partial_pred", "right",
                                "right_succ", "right_partial"};
        for (int k = 0; k < 7; ++k) {
            std::printf("%s", names[k]);
            for (int i = 0; i < 192; ++i) std::printf(" %d", out[k * 192 + i]);
            std::printf("\n");
        }
    }
    {
        std::vector<float> in(30);
        std::vector<double> left(30), right(30);
        for (int i = 0; i < 30; ++i) in[i] = (float)((i * 11) % 17) * 0.5f;
        cudacpu_kernels::float_differences(dim3(1), dim3(5, 3), 0, in.data(), left.data(), right.data());
        std::printf("float_left"); for (double x : left) std::printf(" %d", (int)(2 * x)); std::printf("\n");
        std::printf("float_right"); for (double x : right) std::printf(" %d", (int)(2 * x)); std::printf("\n");
    }
    return 0;
}
"""


def left(tile: list, op, valid: int | None = None, predecessor=None) -> list:
    """CUB's SubtractLeft: op(item, previous item); the tile's first from its predecessor or
    copied, the items past the valid ones copied."""
    valid = len(tile) if valid is None else valid
    out = []
    for p, x in enumerate(tile):
        if p >= valid:
            out.append(x)
        elif p == 0:
            out.append(x if predecessor is None else op(x, predecessor))
        else:
            out.append(op(x, tile[p - 1]))
    return out


def right(tile: list, op, valid: int | None = None, successor=None) -> list:
    """CUB's SubtractRight: op(item, next item); the last valid one from the tile's successor (a
    full tile) or copied, and the items past it copied."""
    valid = len(tile) if valid is None else valid
    out = []
    for p, x in enumerate(tile):
        if p >= valid - 1:
            out.append(op(x, successor) if successor is not None and p == valid - 1 else x)
        else:
            out.append(op(x, tile[p + 1]))
    return out


def expected() -> dict[str, list[int]]:
    n = 150
    v = [(i * i * 13) % 41 - 20 for i in range(193)]

    def diff(a, b):
        return a - b

    def weighted(a, b):
        return 3 * a - b

    out: dict[str, list[int]] = {k: [] for k in ("left_in_place", "left_pred", "left_partial", "left_partial_pred",
                                                 "right", "right_succ", "right_partial")}
    for b in range(2):
        tile = v[b * 96:(b + 1) * 96]
        valid = min(n - b * 96, 96)
        before = v[b * 96 - 1] if b > 0 else 0
        after = v[(b + 1) * 96]
        out["left_in_place"] += left(tile, diff)
        out["left_pred"] += left(tile, weighted, predecessor=before)
        out["left_partial"] += left(tile, diff, valid)
        out["left_partial_pred"] += left(tile, weighted, valid, before)
        out["right"] += right(tile, diff)
        out["right_succ"] += right(tile, weighted, successor=after)
        out["right_partial"] += right(tile, weighted, valid)
    f = [(i * 11) % 17 for i in range(30)]  # twice the items
    out["float_left"] = left(f, diff)
    out["float_right"] = right(f, diff, successor=200)
    return out


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cub_adjacent_difference.cu")


def test_differences_become_shared_slots(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for call in (".SubtractLeft(", ".SubtractLeftPartialTile(", ".SubtractRight(", ".SubtractRightPartialTile("):
        assert call not in body, call


@pytest.mark.parametrize("threads", [1, 2])
def test_block_adjacent_difference_matches_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert_rows(out, expected())
