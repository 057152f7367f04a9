"""CUB's block and warp collectives (tools/cuda/cub_blocks.py) lowered through shared memory,
barriers and warp shuffles, compiled with real g++ -fopenmp and run with 1 and 2 OpenMP threads;
each kernel's output is compared with values computed here in Python."""

import pytest

from cuda_fixtures.build import assert_rows, build_and_run, kernels_code, lowered

KERNELS = r"""
#include <cub/cub.cuh>
struct Larger { __device__ int operator()(int a, int b) const { return a > b ? a : b; } };

// Sum on a 2-D block (linear thread order), the aggregate stored by thread 0 as CUB defines it.
__global__ void block_sum(const int* in, int* out) {
    typedef cub::BlockReduce<int, 8, cub::BLOCK_REDUCE_WARP_REDUCTIONS, 16> BlockReduce;
    __shared__ typename BlockReduce::TempStorage temp;
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int total = BlockReduce(temp).Sum(in[blockIdx.x * 128 + t]);
    if (t == 0) out[blockIdx.x] = total;
}

// Reduce with CUB's Max over the first `valid` threads, and with a functor of the program's own,
// in a kernel template (T named by its template parameter), the storage reused after a barrier.
template <typename T, int B>
__global__ void block_reduce_ops(const T* in, T* maxes, T* larger, int valid) {
    using BR = cub::BlockReduce<T, B>;
    __shared__ typename BR::TempStorage temp;
    T v = in[blockIdx.x * B + threadIdx.x];
    T m = BR(temp).Reduce(v, cub::Max(), valid);
    __syncthreads();
    T l = BR(temp).Reduce(v, Larger());
    if (threadIdx.x == 0) { maxes[blockIdx.x] = m; larger[blockIdx.x] = l; }
}

// Scans: exclusive and inclusive sums, a scan with an initial value and an operator, the block
// aggregate, and an output that is its own input.
__global__ void block_scans(const int* in, int* ex, int* inc, int* seeded, int* totals) {
    typedef cub::BlockScan<int, 64> BlockScan;
    __shared__ typename BlockScan::TempStorage temp;
    int x = in[blockIdx.x * 64 + threadIdx.x], e, i, s, total;
    BlockScan(temp).ExclusiveSum(x, e);
    __syncthreads();
    BlockScan(temp).InclusiveSum(x, i);
    __syncthreads();
    BlockScan(temp).ExclusiveScan(x, s, 100, Larger());
    __syncthreads();
    BlockScan(temp).ExclusiveSum(x, x, total);
    ex[blockIdx.x * 64 + threadIdx.x] = e + 1000 * (x != e);
    inc[blockIdx.x * 64 + threadIdx.x] = i;
    seeded[blockIdx.x * 64 + threadIdx.x] = s;
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// Warp reductions: full warps and logical warps of 16, each with its own storage.
__global__ void warp_reduce(const float* in, float* sums, int* maxes) {
    typedef cub::WarpReduce<float> WarpSum;
    typedef cub::WarpReduce<int, 16> HalfWarp;
    __shared__ typename WarpSum::TempStorage temp[2];
    __shared__ typename HalfWarp::TempStorage half[4];
    float v = in[threadIdx.x];
    float s = WarpSum(temp[threadIdx.x / 32]).Sum(v);
    int m = HalfWarp(half[threadIdx.x / 16]).Reduce((int)v, Larger());
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = s;
    if (threadIdx.x % 16 == 0) maxes[threadIdx.x / 16] = m;
}

// Warp scans: inclusive sums with the warp's aggregate, exclusive scans seeded, on logical warps of 8.
__global__ void warp_scans(const int* in, int* inc, int* totals, int* seeded) {
    typedef cub::WarpScan<int> WarpScan;
    typedef cub::WarpScan<int, 8> EightScan;
    __shared__ typename WarpScan::TempStorage temp[2];
    __shared__ typename EightScan::TempStorage eight[8];
    int x = in[threadIdx.x], i, total, s;
    WarpScan(temp[threadIdx.x / 32]).InclusiveSum(x, i, total);
    EightScan(eight[threadIdx.x / 8]).ExclusiveScan(x, s, -1, Larger());
    inc[threadIdx.x] = i;
    seeded[threadIdx.x] = s;
    if (threadIdx.x % 32 == 0) totals[threadIdx.x / 32] = total;
}

// A tile of 4 items per thread loaded blocked (the last tile partial, filled with -1), each item
// doubled, stored striped over the valid part.
__global__ void tiles(const int* in, int* out, int n) {
    typedef cub::BlockLoad<int, 32, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE> Load;
    typedef cub::BlockStore<int, 32, 4, cub::BLOCK_STORE_STRIPED> Store;
    __shared__ typename Load::TempStorage load_temp;
    __shared__ typename Store::TempStorage store_temp;
    int items[4];
    int offset = blockIdx.x * 128, valid = n - offset < 128 ? n - offset : 128;
    Load(load_temp).Load(in + offset, items, valid, -1);
    for (int i = 0; i < 4; ++i) items[i] *= 2;
    __syncthreads();
    Store(store_temp).Store(out + offset, items, valid);
}

// An exclusive sum over every thread's 3 items (blocked), in place, and an inclusive max-scan.
__global__ void item_scans(const int* in, int* sums, int* maxes) {
    typedef cub::BlockScan<int, 16> BlockScan;
    __shared__ typename BlockScan::TempStorage temp;
    int items[3], copy[3], scanned[3];
    for (int i = 0; i < 3; ++i) items[i] = copy[i] = in[threadIdx.x * 3 + i];
    BlockScan(temp).ExclusiveSum(items, items);
    __syncthreads();
    BlockScan(temp).InclusiveScan(copy, scanned, Larger());
    for (int i = 0; i < 3; ++i) { sums[threadIdx.x * 3 + i] = items[i]; maxes[threadIdx.x * 3 + i] = scanned[i]; }
    typedef cub::BlockReduce<int, 16> BlockReduce;
    __shared__ typename BlockReduce::TempStorage reduce_temp;
    int total = BlockReduce(reduce_temp).Sum(copy);
    if (threadIdx.x == 0) sums[48] = total;
}
// Two instantiations of the same collective in one kernel keep their own shared slots (an int sum
// past float's precision, and a float sum).
__global__ void mixed_reduce(const int* in, int* ints, float* halves) {
    typedef cub::BlockReduce<int, 16> IntReduce;
    typedef cub::BlockReduce<float, 16> FloatReduce;
    __shared__ typename IntReduce::TempStorage int_temp;
    __shared__ typename FloatReduce::TempStorage float_temp;
    int x = IntReduce(int_temp).Sum(in[threadIdx.x]);
    float y = FloatReduce(float_temp).Sum(0.5f * threadIdx.x);
    if (threadIdx.x == 0) { *ints = x; *halves = y; }
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
int main() {
    {
        std::vector<int> in(384), out(3);
        for (int i = 0; i < 384; ++i) in[i] = (i * 37) % 101 - 50;
        cudacpu_kernels::block_sum(dim3(3), dim3(8, 16), 0, in.data(), out.data());
        std::printf("block_sum"); for (int x : out) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<int> in(256), maxes(2), larger(2);
        for (int i = 0; i < 256; ++i) in[i] = (i * 53) % 97;
        cudacpu_kernels::block_reduce_ops<int, 128>(dim3(2), dim3(128), 0, in.data(), maxes.data(), larger.data(), 40);
        std::printf("maxes"); for (int x : maxes) std::printf(" %d", x); std::printf("\n");
        std::printf("larger"); for (int x : larger) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<int> in(128), ex(128), inc(128), seeded(128), totals(2);
        for (int i = 0; i < 128; ++i) in[i] = (i * 29) % 13 + (i == 70 ? 200 : 0);
        cudacpu_kernels::block_scans(dim3(2), dim3(64), 0, in.data(), ex.data(), inc.data(), seeded.data(), totals.data());
        std::printf("ex"); for (int x : ex) std::printf(" %d", x); std::printf("\n");
        std::printf("inc"); for (int x : inc) std::printf(" %d", x); std::printf("\n");
        std::printf("seeded"); for (int x : seeded) std::printf(" %d", x); std::printf("\n");
        std::printf("totals"); for (int x : totals) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<float> in(64), sums(2);
        std::vector<int> maxes(4);
        for (int i = 0; i < 64; ++i) in[i] = (float)((i * 13) % 17);
        cudacpu_kernels::warp_reduce(dim3(1), dim3(64), 0, in.data(), sums.data(), maxes.data());
        std::printf("warp_sums"); for (float x : sums) std::printf(" %d", (int)x); std::printf("\n");
        std::printf("warp_maxes"); for (int x : maxes) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<int> in(64), inc(64), totals(2), seeded(64);
        for (int i = 0; i < 64; ++i) in[i] = (i * 19) % 23;
        cudacpu_kernels::warp_scans(dim3(1), dim3(64), 0, in.data(), inc.data(), totals.data(), seeded.data());
        std::printf("warp_inc"); for (int x : inc) std::printf(" %d", x); std::printf("\n");
        std::printf("warp_totals"); for (int x : totals) std::printf(" %d", x); std::printf("\n");
        std::printf("warp_seeded"); for (int x : seeded) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<int> in(200), out(256, 7);
        for (int i = 0; i < 200; ++i) in[i] = i;
        cudacpu_kernels::tiles(dim3(2), dim3(32), 0, in.data(), out.data(), 200);
        std::printf("tiles"); for (int x : out) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<int> in(48), sums(49), maxes(48);
        for (int i = 0; i < 48; ++i) in[i] = (i * 31) % 17 - (i == 20 ? 40 : 0);
        cudacpu_kernels::item_scans(dim3(1), dim3(16), 0, in.data(), sums.data(), maxes.data());
        std::printf("item_sums"); for (int x : sums) std::printf(" %d", x); std::printf("\n");
        std::printf("item_maxes"); for (int x : maxes) std::printf(" %d", x); std::printf("\n");
    }
    {
        std::vector<int> in(16);
        int ints = 0; float halves = 0;
        for (int i = 0; i < 16; ++i) in[i] = 16777217 + i;
        cudacpu_kernels::mixed_reduce(dim3(1), dim3(16), 0, in.data(), &ints, &halves);
        std::printf("mixed %d %d\n", ints, (int)(2 * halves));
    }
    return 0;
}
"""


def expected() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    a = [(i * 37) % 101 - 50 for i in range(384)]
    out["block_sum"] = [sum(a[b * 128:(b + 1) * 128]) for b in range(3)]
    r = [(i * 53) % 97 for i in range(256)]
    out["maxes"] = [max(r[b * 128:b * 128 + 40]) for b in range(2)]
    out["larger"] = [max(r[b * 128:(b + 1) * 128]) for b in range(2)]
    s = [(i * 29) % 13 + (200 if i == 70 else 0) for i in range(128)]
    blocks = [s[b * 64:(b + 1) * 64] for b in range(2)]
    out["ex"] = [sum(blk[:t]) for blk in blocks for t in range(64)]
    out["inc"] = [sum(blk[:t + 1]) for blk in blocks for t in range(64)]
    out["seeded"] = [max([100] + blk[:t]) for blk in blocks for t in range(64)]
    out["totals"] = [sum(blk) for blk in blocks]
    f = [(i * 13) % 17 for i in range(64)]
    out["warp_sums"] = [sum(f[w * 32:(w + 1) * 32]) for w in range(2)]
    out["warp_maxes"] = [max(f[h * 16:(h + 1) * 16]) for h in range(4)]
    w = [(i * 19) % 23 for i in range(64)]
    out["warp_inc"] = [sum(w[(i // 32) * 32:i + 1]) for i in range(64)]
    out["warp_totals"] = [sum(w[k * 32:(k + 1) * 32]) for k in range(2)]
    out["warp_seeded"] = [max([-1] + w[(i // 8) * 8:i]) for i in range(64)]
    # thread t holds blocked items 4t..4t+3 of its tile (past n: -1); striped, item i goes to i * 32 + t
    tiles = [7] * 256
    for b in range(2):
        for t in range(32):
            for i in range(4):
                at = b * 128 + i * 32 + t
                if at < 200:
                    source = b * 128 + 4 * t + i
                    tiles[at] = 2 * (source if source < 200 else -1)
    out["tiles"] = tiles
    q = [(i * 31) % 17 - (40 if i == 20 else 0) for i in range(48)]
    out["item_sums"] = [sum(q[:i]) for i in range(48)] + [sum(q)]
    out["item_maxes"] = [max(q[:i + 1]) for i in range(48)]
    out["mixed"] = [sum(16777217 + i for i in range(16)), sum(range(16))]
    return out


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cub_blocks.cu")


def test_collectives_become_barriers_and_shuffles(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for call in (".Sum(", ".Reduce(", ".ExclusiveSum(", ".InclusiveSum(", ".ExclusiveScan(", ".Load(", ".Store("):
        assert call not in body, call
    assert "cudacpu::shfl_xor<float>" in body and "cudacpu::shfl_xor<int>" in body and "cudacpu::shfl_up<int>" in body


@pytest.mark.parametrize("threads", [1, 2])
def test_cub_collectives_match_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert_rows(out, expected())


def test_the_program_s_macros_do_not_reach_the_collectives_helpers(tmp_path):
    """The helpers are written into the program's file, after its own #defines: a macro named `N`,
    `T` or `Op` (common in real code) must not rename their template parameters."""
    source = ("#include <cub/cub.cuh>\n#define N 4\n#define T float\n#define Op cub::Sum\n#define THREADS 32\n"
              "__global__ void k(const T* in, T* out) {\n"
              "  typedef cub::BlockLoad<T, THREADS, N> Load;\n  typedef cub::BlockReduce<T, THREADS> Reduce;\n"
              "  typedef cub::BlockScan<T, THREADS> Scan;\n  typedef cub::WarpReduce<T> Warp;\n"
              "  __shared__ typename Reduce::TempStorage temp;\n  __shared__ typename Scan::TempStorage scan;\n"
              "  __shared__ typename Warp::TempStorage warp;\n"
              "  T items[N], sums[N];\n  Load().Load(in, items);\n  T s = Reduce(temp).Reduce(items, Op());\n"
              "  Scan(scan).InclusiveSum(items, sums);\n  T w = Warp(warp).Sum(items[0]);\n"
              "  if (threadIdx.x == 0) { out[0] = s; out[1] = sums[N - 1]; out[2] = w; }\n}\n")
    cpp = lowered(source, "macros.cu")
    main = ("#include <cstdio>\nint main() { float in[128], out[3];\n"
            "  for (int i = 0; i < 128; ++i) in[i] = (float)i;\n"
            "  cudacpu_kernels::k(dim3(1), dim3(32), 0, in, out);\n"
            "  std::printf(\"%g %g %g\\n\", out[0], out[1], out[2]); }\n")
    # all 128 items; thread 0's inclusive sum of its 4; the warp's first items (4 t over 32 lanes)
    assert build_and_run(cpp, main, tmp_path, threads=2).split() == ["8128", "6", "1984"]
