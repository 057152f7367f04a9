__global__ void special_kernel(const float* x, const float* y, float* sel_max, float* fmax_out, float* sum,
                               float* times_zero, float* self_sub, int* is_nan, float* sel_min, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    sel_max[i] = (a > b) ? a : b;
    fmax_out[i] = fmaxf(a, b);
    sum[i] = a + b;
    times_zero[i] = a * 0.0f;
    self_sub[i] = a - a;
    is_nan[i] = (a != a) ? 1 : 0;
    sel_min[i] = (a < b) ? a : b;
}
