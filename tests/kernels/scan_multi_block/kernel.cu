__device__ int warp_inclusive_scan(int v, int lane)
{
    for (int offset = 1; offset < 32; offset <<= 1) {
        int t = __shfl_up_sync(0xffffffff, v, offset);
        if (lane >= offset)
            v += t;
    }
    return v;
}

__global__ void block_scan_kernel(const int* in, int* out, int* block_sums, int n)
{
    __shared__ int warp_tot[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int v = (i < n) ? in[i] : 0;
    v = warp_inclusive_scan(v, lane);
    if (lane == 31)
        warp_tot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int nwarps = blockDim.x >> 5;
        int t = (lane < nwarps) ? warp_tot[lane] : 0;
        warp_tot[lane] = warp_inclusive_scan(t, lane);
    }
    __syncthreads();
    if (warp > 0)
        v += warp_tot[warp - 1];
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = v;
}

__global__ void scan_sums_kernel(int* sums, int m)
{
    extern __shared__ int s[];
    int t = threadIdx.x;
    int v = (t < m) ? sums[t] : 0;
    s[t] = v;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset <<= 1) {
        int add = (t >= offset) ? s[t - offset] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    if (t < m)
        sums[t] = s[t] - v;
}

__global__ void add_offsets_kernel(int* out, const int* offsets, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += offsets[blockIdx.x];
}
