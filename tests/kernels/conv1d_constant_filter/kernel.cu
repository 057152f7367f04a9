#define TAPS 9
#define HALF 4
#define BLOCK 256

__constant__ float c_filter[TAPS] = {0.05f, 0.1f, -0.15f, 0.2f, 0.4f, 0.2f, -0.15f, 0.1f, 0.05f};

__global__ void conv1d_kernel(const float* in, float* out, int n)
{
    __shared__ float tile[BLOCK + 2 * HALF];
    int g = blockIdx.x * BLOCK + threadIdx.x;
    for (int j = threadIdx.x; j < BLOCK + 2 * HALF; j += BLOCK) {
        int src = blockIdx.x * BLOCK + j - HALF;
        tile[j] = (src >= 0 && src < n) ? in[src] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < TAPS; ++k)
            acc += c_filter[k] * tile[threadIdx.x + k];
        out[g] = acc;
    }
}
