#define PER_THREAD 4

__global__ void __launch_bounds__(256, 2) leaky_relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n)
{
    int base = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        int i = base + k * stride;
        if (i < n) {
            float v = __ldg(&x[i]);
            y[i] = v > 0.0f ? v : 0.01f * v;
        }
    }
}
