// One buffer read and written through two pointers (the launches pass `a` and `a + 1`, or `b`
// twice), or through one pointer at indices half a buffer apart. Race-free in CUDA: each thread
// owns its elements. Where the pointers alias, a store is seen by the next load, so the row loop
// is a recurrence: __restrict__, or vectorizing as if the pointers were distinct, is wrong.
__global__ void shift_kernel(const float* in, float* out, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    for (int j = 0; j < k - 1; ++j)
        out[r * k + j] = in[r * k + j] * 0.5f + out[r * k + j];
}

__global__ void twice_kernel(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = in[i] * 2.0f;
    out[i] += in[i];
}

__global__ void fold_kernel(float* p, int half)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < half; i += blockDim.x * gridDim.x)
        p[i] = p[i] * 0.25f + p[i + half];
}
