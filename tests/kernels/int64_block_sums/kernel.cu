#define BLOCK 128

__global__ void int64_sum_kernel(const long long* x, long long* block_sums, unsigned long long* mixed, int n)
{
    __shared__ long long s[BLOCK];
    int tid = threadIdx.x;
    size_t i = (size_t)blockIdx.x * BLOCK + tid;
    long long v = (i < (size_t)n) ? x[i] : 0;
    s[tid] = v;
    if (i < (size_t)n)
        mixed[i] = (unsigned long long)v * 0x9E3779B97F4A7C15ull + (i << 40);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        block_sums[blockIdx.x] = s[0];
}
