__global__ void transcend_kernel(const float* x, const float* y, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = x[i], b = y[i];
    out[0 * n + i] = __sinf(a) * __cosf(a);
    out[1 * n + i] = __logf(b) + __powf(b, 0.75f);
    out[2 * n + i] = __tanf(a * 0.5f);
    out[3 * n + i] = exp2f(a) - log2f(b);
    out[4 * n + i] = __fadd_rn(__fmul_rn(a, b), __frcp_rn(b));
    out[5 * n + i] = __fsqrt_rn(b) + __fdiv_rn(a, b);
}
