"""The lowering, compiled with real g++ -fopenmp and run: each test checks results computed
on the CPU from the same algorithm written plainly in the driver."""

from tools.cuda import lower_source

from cuda_fixtures.build import build_and_run, include_args, lowered


TILED = r"""
#define TILE 16
__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        As[ty][tx] = (row < M && t * TILE + tx < K) ? A[row * K + t * TILE + tx] : 0.0f;
        Bs[ty][tx] = (t * TILE + ty < K && col < N) ? B[(t * TILE + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// Inclusive Hillis-Steele scan of one block: barriers inside a loop, a value kept across them.
__global__ void block_scan(const int* in, int* out) {
    extern __shared__ int buf[];
    unsigned int t = threadIdx.x;
    buf[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned int offset = 1; offset < blockDim.x; offset *= 2) {
        int add = t >= offset ? buf[t - offset] : 0;
        __syncthreads();
        buf[t] += add;
        __syncthreads();
    }
    out[blockIdx.x * blockDim.x + t] = buf[t];
}
"""

TILED_MAIN = r"""
#include <vector>
int main() {
    const int M = 37, N = 41, K = 53;
    std::vector<float> A(M * K), B(K * N), C(M * N, -1.0f);
    for (int i = 0; i < M * K; ++i) A[i] = (i % 7) * 0.25f - 0.5f;
    for (int i = 0; i < K * N; ++i) B[i] = (i % 5) * 0.5f - 1.0f;
    cudacpu_kernels::matmul(dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, A.data(), B.data(), C.data(), M, N, K);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float ref = 0;
            for (int k = 0; k < K; ++k) ref += A[i * K + k] * B[k * N + j];
            if (std::fabs(ref - C[i * N + j]) > 1e-3f) { std::printf("matmul %d %d: %f vs %f\n", i, j, C[i * N + j], ref); return 1; }
        }
    const int blocks = 3, threads = 128;
    std::vector<int> in(blocks * threads), out(blocks * threads);
    for (int i = 0; i < blocks * threads; ++i) in[i] = (i * 37) % 11 - 5;
    cudacpu_kernels::block_scan(dim3(blocks), dim3(threads), threads * sizeof(int), in.data(), out.data());
    for (int b = 0; b < blocks; ++b) {
        int run = 0;
        for (int t = 0; t < threads; ++t) {
            run += in[b * threads + t];
            if (out[b * threads + t] != run) { std::printf("scan %d %d: %d vs %d\n", b, t, out[b * threads + t], run); return 1; }
        }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_barriers_inside_loops_tiled_matmul_and_block_scan(tmp_path):
    cpp = lowered(TILED)
    assert "cudacpu::PerThread<float> acc" in cpp  # acc lives across the barriers
    assert "for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {" in cpp  # the tile loop is hoisted
    assert build_and_run(cpp, TILED_MAIN, tmp_path).strip() == "ok"


WARP = r"""
__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// Block sum: shuffles inside a loop (inlined device function), masked warp 0, partial last warp.
__global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float warp_totals[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = warp_sum(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)((blockDim.x + 31) / 32) ? warp_totals[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}

// Every lane gets the warp's maximum (xor butterfly) and the warp's vote counts.
__global__ void warp_votes(const int* x, int* maxes, unsigned* ballots, int* anys, int* alls) {
    int t = threadIdx.x;
    int v = x[t];
    for (int mask = 16; mask > 0; mask /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, mask));
    maxes[t] = v;
    ballots[t] = __ballot_sync(0xffffffffu, x[t] > 0);
    anys[t] = __any_sync(0xffffffffu, x[t] > 90);
    alls[t] = __all_sync(0xffffffffu, x[t] > -1000);
    int up = __shfl_up_sync(0xffffffffu, t, 1, 8);
    if (t == 9) maxes[0] = up;  // lane 9 reads lane 8 of its 8-wide segment: its own value (8 % 8 == 0)
}
"""

WARP_MAIN = r"""
#include <vector>
int main() {
    const int n = 1000, threads = 80, blocks = (n + threads - 1) / threads;
    std::vector<float> x(n), out(blocks);
    for (int i = 0; i < n; ++i) x[i] = (i % 13) * 0.5f;
    cudacpu_kernels::block_sum(dim3(blocks), dim3(threads), 0, x.data(), out.data(), n);
    for (int b = 0; b < blocks; ++b) {
        float ref = 0;
        for (int i = b * threads; i < n && i < (b + 1) * threads; ++i) ref += x[i];
        if (std::fabs(ref - out[b]) > 1e-3f) { std::printf("block %d: %f vs %f\n", b, out[b], ref); return 1; }
    }
    std::vector<int> v(64), maxes(64), anys(64), alls(64);
    std::vector<unsigned> ballots(64);
    for (int t = 0; t < 64; ++t) v[t] = (t * 29) % 97 - 40;
    cudacpu_kernels::warp_votes(dim3(1), dim3(64), 0, v.data(), maxes.data(), ballots.data(), anys.data(), alls.data());
    for (int w = 0; w < 2; ++w) {
        int mx = -1000; unsigned bits = 0; int any = 0;
        for (int l = 0; l < 32; ++l) { mx = std::max(mx, v[w * 32 + l]); bits |= (v[w * 32 + l] > 0 ? 1u : 0u) << l; any |= v[w * 32 + l] > 90; }
        for (int l = (w == 0 ? 1 : 0); l < 32; ++l)
            if (maxes[w * 32 + l] != mx || ballots[w * 32 + l] != bits || anys[w * 32 + l] != any || alls[w * 32 + l] != 1) {
                std::printf("warp %d lane %d\n", w, l); return 1; }
    }
    if (maxes[0] != 8) { std::printf("shfl_up width: %d\n", maxes[0]); return 1; }
    std::printf("ok\n");
    return 0;
}
"""


def test_warp_shuffles_in_loops_votes_and_partial_warps(tmp_path):
    cpp = lowered(WARP)
    assert "cudacpu::shfl_down<float>" in cpp and "__shfl" not in cpp.split("namespace cudacpu_kernels")[1]
    assert build_and_run(cpp, WARP_MAIN, tmp_path).strip() == "ok"


EARLY = r"""
// The guard returns before a barrier-free tail: the thread is skipped, the loop goes on.
__global__ void guarded(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < 3; ++k) {
        if (v > 100.0f) return;
        v = v * 2.0f;
    }
    y[i] = v;
}

// A thread that returned takes no part in the rest of the kernel, barriers included.
__global__ void returns_before_barrier(const int* x, int* y, int n) {
    __shared__ int s[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = 0;
    __syncthreads();
    if (i >= n) return;
    s[t] = x[i];
    __syncthreads();
    y[i] = s[t] + s[(t + 1) % blockDim.x];
}
"""

EARLY_MAIN = r"""
#include <vector>
int main() {
    const int n = 300;
    std::vector<float> x(n), y(n + 16, -7.0f);
    for (int i = 0; i < n; ++i) x[i] = i % 50 == 0 ? 1000.0f : i * 0.5f;
    cudacpu_kernels::guarded(dim3(5), dim3(64), 0, x.data(), y.data(), n);
    for (int i = 0; i < n + 16; ++i) {
        float want = i >= n ? -7.0f : (x[i] > 100.0f ? -7.0f : (x[i] * 2 > 100.0f ? -7.0f : (x[i] * 4 > 100.0f ? -7.0f : x[i] * 8)));
        if (y[i] != want) { std::printf("guarded %d: %f vs %f\n", i, y[i], want); return 1; }
    }
    const int m = 100;
    std::vector<int> xi(m), yi(128, -1);
    for (int i = 0; i < m; ++i) xi[i] = i + 1;
    cudacpu_kernels::returns_before_barrier(dim3(2), dim3(64), 0, xi.data(), yi.data(), m);
    for (int i = 0; i < 128; ++i) {
        int t = i % 64, nb = (i / 64) * 64 + (t + 1) % 64;
        int want = i >= m ? -1 : xi[i] + (nb < m ? xi[nb] : 0);
        if (yi[i] != want) { std::printf("barrier %d: %d vs %d\n", i, yi[i], want); return 1; }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_early_returns(tmp_path):
    cpp = lowered(EARLY)
    assert "exited" in cpp  # the second kernel keeps per-thread exit flags across its barrier
    assert build_and_run(cpp, EARLY_MAIN, tmp_path).strip() == "ok"


INDEX = r"""
__global__ void fill3d(int* out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x + 100 * y + 10000 * z;
}

__global__ void grid_stride(const double* a, double* b, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        b[i] = 2.0 * a[i] + 1.0;
}
"""

INDEX_MAIN = r"""
#include <vector>
int main() {
    const int nx = 19, ny = 7, nz = 5;
    std::vector<int> out(nx * ny * nz, -1);
    cudacpu_kernels::fill3d(dim3(3, 2, 3), dim3(8, 4, 2), 0, out.data(), nx, ny, nz);
    for (int z = 0; z < nz; ++z) for (int y = 0; y < ny; ++y) for (int x = 0; x < nx; ++x)
        if (out[(z * ny + y) * nx + x] != x + 100 * y + 10000 * z) { std::printf("3d %d %d %d\n", x, y, z); return 1; }
    const int n = 10007;
    std::vector<double> a(n), b(n);
    for (int i = 0; i < n; ++i) a[i] = i * 0.5;
    cudacpu_kernels::grid_stride(dim3(4), dim3(96), 0, a.data(), b.data(), n);
    for (int i = 0; i < n; ++i) if (b[i] != 2.0 * a[i] + 1.0) { std::printf("stride %d\n", i); return 1; }
    std::printf("ok\n");
    return 0;
}
"""


def test_3d_indices_and_grid_stride_loop(tmp_path):
    cpp = lowered(INDEX)
    assert "#pragma omp simd" in cpp  # barrier-free thread loops are vectorizable
    assert build_and_run(cpp, INDEX_MAIN, tmp_path).strip() == "ok"


ATOMICS = r"""
#define BLOCK 128
// Tree reduction in shared memory, one atomicAdd per block; integer atomics on global memory.
__global__ void reduce_atomics(const float* x, float* total, int* mx, unsigned* count, unsigned long long* big,
                               int* cas_sum, int n) {
    __shared__ float partial[BLOCK];
    unsigned int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    partial[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(total, partial[0]);
    if (i < n) {
        atomicMax(mx, (int)(x[i] * 10.0f));
        atomicInc(count, 1000000u);
        atomicAdd(big, 3ull);
        int old = *cas_sum, assumed;
        do { assumed = old; old = atomicCAS(cas_sum, assumed, assumed + 1); } while (old != assumed);
    }
}
"""

ATOMICS_MAIN = r"""
#include <vector>
int main() {
    const int n = 5000;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) x[i] = (i % 100) * 0.01f;
    float total = 0; int mx = -1; unsigned count = 0; unsigned long long big = 0; int cas = 0;
    cudacpu_kernels::reduce_atomics(dim3((n + 127) / 128), dim3(128), 0, x.data(), &total, &mx, &count, &big, &cas, n);
    double ref = 0; for (float v : x) ref += v;
    if (std::fabs(total - ref) > 1e-2 || mx != 9 || count != n || big != 3ull * n || cas != n) {
        std::printf("total %f (%f) max %d count %u big %llu cas %d\n", total, ref, mx, count, big, cas); return 1; }
    std::printf("ok\n");
    return 0;
}
"""


def test_shared_tree_reduction_and_atomics_under_two_threads(tmp_path):
    cpp = lowered(ATOMICS)
    assert build_and_run(cpp, ATOMICS_MAIN, tmp_path, threads=2).strip() == "ok"


LEGACY = r"""
// Warp-synchronous code of old: volatile shared memory, no barrier in the last warp.
__device__ void warp_reduce(volatile int* s, unsigned int tid) {
    s[tid] += s[tid + 32]; s[tid] += s[tid + 16]; s[tid] += s[tid + 8];
    s[tid] += s[tid + 4]; s[tid] += s[tid + 2]; s[tid] += s[tid + 1];
}
__global__ void legacy(const int* x, int* out) {
    __shared__ int s[128];
    unsigned int tid = threadIdx.x;
    s[tid] = x[blockIdx.x * 128 + tid];
    __syncthreads();
    if (tid < 64) s[tid] += s[tid + 64];
    __syncthreads();
    if (tid < 32) warp_reduce(s, tid);
    if (tid == 0) out[blockIdx.x] = s[0];
}

// Trip counts differ between threads around a barrier (a masked loop).
__global__ void uneven(const int* steps, int* out) {
    __shared__ int rounds;
    int t = threadIdx.x;
    int v = 0;
    if (t == 0) rounds = 0;
    __syncthreads();
    for (int k = 0; k < steps[t]; ++k) {
        v += k;
        if (t == 0) rounds++;
        __syncwarp();
    }
    out[t] = v * 1000 + (t == 0 ? rounds : 0);
}

// A uniform loop with barriers and a thread-dependent `continue` (masked, with a skip flag).
__global__ void cont(const int* x, int* out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    int acc = 0;
    for (int k = 0; k < 8; ++k) {
        s[t] = x[t] + k;
        __syncthreads();
        int nb = s[(t + 1) % 64];
        __syncthreads();
        if ((nb + k) % 3 == 0) continue;
        acc += nb;
    }
    out[t] = acc;
}
"""

LEGACY_MAIN = r"""
#include <vector>
int main() {
    std::vector<int> x(3 * 128), out(3);
    for (int i = 0; i < 3 * 128; ++i) x[i] = i % 17 - 8;
    cudacpu_kernels::legacy(dim3(3), dim3(128), 0, x.data(), out.data());
    for (int b = 0; b < 3; ++b) {
        int ref = 0; for (int i = 0; i < 128; ++i) ref += x[b * 128 + i];
        if (out[b] != ref) { std::printf("legacy %d: %d vs %d\n", b, out[b], ref); return 1; }
    }
    std::vector<int> steps(40), res(40);
    for (int t = 0; t < 40; ++t) steps[t] = t % 6;
    cudacpu_kernels::uneven(dim3(1), dim3(40), 0, steps.data(), res.data());
    for (int t = 0; t < 40; ++t) {
        int want = (steps[t] * (steps[t] - 1) / 2) * 1000 + (t == 0 ? steps[0] : 0);
        if (res[t] != want) { std::printf("uneven %d: %d vs %d\n", t, res[t], want); return 1; }
    }
    std::vector<int> cx(64), cout(64);
    for (int i = 0; i < 64; ++i) cx[i] = i * 7 % 13;
    cudacpu_kernels::cont(dim3(1), dim3(64), 0, cx.data(), cout.data());
    for (int t = 0; t < 64; ++t) {
        int acc = 0;
        for (int k = 0; k < 8; ++k) { int nb = cx[(t + 1) % 64] + k; if ((nb + k) % 3 == 0) continue; acc += nb; }
        if (acc != cout[t]) { std::printf("continue %d: %d vs %d\n", t, cout[t], acc); return 1; }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_warp_synchronous_volatile_code_and_divergent_trip_counts(tmp_path):
    cpp = lowered(LEGACY)
    assert "in_loop" in cpp and "skipped" in cpp  # the uneven loops run masked
    assert build_and_run(cpp, LEGACY_MAIN, tmp_path).strip() == "ok"


TEMPLATES = r"""
__device__ int lane_id() { return threadIdx.x & 31; }

template <typename T>
__device__ T warp_reduce(T v) {
    for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down(v, o);
    return v;
}

template <typename T>
__device__ T block_reduce(T v) {
    static __shared__ T partials[32];
    int lane = lane_id(), w = threadIdx.x / 32;
    v = warp_reduce(v);
    if (lane == 0) partials[w] = v;
    __syncthreads();
    v = (threadIdx.x < blockDim.x / 32) ? partials[lane] : T(0);
    if (w == 0) v = warp_reduce(v);
    return v;
}

template <typename T, int N>
__global__ void sums(const T* x, T* out, int* counts) {
    T v = x[blockIdx.x * blockDim.x + threadIdx.x];
    T total = block_reduce(v);
    int c = __syncthreads_count(v > T(N));
    if (threadIdx.x == 0) { out[blockIdx.x] = total; counts[blockIdx.x] = c; }
}
"""

TEMPLATES_MAIN = r"""
#include <vector>
int main() {
    std::vector<double> x(4 * 128), out(4); std::vector<int> counts(4);
    for (int i = 0; i < 512; ++i) x[i] = i % 9;
    cudacpu_kernels::sums<double, 4>(dim3(4), dim3(128), 0, x.data(), out.data(), counts.data());
    for (int b = 0; b < 4; ++b) {
        double ref = 0; int c = 0;
        for (int i = 0; i < 128; ++i) { ref += x[b * 128 + i]; c += x[b * 128 + i] > 4; }
        if (ref != out[b] || c != counts[b]) { std::printf("block %d: %f vs %f, %d vs %d\n", b, out[b], ref, counts[b], c); return 1; }
    }
    std::printf("ok\n");
}
"""


def test_templates_inlined_template_functions_static_shared_and_coordinate_functions(tmp_path):
    cpp = lowered(TEMPLATES)
    assert "template <typename T, int N>\nvoid sums(" in cpp
    assert "::threadIdx = threadIdx;" in cpp  # lane_id() reads the coordinates, kept as a function
    assert build_and_run(cpp, TEMPLATES_MAIN, tmp_path).strip() == "ok"


DIRECT_INIT = r"""
// Locals initialised with parentheses and braces, live across a barrier (per-thread copies) and not.
__global__ void direct_init(int* out, int n) {
    __shared__ int s[64];
    unsigned int w(n / 32);
    long long scaled(static_cast<long long>(n) * (threadIdx.x + 1));
    int lane{static_cast<int>(threadIdx.x % 32)};
    s[threadIdx.x] = lane + w;
    __syncthreads();
    unsigned int after(w + 1u);
    out[threadIdx.x] = s[63 - threadIdx.x] + w + after + (int)(scaled % 7);
}
"""

DIRECT_INIT_MAIN = r"""
#include <vector>
int main() {
    std::vector<int> out(64);
    cudacpu_kernels::direct_init(dim3(1), dim3(64), 0, out.data(), 64);
    for (int t = 0; t < 64; ++t) {
        int expected = (63 - t) % 32 + 2 + 2 + 3 + (int)((64LL * (t + 1)) % 7);
        if (out[t] != expected) { std::printf("direct_init %d: %d vs %d\n", t, out[t], expected); return 1; }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_direct_initialised_locals(tmp_path):
    assert build_and_run(lowered(DIRECT_INIT), DIRECT_INIT_MAIN, tmp_path).strip() == "ok"


BLOCKS_WAITING = r"""
// Block b waits for a flag that block b + 1 sets (the last block starts the chain): correct on a
// GPU, whose blocks are resident together, as codes like Barnes-Hut's tree sort assume.
__global__ void chain(volatile int* flag, int* order, int* next) {
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        if (b != gridDim.x - 1) while (flag[b + 1] == 0) { }
        order[b] = atomicAdd(next, 1);
        flag[b] = 1;
    }
}
"""

BLOCKS_WAITING_MAIN = r"""
#include <vector>
int main() {
    const int blocks = 12;
    std::vector<int> flag(blocks, 0), order(blocks, -1), next(1, 0);
    cudacpu_kernels::chain(dim3(blocks), dim3(32), 0, flag.data(), order.data(), next.data());
    for (int b = 0; b < blocks; ++b)
        if (order[b] != blocks - 1 - b) { std::printf("chain %d: %d\n", b, order[b]); return 1; }
    std::printf("ok\n");
    return 0;
}
"""


def test_blocks_that_wait_for_other_blocks_run_resident_together(tmp_path):
    import os
    import subprocess

    cpp = lowered(BLOCKS_WAITING)
    assert "num_threads(cudacpu::coresident_threads(gridDim))" in cpp
    src = tmp_path / "chain.cpp"
    src.write_text(cpp + "\n" + BLOCKS_WAITING_MAIN)
    exe = tmp_path / "chain"
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), str(src), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    for threads in ("1", "2"):  # one or two OpenMP threads for 12 blocks: a block-at-a-time schedule never ends
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, OMP_NUM_THREADS=threads))
        assert run.stdout.strip() == "ok", run.stdout + run.stderr


LAMBDAS_AND_PLAIN_STRUCTS = r"""
struct Acc {  // no default constructor: a per-thread copy of it starts as zeroed bytes
    float sum; int count;
    __device__ Acc(float v, int c) : sum(v), count(c) {}
    __device__ void add(float v) { sum += v; ++count; }
};
__global__ void neighbours(const float* in, float* out, int n) {
    __shared__ float tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Acc acc(in[i], 1);
    float bias = in[0];
    bias += 1.0f;  // written after its declaration: kept per thread, which the lambda below refers to
    auto clamp = [&](float v) { if (v < 0.0f) return 0.0f; return v + bias; };  // returns from itself
    auto at = [](const float* p, int j) { return p[j]; };
    tile[threadIdx.x] = in[i];
    __syncthreads();
    acc.add(tile[(threadIdx.x + 1) % blockDim.x]);
    if (threadIdx.x == 0 && n < 0) return;  // the kernel's own return
    out[i] = clamp(acc.sum - 4.0f) + acc.count + at(in, i);
}
"""

LAMBDAS_AND_PLAIN_STRUCTS_MAIN = r"""
#include <vector>
int main() {
    const int blocks = 3, threads = 64, n = blocks * threads;
    std::vector<float> in(n), out(n, -1.0f);
    for (int i = 0; i < n; ++i) in[i] = (i * 7) % 13 * 0.5f;
    cudacpu_kernels::neighbours(dim3(blocks), dim3(threads), 0, in.data(), out.data(), n);
    for (int i = 0; i < n; ++i) {
        int b = i / threads, t = i % threads;
        float sum = in[i] + in[b * threads + (t + 1) % threads] - 4.0f;
        float want = (sum < 0.0f ? 0.0f : sum + in[0] + 1.0f) + 2 + in[i];
        if (out[i] != want) { std::printf("%d: %f vs %f\n", i, out[i], want); return 1; }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_lambdas_and_structs_without_default_constructor_across_barriers(tmp_path):
    """A lambda returns from itself, not from the kernel; one of references is made again after a
    barrier (what it refers to kept per thread); a struct with no default constructor lives across it."""
    assert build_and_run(lowered(LAMBDAS_AND_PLAIN_STRUCTS), LAMBDAS_AND_PLAIN_STRUCTS_MAIN, tmp_path).strip() == "ok"
    by_value = LAMBDAS_AND_PLAIN_STRUCTS.replace("auto clamp = [&]", "auto clamp = [=]")
    problems = [str(u) for u in lower_source(by_value, "k.cu").unsupported]
    assert len(problems) == 1 and "per-thread lambda" in problems[0] and "k.cu:13" in problems[0], problems


COMPILE_TIME_NAMES = r"""
template <int N, int P = 1>  // P is left to its default by the call below
__device__ float mirrored(const float* a) {
    constexpr int M = N * P;  // sizes a __shared__ array, which lives outside the thread loops
    typedef float value_t;
    using pair_of_values = value_t[M / 16];
    __shared__ value_t s[M];
    value_t kept[M / 16];  // per thread, across the barrier: its type names M
    pair_of_values twice;
    kept[0] = a[threadIdx.x];
    twice[1] = 2 * kept[0];
    s[threadIdx.x] = kept[0];
    __syncthreads();
    return s[M - 1 - threadIdx.x] + (twice[1] - 2 * kept[0]);
}
__global__ void k(const float* a, float* b) {
    typedef float2 pair_t;  // used after the barrier, by a declaration recomputed there
    pair_t* pairs = (pair_t*)b;
    float v = mirrored<32>(a);
    __syncthreads();
    if (threadIdx.x < 16) pairs[threadIdx.x].y = v;
}
"""

COMPILE_TIME_NAMES_MAIN = r"""
int main() {
    float a[32], b[32];
    for (int i = 0; i < 32; ++i) { a[i] = i; b[i] = -1; }
    cudacpu_kernels::k(dim3(1), dim3(32), 0, a, b);
    for (int i = 0; i < 16; ++i)
        if (b[2 * i] != -1 || b[2 * i + 1] != 31 - i) { std::printf("%d: %f %f\n", i, b[2 * i], b[2 * i + 1]); return 1; }
    std::printf("ok\n");
    return 0;
}
"""


def test_constants_aliases_and_default_template_arguments_outlive_the_split(tmp_path):
    """A kernel's or an inlined function's constexpr and typedef are seen by whatever names them
    after a barrier or outside the thread loops; a template parameter left to its default takes it."""
    assert build_and_run(lowered(COMPILE_TIME_NAMES), COMPILE_TIME_NAMES_MAIN, tmp_path).strip() == "ok"


GUARDED_FUNCTIONS = r"""
__device__ void stage(float* a, int n) {
    if (n <= 0) return;  // uniform: the rest runs for the whole block, or not at all
    __shared__ float s[64];
    s[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    if (threadIdx.x >= n) { return; }  // per thread: the rest runs for the threads below n
    a[threadIdx.x] = s[n - 1 - threadIdx.x];
}
__global__ void k(float* a, int n, float* flag) {
    stage(a, n);
    if (threadIdx.x == 0) flag[blockIdx.x] = 1.0f;  // after the call, every thread goes on
}
"""

GUARDED_FUNCTIONS_MAIN = r"""
int main() {
    for (int n : {0, 40}) {
        float a[64], flag[1] = {0};
        for (int i = 0; i < 64; ++i) a[i] = i;
        cudacpu_kernels::k(dim3(1), dim3(64), 0, a, n, flag);
        for (int i = 0; i < 64; ++i)
            if (a[i] != (i < n ? n - 1 - i : i)) { std::printf("n=%d %d: %f\n", n, i, a[i]); return 1; }
        if (flag[0] != 1.0f) { std::printf("n=%d: flag not set\n", n); return 1; }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_guard_returns_in_synchronizing_functions(tmp_path):
    """`if (c) return;` at the top level of an inlined void function leaves the rest of it to the
    threads where c is false, whether c is the block's or each thread's; the caller goes on for all.
    Other early returns are reported, with file and line."""
    assert build_and_run(lowered(GUARDED_FUNCTIONS), GUARDED_FUNCTIONS_MAIN, tmp_path).strip() == "ok"
    source = ("__device__ float body(float* a, int n) { if (n <= 0) return 0.0f; __shared__ float s;\n"
              "  if (threadIdx.x == 0) s = 2.0f; __syncthreads(); return s; }\n"
              "__global__ void k(float* a, int n) { a[threadIdx.x] = body(a, n); }\n")
    problems = [str(u) for u in lower_source(source, "k.cu").unsupported]
    assert len(problems) == 1 and problems[0].startswith("k.cu:3: unsupported early return in synchronizing "
                                                         "function: body returns before its end"), problems


SYNC_METHODS = r"""
template <typename T>
__device__ T down(T v, unsigned d, int width = 32) { return __shfl_down_sync(0xffffffffu, v, d, width); }

template <typename T>
struct Sum {
    int width;
    __device__ T combine(T a, T b) const { return a + b; }
    __device__ T lane_down(T v, int o) const { return down(v, o, width); }
};

template <typename T, class Op>
__device__ T warp_reduce(T v, const Op& op) {
    for (int o = 16; o > 0; o >>= 1) v = op.combine(v, op.lane_down(v, o));
    return v;
}

__global__ void k(const float* in, float* out) {
    Sum<float> op = {32};
    float v = warp_reduce(in[threadIdx.x], op);
    float one = down(1.0f, 1u);
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v + one;
}
"""

SYNC_METHODS_MAIN = r"""
int main() {
    float in[64], out[2];
    for (int i = 0; i < 64; ++i) in[i] = i;
    cudacpu_kernels::k(dim3(1), dim3(64), 0, in, out);
    if (out[0] != 497.0f || out[1] != 1521.0f) { std::printf("%f %f\n", out[0], out[1]); return 1; }
    std::printf("ok\n");
    return 0;
}
"""


def test_methods_with_warp_intrinsics_are_inlined_with_their_object(tmp_path):
    """A method that shuffles (through a function with a default argument) is inlined where a
    kernel calls it, also through an object of a template's type (`op.lane_down(v, o)` in a function
    template): its members read from the caller's object, its class's template arguments from the
    object's type. The class keeps the method's declaration."""
    cpp = lowered(SYNC_METHODS)
    assert "T lane_down(T v, int o) const ;" in cpp
    assert build_and_run(cpp, SYNC_METHODS_MAIN, tmp_path).strip() == "ok"


CLASS_ALIASES = r"""
template <typename T>
__device__ T down(T v, unsigned d, int width = 32) { return __shfl_down_sync(0xffffffffu, v, d, width); }

template <typename S, typename I>
struct Data { S mean; I n; };

struct Scale {
    typedef float acc_t;
    float by;
    __device__ acc_t scaled_down(acc_t v, int o) const { acc_t r = down(v, o); return static_cast<acc_t>(by) * r; }
};

template <typename S, typename I>
struct Ops {
    using acc_t = Data<S, I>;
    typedef I count_t;
    __device__ acc_t combine(acc_t a, acc_t b) const { return {a.mean + b.mean, a.n + b.n}; }
    __device__ acc_t lane_down(acc_t acc, int o) const {
        return {down(acc.mean, o), static_cast<count_t>(down(acc.n, o))};
    }
};

template <typename T, class Op>
__device__ T warp_reduce(T v, const Op& op) {
    for (int o = 16; o > 0; o >>= 1) v = op.combine(v, op.lane_down(v, o));
    return v;
}

template <typename T>
__global__ void k(const T* in, T* out, int* counts) {
    using Op = Ops<T, int>;
    Op op;
    Scale half = {0.5f};
    Data<T, int> v = {in[threadIdx.x], 1};
    v = warp_reduce(v, op);
    float w = 1.0f;
    for (int o = 16; o > 0; o >>= 1) w += half.scaled_down(w, o);
    if (threadIdx.x % 32 == 0) { out[threadIdx.x / 32] = v.mean + w; counts[threadIdx.x / 32] = v.n; }
}
"""

CLASS_ALIASES_MAIN = r"""
int main() {
    double in[64], out[2];
    int counts[2];
    for (int i = 0; i < 64; ++i) in[i] = i % 7;
    cudacpu_kernels::k<double>(dim3(1), dim3(64), 0, in, out, counts);
    for (int w = 0; w < 2; ++w) {
        float lanes[32];  // half.scaled_down's tree, lane by lane (a lane past the warp reads its own value)
        for (int l = 0; l < 32; ++l) lanes[l] = 1.0f;
        for (int o = 16; o > 0; o >>= 1) {
            float next[32];
            for (int l = 0; l < 32; ++l) next[l] = lanes[l] + 0.5f * lanes[l + o < 32 ? l + o : l];
            for (int l = 0; l < 32; ++l) lanes[l] = next[l];
        }
        double sum = 0;
        for (int l = 0; l < 32; ++l) sum += in[w * 32 + l];
        if (out[w] != sum + lanes[0] || counts[w] != 32) { std::printf("%d: %f %d\n", w, out[w], counts[w]); return 1; }
    }
    std::printf("ok\n");
    return 0;
}
"""


def test_inlined_methods_name_their_class_aliases(tmp_path):
    """An inlined method's body is outside its class: the class's aliases (`typedef float acc_t;`, a
    class template's `using acc_t = Data<S, I>;`) are spelled as the types they name, in the
    template arguments of the object's type, also where a member of such an object
    (`down(acc.mean, o)`) gives a helper its template argument."""
    assert build_and_run(lowered(CLASS_ALIASES), CLASS_ALIASES_MAIN, tmp_path).strip() == "ok"


THREAD_ID_THROUGH_A_TEMPLATE_S_CLASS = r"""
struct Block1D { static __device__ int Tid() { return threadIdx.x; } };
template <typename T, typename B = Block1D>
__device__ T block_sum(T v, T* shared) {
    const int tid = B::Tid();
    const int lid = tid % 32, wid = tid / 32;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    __syncthreads();
    if (lid == 0) shared[wid] = v;
    __syncthreads();
    v = tid < 2 ? shared[lid] : 0;
    if (wid == 0) for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}
__global__ void k(const float* in, float* out) {
    __shared__ float s[32];
    float v = block_sum(in[threadIdx.x], s);
    if (threadIdx.x == 0) out[0] = v;
}
"""


def test_a_call_the_parse_cannot_name_is_per_thread(tmp_path):
    """`B::Tid()`, B a template's parameter whose class returns threadIdx.x: the parse names no
    callee, and the value may differ per thread (it was taken for the block's, hoisted out of the
    thread loop: the port did not build)."""
    main = ("#include <cstdio>\nint main() { float in[64], out[1] = {0};\n"
            "  for (int i = 0; i < 64; ++i) in[i] = (float)i;\n"
            "  cudacpu_kernels::k(dim3(1), dim3(64), 0, in, out);\n  std::printf(\"%g\\n\", out[0]); }\n")
    assert build_and_run(lowered(THREAD_ID_THROUGH_A_TEMPLATE_S_CLASS), main, tmp_path).strip() == "2016"


CHUNK_BOUNDS_FROM_AN_EARLIER_DECLARATION = r"""
#define SPAN 96
__global__ void chunk_sums(const int* in, int* out, int nblocks) {
    extern __shared__ int tile[];
    int per_block = SPAN / nblocks;
    int first = per_block * blockIdx.x;
    int last = first + per_block;
    int acc = 0;
    for (int i = first; i < last; i += blockDim.x) {
        tile[threadIdx.x] = in[i + threadIdx.x];
        __syncthreads();
        if (threadIdx.x == 0)
            for (int t = 0; t < blockDim.x; ++t) acc += tile[t];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
"""


def test_block_level_declarations_follow_the_ones_they_read(tmp_path):
    """`int per_block = ...; int first = per_block * blockIdx.x;` read by a loop with barriers:
    both are declared once per block, and `first` was declared above `per_block` (the loop's header
    named it first; the port did not build)."""
    main = ("#include <cstdio>\nint main() { int in[96], out[3] = {0, 0, 0};\n"
            "  for (int i = 0; i < 96; ++i) in[i] = i;\n"
            "  cudacpu_kernels::chunk_sums(dim3(3), dim3(8), 8 * sizeof(int), in, out, 3);\n"
            "  std::printf(\"%d %d %d\\n\", out[0], out[1], out[2]); }\n")
    out = build_and_run(lowered(CHUNK_BOUNDS_FROM_AN_EARLIER_DECLARATION), main, tmp_path)
    assert out.split() == [str(sum(range(b * 32, b * 32 + 32))) for b in range(3)]


AUTO_FROM_SHUFFLES = r"""
template <typename T>
__device__ void merge_pair(T& sum, int& count, T other_sum, int other_count) {
    sum += other_sum;
    count += other_count;
}
template <typename T>
__device__ void warp_merge(T& sum, int& count) {
    for (int o = 16; o > 0; o >>= 1) {
        auto got_sum = __shfl_down_sync(0xffffffffu, sum, o);      // a T, read after the next shuffle
        auto got_count = __shfl_down_sync(0xffffffffu, count, o);  // an int
        merge_pair(sum, count, got_sum, got_count);
    }
}
template <typename T>
__global__ void mean_of(const T* in, T* out) {
    T sum = in[threadIdx.x] * T(0.5);
    int count = 1;
    warp_merge(sum, count);
    if (threadIdx.x == 0) out[0] = sum / count;
}
template __global__ void mean_of<double>(const double*, double*);
"""


def test_auto_variables_of_inlined_templates_take_their_initializers_type(tmp_path):
    """`auto v = __shfl_down_sync(m, x, o)` in an inlined template whose `x` is a `T&`: the parse
    leaves `auto`, and the variable lives across the next shuffle's warp barrier. Its type now
    comes from the exchanged value with the template bound (the kernel was reported unsupported:
    'per-thread auto variable ... its type (auto) is not known'). A variable the kernel passes to
    a template's non-const reference (`warp_merge(sum, count)`, a call the parse leaves dependent)
    is written there: `count` was taken for the constant it starts as, and its sums were lost."""
    main = ("#include <cstdio>\nint main() { double in[32], out[1] = {0};\n"
            "  for (int i = 0; i < 32; ++i) in[i] = i + 0.25;\n"
            "  cudacpu_kernels::mean_of<double>(dim3(1), dim3(32), 0, in, out);\n"
            "  std::printf(\"%.4f\\n\", out[0]); }\n")
    assert build_and_run(lowered(AUTO_FROM_SHUFFLES), main, tmp_path).strip() == "7.8750"


BLOCK_SIZE_PASSED_TO_A_SYNCHRONIZING_TEMPLATE = r"""
template <typename T>
__device__ void gather_warp_leaders(T* x, T& v, int size, int id) {
    if (size > 32) {  // the block's size decides whether the barrier runs: a block-level value
        if (id % 32 == 0) x[id / 32] = v;
        __syncthreads();
        if (id < 32) v = id < size / 32 ? x[id] : T(0);
    }
}
template <typename T>
__global__ void leaders(const T* in, T* out) {
    int size = blockDim.x * blockDim.y;
    int id = threadIdx.y * blockDim.x + threadIdx.x;
    T v = in[id];
    __shared__ T s[32];
    gather_warp_leaders<T>(s, v, size, id);
    if (id < 4) out[id] = v;
}
template __global__ void leaders<float>(const float*, float*);
"""


def test_a_block_level_parameter_is_declared_after_the_variable_it_copies(tmp_path):
    """`size`, the block's thread count, passed to an inlined function whose barrier it guards:
    both the parameter's copy and `size` are declared once per block, and the copy came first
    (`int f_size = size; int size = ...;`: the port did not build)."""
    main = ("#include <cstdio>\nint main() { float in[128], out[4] = {0};\n"
            "  for (int i = 0; i < 128; ++i) in[i] = i;\n"
            "  cudacpu_kernels::leaders<float>(dim3(1), dim3(32, 4), 0, in, out);\n"
            "  std::printf(\"%g %g %g %g\\n\", out[0], out[1], out[2], out[3]); }\n")
    assert build_and_run(lowered(BLOCK_SIZE_PASSED_TO_A_SYNCHRONIZING_TEMPLATE), main, tmp_path).strip() == "0 32 64 96"


TIMED_BLOCKS = r"""
__global__ void timed_min(const float* in, float* out, clock_t* ticks, long long* nanos) {
    extern __shared__ float vals[];
    int t = threadIdx.x;
    long long started = clock64();
    if (t == 0) ticks[blockIdx.x] = clock();
    vals[t] = in[blockIdx.x * blockDim.x + t];
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        __syncthreads();
        if (t < half && vals[t + half] < vals[t]) vals[t] = vals[t + half];
    }
    __syncthreads();
    if (t == 0) {
        out[blockIdx.x] = vals[0];
        ticks[gridDim.x + blockIdx.x] = clock();
        nanos[blockIdx.x] = clock64() - started;
    }
}
"""


def test_a_kernel_that_times_itself_with_the_device_clocks_ports(tmp_path):
    """clock() and clock64() in a kernel (a block timing its own work, as CUDA's clock sample
    does) read the CPU's clocks: non-decreasing, and the kernel's results stay exact."""
    main = ("#include <cstdio>\nint main() { float in[256], out[4]; clock_t ticks[8]; long long nanos[4];\n"
            "  for (int i = 0; i < 256; ++i) in[i] = (i * 37) % 101;\n"
            "  cudacpu_kernels::timed_min(dim3(4), dim3(64), 64 * sizeof(float), in, out, ticks, nanos);\n"
            "  int ordered = 1; for (int b = 0; b < 4; ++b) ordered &= ticks[4 + b] >= ticks[b] && nanos[b] >= 0;\n"
            "  std::printf(\"%g %g %g %g %d\\n\", out[0], out[1], out[2], out[3], ordered); }\n")
    expected = " ".join(f"{min((i * 37) % 101 for i in range(64 * b, 64 * b + 64)):g}" for b in range(4))
    assert build_and_run(lowered(TIMED_BLOCKS), main, tmp_path).strip() == f"{expected} 1"
