"""Cooperative groups lowered through the CUDA primitives (tools/cuda/coop_groups.py), compiled
with real g++ -fopenmp and run with 1 and 2 OpenMP threads; each kernel's output is compared with
values computed here in Python."""

import os
import subprocess

import pytest

from tools.cuda import lower_source, runtime_include_dir, translate_file

from cuda_fixtures.build import assert_rows, build_and_run, include_args, kernels_code, lowered, named_rows

HEAD = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
"""

KERNELS = HEAD + r"""
// Block reduction: thread_block sync and shared memory.
__global__ void block_reduce(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    __shared__ int s[128];
    unsigned int t = block.thread_rank();
    s[t] = in[block.group_index().x * block.size() + t];
    block.sync();
    for (unsigned int stride = block.size() / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        cg::sync(block);
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Warp reduction: tiled_partition<32> and shfl_down.
__global__ void warp_reduce(const float* in, float* out) {
    auto block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    for (int o = warp.size() / 2; o > 0; o /= 2) v += warp.shfl_down(v, o);
    if (warp.thread_rank() == 0) out[blockIdx.x * warp.meta_group_size() + warp.meta_group_rank()] = v;
}

// Tiles of 16: shfl_xor, thread_rank, meta_group_rank (a 2-D block).
__global__ void tile16(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    auto tile = cg::tiled_partition<16>(block);
    int v = in[block.thread_rank()];
    int m = v;
    for (int o = 8; o > 0; o >>= 1) m = max(m, tile.shfl_xor(m, o));
    out[block.thread_rank()] = m * 10000 + (int)tile.meta_group_rank() * 100 + (int)tile.thread_rank();
}

// cg::reduce with plus and greater on tiles of 32 and 8.
__global__ void reduce_ops(const int* in, int* sums, int* maxes) {
    auto block = cg::this_thread_block();
    auto w = cg::tiled_partition<32>(block);
    auto t8 = cg::tiled_partition<8>(block);
    int v = in[block.thread_rank()];
    sums[block.thread_rank()] = cg::reduce(w, v, cg::plus<int>());
    maxes[block.thread_rank()] = cg::reduce(t8, v, cg::greater<int>());
}

// Votes on a tile of 8: ballot (the tile's bits), any, all.
__global__ void votes8(const int* in, unsigned* ballots, int* anys, int* alls) {
    cg::thread_block_tile<8> t = cg::tiled_partition<8>(cg::this_thread_block());
    int v = in[threadIdx.x];
    ballots[threadIdx.x] = t.ballot(v > 0);
    anys[threadIdx.x] = t.any(v > 40);
    alls[threadIdx.x] = t.all(v > -5);
}

// A device function taking a tile by reference (and one by value, a template on its size).
__device__ float tile_sum(const cg::thread_block_tile<16>& g, float v) {
    for (int o = g.size() / 2; o > 0; o /= 2) v += g.shfl_down(v, o);
    return g.shfl(v, 0);
}
template <unsigned int N> __device__ float tile_prefix(cg::thread_block_tile<N> g, float v) {
    for (unsigned int o = 1; o < g.num_threads(); o *= 2) {
        float u = g.shfl_up(v, o);
        if (g.thread_rank() >= o) v += u;
    }
    return v;
}
__global__ void tile_functions(const float* in, float* sums, float* prefix) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    float v = in[block.thread_rank()];
    sums[block.thread_rank()] = tile_sum(tile, v);
    prefix[block.thread_rank()] = tile_prefix(tile, v);
}
"""

MAIN = r"""
#include <vector>
#include <cstdio>
int main() {
    {   // block_reduce: 3 blocks of 128
        std::vector<int> in(384), out(3);
        for (int i = 0; i < 384; ++i) in[i] = (i * 37) % 101 - 50;
        cudacpu_kernels::block_reduce(dim3(3), dim3(128), 0, in.data(), out.data());
        std::printf("block_reduce"); for (int x : out) std::printf(" %d", x); std::printf("\n");
    }
    {   // warp_reduce: 2 blocks of 96
        std::vector<float> in(192), out(6);
        for (int i = 0; i < 192; ++i) in[i] = (float)((i * 13) % 17);
        cudacpu_kernels::warp_reduce(dim3(2), dim3(96), 0, in.data(), out.data());
        std::printf("warp_reduce"); for (float x : out) std::printf(" %d", (int)x); std::printf("\n");
    }
    {   // tile16: a block of 8 x 8
        std::vector<int> in(64), out(64);
        for (int i = 0; i < 64; ++i) in[i] = (i * 29) % 61;
        cudacpu_kernels::tile16(dim3(1), dim3(8, 8), 0, in.data(), out.data());
        std::printf("tile16"); for (int x : out) std::printf(" %d", x); std::printf("\n");
    }
    {   // reduce_ops: a block of 64
        std::vector<int> in(64), sums(64), maxes(64);
        for (int i = 0; i < 64; ++i) in[i] = (i * 23) % 47 - 20;
        cudacpu_kernels::reduce_ops(dim3(1), dim3(64), 0, in.data(), sums.data(), maxes.data());
        std::printf("sums"); for (int x : sums) std::printf(" %d", x); std::printf("\n");
        std::printf("maxes"); for (int x : maxes) std::printf(" %d", x); std::printf("\n");
    }
    {   // votes8: a block of 64
        std::vector<int> in(64), anys(64), alls(64);
        std::vector<unsigned> ballots(64);
        for (int i = 0; i < 64; ++i) in[i] = (i * 31) % 53 - 10;
        for (int i = 16; i < 24; ++i) in[i] = 1;  // a tile where all are positive
        cudacpu_kernels::votes8(dim3(1), dim3(64), 0, in.data(), ballots.data(), anys.data(), alls.data());
        std::printf("ballots"); for (unsigned x : ballots) std::printf(" %u", x); std::printf("\n");
        std::printf("anys"); for (int x : anys) std::printf(" %d", x); std::printf("\n");
        std::printf("alls"); for (int x : alls) std::printf(" %d", x); std::printf("\n");
    }
    {   // tile_functions: a block of 64
        std::vector<float> in(64), sums(64), prefix(64);
        for (int i = 0; i < 64; ++i) in[i] = (float)((i * 7) % 11);
        cudacpu_kernels::tile_functions(dim3(1), dim3(64), 0, in.data(), sums.data(), prefix.data());
        std::printf("tile_sums"); for (float x : sums) std::printf(" %d", (int)x); std::printf("\n");
        std::printf("tile_prefix"); for (float x : prefix) std::printf(" %d", (int)x); std::printf("\n");
    }
    return 0;
}
"""


def expected() -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    a = [(i * 37) % 101 - 50 for i in range(384)]
    out["block_reduce"] = [sum(a[b * 128:(b + 1) * 128]) for b in range(3)]
    f = [(i * 13) % 17 for i in range(192)]
    out["warp_reduce"] = [sum(f[b * 96 + w * 32: b * 96 + (w + 1) * 32]) for b in range(2) for w in range(3)]
    t = [(i * 29) % 61 for i in range(64)]
    out["tile16"] = [max(t[(i // 16) * 16:(i // 16 + 1) * 16]) * 10000 + (i // 16) * 100 + i % 16 for i in range(64)]
    r = [(i * 23) % 47 - 20 for i in range(64)]
    out["sums"] = [sum(r[(i // 32) * 32:(i // 32 + 1) * 32]) for i in range(64)]
    out["maxes"] = [max(r[(i // 8) * 8:(i // 8 + 1) * 8]) for i in range(64)]
    v = [(i * 31) % 53 - 10 for i in range(64)]
    v[16:24] = [1] * 8
    tiles = [v[(i // 8) * 8:(i // 8 + 1) * 8] for i in range(64)]
    out["ballots"] = [sum(1 << k for k, x in enumerate(tile) if x > 0) for tile in tiles]
    out["anys"] = [int(any(x > 40 for x in tile)) for tile in tiles]
    out["alls"] = [int(all(x > -5 for x in tile)) for tile in tiles]
    g = [(i * 7) % 11 for i in range(64)]
    out["tile_sums"] = [sum(g[(i // 16) * 16:(i // 16 + 1) * 16]) for i in range(64)]
    out["tile_prefix"] = [sum(g[(i // 16) * 16:i + 1]) for i in range(64)]
    return out


@pytest.fixture(scope="module")
def lowered_cpp() -> str:
    return lowered(KERNELS, "cg.cu")


def test_group_operations_become_cuda_primitives(lowered_cpp):
    body = kernels_code(lowered_cpp)
    for op in (".shfl", ".ballot(", ".any(", ".all(", ".sync()", "cg::reduce(", "cg::sync(", "thread_rank()"):
        assert op not in body, op
    assert "cudacpu::shfl_down<float>" in body and "cudacpu::shfl_xor<int>" in body and "cudacpu::ballot(" in body


@pytest.mark.parametrize("threads", [1, 2])
def test_cooperative_groups_kernels_match_python(lowered_cpp, tmp_path, threads):
    out = build_and_run(lowered_cpp, MAIN, tmp_path, threads=threads)
    assert_rows(out, expected())


def test_what_is_left_of_groups_is_reported_by_name():
    source = HEAD + r"""
__global__ void coalesced_ballot(unsigned* x) {
    if (threadIdx.x % 2) {
        cg::coalesced_group active = cg::coalesced_threads();
        x[threadIdx.x] = active.ballot(1);
    }
}
__device__ int rank_of(cg::thread_group g) { return g.thread_rank(); }
__global__ void dynamic_group(int* x) { x[threadIdx.x] = rank_of(cg::this_thread_block()); }
"""
    mod = lower_source(source, "cg_unsupported.cu")
    features = {u.kernel: u.feature for u in mod.unsupported}
    assert features["coalesced_ballot"] == "cooperative groups coalesced_group::ballot"
    assert features["dynamic_group"] == "cooperative groups thread_group::thread_rank"


def test_host_code_including_cooperative_groups_compiles(tmp_path):
    src = tmp_path / "host.cpp"
    src.write_text("#include <cuda_runtime.h>\n" + HEAD + r"""
int main() {
    cg::thread_block b = cg::this_thread_block();
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(b);
    std::printf("%u %d\n", t.size(), cg::plus<int>()(2, 3));
    return 0;
}
""")
    exe = tmp_path / "host"
    build = subprocess.run(["g++", "-std=c++17", "-Wall", "-Werror", "-I", str(runtime_include_dir()), str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    assert subprocess.run([str(exe)], capture_output=True, text=True).stdout.strip() == "32 5"


WHOLE_FILE = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ void fill(const cg::thread_block& cta, int* s, const int* in) { s[cta.thread_rank()] = in[cta.thread_rank()]; cg::sync(cta); }
__global__ void nested(const int* in, int* out) {
    cg::thread_block cta = cg::this_thread_block();
    __shared__ int s[64];
    fill(cta, s, in);
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(cta);
    auto t4 = cg::tiled_partition<4>(t32);
    cg::thread_group g = cg::tiled_partition(cta, 8);
    out[cta.thread_rank()] = t4.meta_group_rank() * 1000 + t4.meta_group_size() * 100 + g.thread_rank() * 10 + s[63 - cta.thread_rank()] % 10;
}
int main() {
    int *in, *out; cudaMallocManaged(&in, 64 * 4); cudaMallocManaged(&out, 64 * 4);
    for (int i = 0; i < 64; ++i) in[i] = i;
    nested<<<1, 64>>>(in, out); cudaDeviceSynchronize();
    for (int i = 0; i < 64; ++i) { int want = (i % 32 / 4) * 1000 + 800 + (i % 8) * 10 + (63 - i) % 10; if (out[i] != want) { printf("bad %d %d %d\n", i, out[i], want); return 1; } }
    printf("ok\n"); return 0;
}
"""


def _port_and_run(source: str, tmp_path, name: str, threads: int = 2):
    """`source` translated as a whole file (host code kept; every kernel must lower), built with g++
    and run with `threads` OpenMP threads: the translation and the completed run."""
    mod = translate_file(source, str(tmp_path / f"{name}.cu"))
    assert mod.unsupported == [], [str(u) for u in mod.unsupported]
    src, exe = tmp_path / f"{name}.cpp", tmp_path / name
    src.write_text(mod.cpp)
    build = subprocess.run(["g++", "-std=c++17", "-fopenmp", "-O1", "-Wall", *include_args(), str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, OMP_NUM_THREADS=str(threads)))
    return mod, run


@pytest.mark.parametrize("threads", [1, 2])
def test_whole_file_nested_tiles_thread_group_and_block_by_reference(tmp_path, threads):
    """A file ported as a whole (host code kept): a thread_block passed by reference to a device
    function that syncs it, a tile of a tile (meta_group_rank in its parent), a thread_group from
    tiled_partition(g, 8)."""
    _, run = _port_and_run(WHOLE_FILE, tmp_path, "nested", threads)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


COALESCED = HEAD + r"""
// Warp-aggregated atomics: the lanes that take the branch reserve their slots with one atomic.
__global__ void aggregated(const int* flags, int* counter, int* slots, int* sizes, int* anys) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    slots[i] = -1;
    if (flags[i]) {
        cg::coalesced_group g = cg::coalesced_threads();
        int base = 0;
        if (g.thread_rank() == 0) base = atomicAdd(counter, (int)g.size());
        base = g.shfl(base, 0);
        slots[i] = base + (int)g.thread_rank();
        sizes[i] = (int)g.num_threads();
        anys[i] = g.any(flags[i] > 1);
    }
}
"""

COALESCED_MAIN = r"""
#include <cstdio>
#include <vector>
int main() {
    std::vector<int> flags(128), slots(128), sizes(128), anys(128), counter(1);
    for (int i = 0; i < 128; ++i) flags[i] = (i * 5) % 7 < 3 ? 1 + (i == 70) : 0;
    cudacpu_kernels::aggregated(dim3(2), dim3(64), 0, flags.data(), counter.data(), slots.data(), sizes.data(), anys.data());
    std::printf("counter %d\n", counter[0]);
    std::printf("slots"); for (int x : slots) std::printf(" %d", x); std::printf("\n");
    std::printf("sizes"); for (int x : sizes) std::printf(" %d", x); std::printf("\n");
    std::printf("anys"); for (int x : anys) std::printf(" %d", x); std::printf("\n");
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_coalesced_groups_are_the_lanes_that_run_together(tmp_path, threads):
    got = named_rows(build_and_run(lowered(COALESCED, "coalesced.cu"), COALESCED_MAIN, tmp_path, threads=threads))
    flags = [(1 + (i == 70)) if (i * 5) % 7 < 3 else 0 for i in range(128)]
    taken = [i for i in range(128) if flags[i]]
    assert got["counter"] == [len(taken)]
    assert sorted(got["slots"][i] for i in taken) == list(range(len(taken)))
    for warp in range(4):
        lanes = [i for i in taken if i // 32 == warp]
        slots = [got["slots"][i] for i in lanes]
        assert slots == list(range(slots[0], slots[0] + len(lanes)))  # one reservation, ranks in lane order
        assert all(got["sizes"][i] == len(lanes) for i in lanes)
        assert all(got["anys"][i] == int(any(flags[j] > 1 for j in lanes)) for i in lanes)
    assert all(got["slots"][i] == -1 for i in range(128) if not flags[i])


NAMESPACE_IN_THE_KERNEL = r"""
#include <cooperative_groups.h>
__global__ void mirrored_pairs(const float* in, float* out) {
    namespace cg = cooperative_groups;  // in the kernel's body, as some codes write it
    using namespace cooperative_groups;
    cg::thread_block block = cg::this_thread_block();
    __shared__ float s[64];
    s[threadIdx.x] = in[threadIdx.x];
    block.sync();
    thread_block_tile<32> tile = tiled_partition<32>(block);  // after the barrier: the names still hold
    float v = s[63 - threadIdx.x];
    v += tile.shfl_xor(v, 1);
    out[threadIdx.x] = v;
}
"""

NAMESPACE_IN_THE_KERNEL_MAIN = r"""
#include <cstdio>
int main() {
    float in[64], out[64];
    for (int i = 0; i < 64; ++i) in[i] = i;
    cudacpu_kernels::mirrored_pairs(dim3(1), dim3(64), 0, in, out);
    for (int i = 0; i < 64; ++i)
        if (out[i] != (63 - i) + (63 - (i ^ 1))) { std::printf("%d: %f\n", i, out[i]); return 1; }
    std::printf("ok\n");
}
"""


def test_namespace_aliases_and_using_directives_in_a_kernel_outlive_its_barriers(tmp_path):
    assert build_and_run(lowered(NAMESPACE_IN_THE_KERNEL, "k.cu"), NAMESPACE_IN_THE_KERNEL_MAIN, tmp_path).strip() == "ok"


METHODS_NAMED_LIKE_GROUP_OPERATIONS = HEAD + r"""
struct SumOp {
    __device__ float combine(float a, float b) const { return a + b; }
    __device__ float shfl_down(float v, int o) const { return __shfl_down_sync(0xffffffffu, v, o); }
    __device__ int any(int p) const { return __any_sync(0xffffffffu, p); }
};

template <class Op>
__device__ float warp_reduce(float v, const Op& op) {
    for (int o = 16; o > 0; o >>= 1) v = op.combine(v, op.shfl_down(v, o));
    return op.any(v > 100.0f) ? v : -v;
}

__global__ void sums(const float* in, float* out) {
    SumOp op;
    float v = warp_reduce(in[threadIdx.x], op);
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}

template <class G>
__device__ float next_lane(const G& g, float v) { return g.shfl_down(v, 1); }

__global__ void tiles(float* x) {
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
    x[threadIdx.x] = next_lane(tile, x[threadIdx.x]);
}
"""

METHODS_NAMED_LIKE_GROUP_OPERATIONS_MAIN = r"""
#include <cstdio>
int main() {
    float in[64], out[2];
    for (int i = 0; i < 64; ++i) in[i] = i % 9;
    cudacpu_kernels::sums(dim3(1), dim3(64), 0, in, out);
    for (int w = 0; w < 2; ++w) {
        float sum = 0;
        for (int l = 0; l < 32; ++l) sum += in[w * 32 + l];
        if (out[w] != (sum > 100.0f ? sum : -sum)) { std::printf("%d: %f vs %f\n", w, out[w], sum); return 1; }
    }
    std::printf("ok\n");
}
"""


def test_methods_named_like_group_operations_are_the_projects_where_the_object_is_no_group(tmp_path):
    """`op.shfl_down(v, o)`, `op.any(p)` on an object of a template parameter's type are the
    project's methods so named where the parameter is bound to the project's class, and a group's
    (reported, as any operation on a group of template type) where it is bound to a tile."""
    mod = lower_source(METHODS_NAMED_LIKE_GROUP_OPERATIONS, "k.cu")
    assert {u.kernel: u.feature for u in mod.unsupported} == {
        "tiles": "cooperative groups shfl_down on a group of template type"}
    assert build_and_run(mod.cpp, METHODS_NAMED_LIKE_GROUP_OPERATIONS_MAIN, tmp_path).strip() == "ok"


GRID_PHASES = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void phases(const int* in, int* partial, int* out, int* rounds, int n) {
    cg::grid_group grid = cg::this_grid();
    __shared__ int s[64];
    unsigned long long rank = grid.thread_rank();
    int mine = rank < n ? in[rank] : 0;  // live across the grid's barriers
    s[threadIdx.x] = mine;
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    }
    if (threadIdx.x == 0) partial[grid.block_rank()] = s[0];
    grid.sync();
    if (rank == 0) {
        int total = 0;
        for (unsigned long long b = 0; b < grid.num_blocks(); ++b) total += partial[b];
        out[0] = total;
    }
    int* now = rounds;
    int* next = rounds + n;
    if (rank < n) now[rank] = mine;
    for (int round = 0; round < 3; ++round) {
        cg::sync(grid);  // each round reads what another block wrote in the round before
        if (rank < n) next[rank] = now[rank] + now[(rank + blockDim.x) % n];
        int* done = now; now = next; next = done;
    }
    grid.sync();
    if (rank < n) out[1 + rank] = now[rank] + (int)grid.size();
}

int main() {
    const int blocks = 4, threads = 64, n = blocks * threads;
    int *in, *partial, *out, *rounds;
    cudaMallocManaged(&in, n * sizeof(int));
    cudaMallocManaged(&partial, blocks * sizeof(int));
    cudaMallocManaged(&out, (n + 1) * sizeof(int));
    cudaMallocManaged(&rounds, 2 * n * sizeof(int));
    for (int i = 0; i < n; ++i) in[i] = (i * 7) % 13;
    int cooperative = 0;
    cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0);
    int count = n;
    void* args[] = {&in, &partial, &out, &rounds, &count};
    cudaLaunchCooperativeKernel((void*)phases, dim3(blocks), dim3(threads), args, 0, 0);
    cudaDeviceSynchronize();
    long long first = 0;
    for (int i = 0; i <= n; ++i) first += out[i] * (i + 1);
    phases<<<blocks, threads>>>(in, partial, out, rounds, n);
    cudaDeviceSynchronize();
    long long second = 0;
    for (int i = 0; i <= n; ++i) second += out[i] * (i + 1);
    std::printf("%d %d %lld %lld\n", cooperative, out[0], first, second);
    return 0;
}
"""


def _grid_phases_expected(blocks: int = 4, threads: int = 64) -> str:
    n = blocks * threads
    values = [(i * 7) % 13 for i in range(n)]
    now = list(values)
    for _ in range(3):
        now = [now[i] + now[(i + threads) % n] for i in range(n)]
    out = [sum(values)] + [v + n for v in now]
    weighted = sum(v * (i + 1) for i, v in enumerate(out))
    return f"1 {sum(values)} {weighted} {weighted}"


@pytest.mark.parametrize("threads", [1, 2])
def test_grid_sync_splits_the_kernel_and_its_blocks_wait_for_each_other(tmp_path, threads):
    """cooperative groups' grid.sync() (a grid-wide reduction, then rounds that read other blocks'
    last round), launched by cudaLaunchCooperativeKernel and by <<<...>>>: each block runs on a
    thread of its own and waits at the grid's barriers, whatever OMP_NUM_THREADS is."""
    result, run = _port_and_run(GRID_PHASES, tmp_path, "phases", threads)
    assert "cudacpu::GridBarrier cudacpu_grid(gridDim);" in result.cpp and "cudacpu_grid.wait();" in result.cpp
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == _grid_phases_expected()


def test_a_grid_larger_than_can_run_together_stops_with_a_message(tmp_path):
    _, run = _port_and_run(GRID_PHASES.replace("const int blocks = 4,", "const int blocks = 5000,"), tmp_path, "phases")
    assert run.returncode != 0 and "launched with 5000 blocks; at most 4096 run together" in run.stderr


REDUCE_BY_FUNCTION = HEAD + r"""
#include <cstdio>
#include <cmath>
// cg::reduce combining with a __device__ function of the program, on a struct (online softmax).
struct __align__(8) MaxSum { float maxval; float sum; };
__device__ __forceinline__ MaxSum combine(MaxSum a, MaxSum b) {
    MaxSum big = a.maxval > b.maxval ? a : b, small = a.maxval > b.maxval ? b : a;
    MaxSum r; r.maxval = big.maxval; r.sum = big.sum + small.sum * expf(small.maxval - big.maxval);
    return r;
}
__device__ int add_ints(int a, int b) { return a + b; }
__global__ void rows(const float* x, float* maxes, float* sums, int* counts, int C) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    MaxSum part; part.maxval = -INFINITY; part.sum = 0.0f;
    for (int i = warp.thread_rank(); i < C; i += warp.size()) part = combine(part, {x[row * C + i], 1.0f});
    MaxSum total = cg::reduce(warp, part, combine);
    int n = cg::reduce(warp, 1, &add_ints);
    if (warp.thread_rank() == 0) { maxes[row] = total.maxval; sums[row] = total.sum; counts[row] = n; }
}
int main() {
    const int rows_n = 4, C = 100;
    float *x, *maxes, *sums; int* counts;
    cudaMallocManaged(&x, rows_n * C * sizeof(float));
    cudaMallocManaged(&maxes, rows_n * sizeof(float));
    cudaMallocManaged(&sums, rows_n * sizeof(float));
    cudaMallocManaged(&counts, rows_n * sizeof(int));
    for (int i = 0; i < rows_n * C; i++) x[i] = (float)((i * 37) % 23) / 7.0f;
    rows<<<2, 64>>>(x, maxes, sums, counts, C);
    cudaDeviceSynchronize();
    int bad = 0;
    for (int r = 0; r < rows_n; r++) {
        float m = -INFINITY; double s = 0;
        for (int i = 0; i < C; i++) m = fmaxf(m, x[r * C + i]);
        for (int i = 0; i < C; i++) s += exp((double)x[r * C + i] - m);
        bad += maxes[r] != m || fabs(sums[r] - s) > 1e-3 * s || counts[r] != 32;
    }
    printf(bad ? "bad\n" : "ok\n");
}
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_reduce_combining_with_a_device_function_of_the_program(tmp_path, threads):
    _, run = _port_and_run(REDUCE_BY_FUNCTION, tmp_path, "online", threads)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr
