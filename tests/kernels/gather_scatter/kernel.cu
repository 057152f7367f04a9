__global__ void gather_kernel(const float* src, const int* idx, float* dst, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] = src[idx[i] % m];
}

__global__ void scatter_kernel(const float* src, float* dst, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[(int)(((long long)i * stride) % n)] = 2.0f * src[i];
}
