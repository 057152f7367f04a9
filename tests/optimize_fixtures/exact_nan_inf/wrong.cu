// What an unsafe optimization of kernel.cu computes: max as `(a > b) ? a : b` (NaN kept from the
// other side, as a max instruction with swapped operands does), fmaxf/fminf as plain selects that
// propagate NaN, NaN tests folded to false (finite math). The checks must reject it:
// tests/test_optimize_exactness.py.
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
            smax[tid] = (a > b) ? a : b;
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
    for (int mask = 16; mask > 0; mask >>= 1) {
        float o = __shfl_xor_sync(0xffffffffu, hi, mask);
        hi = (hi > o) ? hi : o;
    }
    wmax[i] = hi;
    float lo = v;
    for (int offset = 16; offset > 0; offset >>= 1) {
        float o = __shfl_down_sync(0xffffffffu, lo, offset);
        lo = (lo < o) ? lo : o;
    }
    unsigned int nans = __ballot_sync(0xffffffffu, false);
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
        m = (m > v) ? m : v;
        below += (v >= m) ? 0 : 1;
    }
    row_max[r] = m;
    row_below[r] = below;
}
