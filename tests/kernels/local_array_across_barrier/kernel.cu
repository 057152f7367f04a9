#define BLOCK 64
#define K 4

__global__ void local_array_kernel(const float* x, float* y, int rounds)
{
    __shared__ float s[2][BLOCK];
    int t = threadIdx.x;
    int base = (blockIdx.x * BLOCK + t) * K;
    float v[K];
    for (int k = 0; k < K; ++k)
        v[k] = x[base + k];
    float* mine = &s[blockIdx.x & 1][t];
    int r = 0;
    do {
        float total = 0.0f;
        for (int k = 0; k < K; ++k)
            total += v[k];
        *mine = total;
        __syncthreads();
        float neighbour = s[blockIdx.x & 1][(t + 1 + r) % BLOCK];
        __syncthreads();
        for (int k = 0; k < K; ++k)
            v[k] = 0.5f * v[k] + 0.125f * neighbour;
        ++r;
    } while (r < rounds);
    for (int k = 0; k < K; ++k)
        y[base + k] = v[k];
}
