__inline__ __device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void shfl_reduce_kernel(const float* x, float* out, int n)
{
    __shared__ float warp_sums[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += x[i];
    v = warp_sum(v);
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    int nwarps = (blockDim.x + 31) / 32;
    v = (threadIdx.x < nwarps) ? warp_sums[lane] : 0.0f;
    if (warp == 0) {
        v = warp_sum(v);
        if (lane == 0)
            atomicAdd(out, v);
    }
}
