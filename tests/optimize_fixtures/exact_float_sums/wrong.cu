// What an unsafe optimization of kernel.cu computes: the same sums in another association order
// (interleaved tree, ascending shuffle offsets, two partial sums per row as a vectorizer keeps).
// The checks must reject it: tests/test_optimize_exactness.py.
#define BLOCK 64
#define BIG 1048576.0f

__global__ void tree_kernel(const float* x, float* tree_out, int n)
{
    __shared__ float s[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + tid;
    float v = (i < n) ? x[i] : 0.0f;
    s[tid] = v + ((tid & 1) ? -BIG : BIG);
    __syncthreads();
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        tree_out[blockIdx.x] = s[0];
}

__global__ void warp_kernel(const float* x, float* down_out, float* xor_out, int n)
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

__global__ void serial_kernel(const float* x, float* serial_out, int rows, int k)
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
