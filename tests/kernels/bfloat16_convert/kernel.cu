#include <cuda_bf16.h>

__global__ void bf16_kernel(const float* x, const __nv_bfloat16* w, __nv_bfloat16* y, float* z, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = __float2bfloat16(x[i] * 2.0f);
        __nv_bfloat16 twice = __hadd(w[i], w[i]);
        z[i] = __bfloat162float(twice) + 1.0f;
    }
}
