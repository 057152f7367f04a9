__global__ void intrinsics_kernel(const float* x, const float* y, const float* z,
                                  float* e, float* q, float* r, float* f, float* s, int* k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float xv = x[i], yv = y[i], zv = z[i];
        e[i] = __expf(xv);
        q[i] = __fdividef(xv, yv);
        r[i] = rsqrtf(yv);
        f[i] = fmaf(xv, yv, zv);
        s[i] = __saturatef(xv * 0.75f);
        k[i] = __float2int_rn(xv * 100.0f);
    }
}
