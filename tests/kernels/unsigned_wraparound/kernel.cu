__device__ unsigned int hash32(unsigned int x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__global__ void wrap_kernel(const unsigned int* in, unsigned int* hashed, unsigned int* shifted, int* cmp, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    hashed[i] = hash32(in[i] + (unsigned int)i * 2654435761u);
    unsigned int d = threadIdx.x - 5;
    shifted[i] = d / 8u + in[i] * 3u;
    int minus_one = (int)(in[i] & 0u) - 1;
    cmp[i] = (minus_one < threadIdx.x) ? 1 : 2;
}
