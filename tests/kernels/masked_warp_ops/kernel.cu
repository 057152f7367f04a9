__global__ void masked_kernel(const int* x, int* pair_sum, unsigned int* low_ballot, int* seg_max, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int v = x[i];
    int ps = v;
    unsigned int lb = 0;
    int m = v;
    if (lane < 16) {
        ps = v + __shfl_xor_sync(0x0000ffffu, v, 1);
        lb = __ballot_sync(0x0000ffffu, v > 0);
    } else {
        for (int o = 8; o > 0; o >>= 1)
            m = max(m, __shfl_xor_sync(0xffff0000u, m, o));
    }
    if (i < n) {
        pair_sum[i] = ps;
        low_ballot[i] = lb;
        seg_max[i] = m;
    }
}
