// What an unsafe optimization of kernel.cu computes. Sums in another association order
// (interleaved tree, ascending shuffle offsets, two partial sums per row as a vectorizer keeps);
// max as `(a > b) ? a : b` (NaN kept from the other side, as a max instruction with swapped
// operands does), fmaxf/fminf as plain selects that propagate NaN, NaN tests folded to false
// (finite math). The checks must reject it: tests/test_optimize_exactness.py.
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
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        if (t % (2 * stride) == 0)
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
    for (int offset = 1; offset < 32; offset <<= 1)
        d += __shfl_down_sync(0xffffffffu, d, offset);
    if (lane == 0)
        down_out[i / 32] = d;
    float b = v;
    for (int mask = 1; mask < 32; mask <<= 1)
        b += __shfl_xor_sync(0xffffffffu, b, mask);
    xor_out[i] = b;
}

__global__ void serial_sum_kernel(const float* x, float* serial_out, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float even = 0.0f, odd = 0.0f;
    for (int j = 0; j < k; j += 2) {
        even += x[r * k + j] + BIG;
        odd += x[r * k + j + 1] - BIG;
    }
    serial_out[r] = even + odd;
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
            smax[t] = (a > b) ? a : b;
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
        m = (m > v) ? m : v;
        lo = (v < lo) ? v : lo;
        below += (v >= m) ? 0 : 1;
    }
    row_max[r] = m;
    row_min[r] = lo;
    row_below[r] = below;
}
