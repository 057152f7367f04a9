__global__ void dot_kernel(const double* a, const double* b, double* result, int n)
{
    extern __shared__ double cache[];
    int tid = threadIdx.x;
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += blockDim.x * gridDim.x)
        acc += a[i] * b[i];
    cache[tid] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        atomicAdd(result, cache[0]);
}
