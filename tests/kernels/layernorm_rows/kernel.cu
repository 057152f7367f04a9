__device__ float block_sum(float v, float* shm)
{
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, o);
    if (lane == 0)
        shm[warp] = v;
    __syncthreads();
    float total = 0.0f;
    int nwarps = blockDim.x >> 5;
    for (int w = 0; w < nwarps; ++w)
        total += shm[w];
    __syncthreads();
    return total;
}

__global__ void layernorm_kernel(const float* x, const float* gamma, const float* beta, float* y, int cols, float eps)
{
    __shared__ float shm[32];
    const float* row = x + blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += row[c];
    float mean = block_sum(s, shm) / cols;
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = row[c] - mean;
        q += d * d;
    }
    float var = block_sum(q, shm) / cols;
    float rstd = rsqrtf(var + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        y[blockIdx.x * cols + c] = (row[c] - mean) * rstd * gamma[c] + beta[c];
}
