// Float sums of values of very different magnitudes: every element is v + 2^20 or v - 2^20
// (alternating by index) with v in [-1, 1). Partial sums are large and rounded coarsely until
// the big terms cancel, so each result is exact only for the kernel's own association order:
// a tree in shared memory, a warp-shuffle tree (down and butterfly), a per-thread serial loop.
// Any other order (serial instead of tree, vectorized partial sums, reassociation) is far off.
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
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
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
    for (int offset = 16; offset > 0; offset >>= 1)
        d += __shfl_down_sync(0xffffffffu, d, offset);
    if (lane == 0)
        down_out[i / 32] = d;
    float b = v;
    for (int mask = 16; mask > 0; mask >>= 1)
        b += __shfl_xor_sync(0xffffffffu, b, mask);
    xor_out[i] = b;
}

__global__ void serial_kernel(const float* x, float* serial_out, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float acc = 0.0f;
    for (int j = 0; j < k; ++j)
        acc += x[r * k + j] + ((j & 1) ? -BIG : BIG);
    serial_out[r] = acc;
}
