__global__ void mathlib_kernel(const float* x, const float* y, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    out[0 * n + i] = sinf(a) + cosf(b);
    out[1 * n + i] = expf(a) - logf(b);
    out[2 * n + i] = powf(b, a) + sqrtf(b);
    out[3 * n + i] = tanhf(a) * erff(b - 2.0f);
    out[4 * n + i] = atan2f(a, b);
    out[5 * n + i] = floorf(a * 3.0f) + ceilf(b) + fabsf(a);
    out[6 * n + i] = fminf(a, b - 2.0f) + fmaxf(a, 0.5f);
    out[7 * n + i] = copysignf(b, a) + truncf(a * 5.0f) + roundf(b * 2.0f);
}
