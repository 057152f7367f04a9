// NaN and Inf through reductions. Inputs hold NaN, +-Inf, +-0 and the largest float. A select
// `(b > a) ? b : a` keeps a NaN only when it is already the left operand, so a max-tree's result
// depends on its order; fmaxf/fminf drop NaNs unless both are NaN; sums of the largest floats
// overflow to Inf, and Inf + -Inf is NaN; `v != v` counts NaNs. Fast-math (finite math) or a
// reordered reduction changes these results.
#define BLOCK 64

__global__ void tree_kernel(const float* x, float* tmax, float* tsum, int n)
{
    __shared__ float smax[BLOCK];
    __shared__ float ssum[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    float v = (i < n) ? x[i] : 0.0f;
    smax[tid] = v;
    ssum[tid] = v;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            float a = smax[tid], b = smax[tid + stride];
            smax[tid] = (b > a) ? b : a;
            ssum[tid] += ssum[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        tmax[blockIdx.x] = smax[0];
        tsum[blockIdx.x] = ssum[0];
    }
}

__global__ void warp_kernel(const float* x, float* wmax, float* wmin, int* nan_count, int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int lane = threadIdx.x % 32;
    float v = (i < n) ? x[i] : 0.0f;
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

__global__ void row_kernel(const float* x, float* row_max, int* row_below, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float m = x[r * k];
    int below = 0;
    for (int j = 1; j < k; ++j) {
        float v = x[r * k + j];
        m = (v > m) ? v : m;
        below += (v < m) ? 1 : 0;
    }
    row_max[r] = m;
    row_below[r] = below;
}
