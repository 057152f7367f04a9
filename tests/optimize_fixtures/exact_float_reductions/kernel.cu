// Float reductions whose exact results depend on their association order.
//
// Sums of values of very different magnitudes: every element of x is v + 2^20 or v - 2^20
// (alternating by index) with v in [-1, 1). Partial sums are large and rounded coarsely until the
// big terms cancel, so each result is exact only for the kernel's own order: a tree in shared
// memory, a warp-shuffle tree (down and butterfly), a per-thread serial loop. Any other order
// (serial instead of tree, vectorized partial sums, reassociation) is far off.
//
// NaN and Inf through reductions: `special` holds NaN, +-Inf, +-0 and the largest float. A
// select `(b > a) ? b : a` keeps a NaN only when it is already the left operand, so a max-tree's
// result depends on its order; fmaxf/fminf (and CUDA's min/max of floats) drop NaNs unless both
// are NaN; sums of the largest floats overflow to Inf, and Inf + -Inf is NaN; `v != v` counts
// NaNs. Finite-math assumptions or a reordered reduction change these results.

#define BLOCK 64
#define BIG 1048576.0f

__global__ void tree_sum_kernel(const float* x, float* tree_out, int n)
{
    __shared__ float s[BLOCK];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    float v = (i < n) ? x[i] : 0.0f;
    s[t] = v + ((t & 1) ? -BIG : BIG);
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        tree_out[blockIdx.x] = s[0];
}

__global__ void warp_sum_kernel(const float* x, float* down_out, float* xor_out, int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x % 32;
    float v = ((i < n) ? x[i] : 0.0f) + ((lane & 1) ? -BIG : BIG);
    float d = v;
    for (int offset = 16; offset > 0; offset >>= 1)
        d += __shfl_down_sync(0xffffffffu, d, offset);
    if (lane == 0)
        down_out[i / 32] = d;
    float b = v;
    for (int mask = 16; mask > 0; mask >>= 1)
        b += __shfl_xor_sync(0xffffffffu, b, mask);
    xor_out[i] = b;
}

__global__ void serial_sum_kernel(const float* x, float* serial_out, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j)
        acc += x[r * k + j] + ((j & 1) ? -BIG : BIG);
    serial_out[r] = acc;
}

__global__ void tree_nan_kernel(const float* special, float* tmax, float* tsum, int n)
{
    __shared__ float smax[BLOCK];
    __shared__ float ssum[BLOCK];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + t;
    float v = (i < n) ? special[i] : 0.0f;
    smax[t] = v;
    ssum[t] = v;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) {
            float a = smax[t], b = smax[t + stride];
            smax[t] = (b > a) ? b : a;
            ssum[t] += ssum[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        tmax[blockIdx.x] = smax[0];
        tsum[blockIdx.x] = ssum[0];
    }
}

__global__ void warp_nan_kernel(const float* special, float* wmax, float* wmin, int* nan_count, int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x % 32;
    float v = (i < n) ? special[i] : 0.0f;
    float hi = v;
    for (int mask = 16; mask > 0; mask >>= 1)
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, mask));
    wmax[i] = hi;
    float lo = v;
    for (int offset = 16; offset > 0; offset >>= 1)
        lo = fminf(lo, __shfl_down_sync(0xffffffffu, lo, offset));
    unsigned int nans = __ballot_sync(0xffffffffu, v != v);
    if (lane == 0) {
        wmin[i / 32] = lo;
        nan_count[i / 32] = __popc(nans);
    }
}

__global__ void row_nan_kernel(const float* special, float* row_max, float* row_min, int* row_below, int rows,
                               int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float m = special[r * k], lo = m;
    int below = 0;
    for (int j = 1; j < k; ++j) {
        float v = special[r * k + j];
        m = (v > m) ? v : m;
        lo = min(lo, v);
        below += (v < m) ? 1 : 0;
    }
    row_max[r] = m;
    row_min[r] = lo;
    row_below[r] = below;
}
