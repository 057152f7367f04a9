// What kernel.cu computes when the compiler may assume its pointers are distinct (__restrict__,
// or vectorizing without an overlap check): loads hoisted above the stores they alias. The
// checks must reject it: tests/test_optimize_exactness.py.
__global__ void shift_kernel(const float* in, float* out, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float loaded[64];
    for (int j = 0; j < k - 1; ++j)
        loaded[j] = in[r * k + j];
    for (int j = 0; j < k - 1; ++j)
        out[r * k + j] = loaded[j] * 0.5f + out[r * k + j];
}

__global__ void twice_kernel(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    out[i] = v * 2.0f;
    out[i] += v;
}

__global__ void fold_kernel(float* p, int half)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < half; i += blockDim.x * gridDim.x)
        p[i] = p[i] * 0.25f + p[i + half];
}
