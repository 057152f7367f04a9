__device__ float block_reduce_sum(float v)
{
    __shared__ float warp_sums[32];
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffff, v, o);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();
    int nwarps = (blockDim.x + 31) >> 5;
    v = (threadIdx.x < nwarps) ? warp_sums[threadIdx.x] : 0.0f;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffff, v, o);
    __syncthreads();
    return v;
}

__global__ void rows_kernel(const float* x, float* row_sums, float* centered, int rows, int cols)
{
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        if (r % 5 == 4) {
            if (threadIdx.x == 0)
                row_sums[r] = 0.0f;
            continue;
        }
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            s += x[r * cols + c];
        float total = block_reduce_sum(s);
        __shared__ float mean;
        if (threadIdx.x == 0) {
            row_sums[r] = total;
            mean = total / cols;
        }
        __syncthreads();
        for (int c = threadIdx.x; c < cols; c += blockDim.x)
            centered[r * cols + c] = x[r * cols + c] - mean;
        __syncthreads();
    }
}
