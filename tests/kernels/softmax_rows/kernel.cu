__global__ void softmax_kernel(const float* x, float* y, int cols)
{
    extern __shared__ float red[];
    const float* row = x + (size_t)blockIdx.x * cols;
    float* out = y + (size_t)blockIdx.x * cols;
    int tid = threadIdx.x;
    float m = -3.402823466e38f;
    for (int c = tid; c < cols; c += blockDim.x)
        m = fmaxf(m, row[c]);
    red[tid] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    float rowmax = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = tid; c < cols; c += blockDim.x)
        sum += __expf(row[c] - rowmax);
    red[tid] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            red[tid] += red[tid + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int c = tid; c < cols; c += blockDim.x)
        out[c] = __expf(row[c] - rowmax) * inv;
}
