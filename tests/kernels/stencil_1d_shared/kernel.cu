#define RADIUS 3
#define BLOCK 128

__global__ void stencil1d_kernel(const float* in, float* out, int n)
{
    __shared__ float tile[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    tile[l] = (g < n) ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS;
        int right = g + BLOCK;
        tile[l - RADIUS] = (left >= 0 && left < n) ? in[left] : 0.0f;
        tile[l + BLOCK] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float acc = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; ++k)
            acc += tile[l + k] * (float)(RADIUS + 1 - abs(k));
        out[g] = acc;
    }
}
