#include <cuda_fp16.h>

__global__ void half_dot3_kernel(const __half* a, const __half* b, __half* out, float* out_f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < 3; ++k)
            acc += __half2float(a[3 * i + k]) * __half2float(b[3 * i + k]);
        out_f[i] = acc;
        out[i] = __float2half_rn(acc);
    }
}
