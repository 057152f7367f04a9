// Grid-stride loop whose result depends on float rounding: (x + 2^27) - 2^27 is 0 or a
// multiple of 8, never x. Fast-math reassociation would return x: a wrong answer.
__global__ void cancel_kernel(const float* x, float* y, float big, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float t = x[i] + big;
        y[i] = t - big;
    }
}
