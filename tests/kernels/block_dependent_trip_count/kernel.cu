#define BLOCK 128

__global__ void trip_kernel(const float* x, float* y, int nblocks)
{
    if (blockIdx.x >= nblocks)
        return;
    __shared__ float s[BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * BLOCK + t;
    float v = x[i];
    if (blockIdx.x % 3 != 0) {
        int trips = blockIdx.x % 4 + 1;
        for (int it = 0; it < trips; ++it) {
            s[t] = v;
            __syncthreads();
            v = v + s[BLOCK - 1 - t];
            __syncthreads();
        }
    }
    y[i] = v;
}
