__global__ void xor_allreduce_kernel(const float* x, float* seg_sum, float* warp_max, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    float s = v;
    for (int mask = 8; mask > 0; mask >>= 1)
        s += __shfl_xor_sync(0xffffffff, s, mask, 16);
    float m = v;
    for (int mask = 16; mask > 0; mask >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, mask));
    if (i < n) {
        seg_sum[i] = s;
        warp_max[i] = m;
    }
}
