#include <cuda_fp16.h>

__global__ void half_axpy_kernel(const __half* x, __half* y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        __half ha = __float2half(a);
        __half prod = __hmul(ha, x[i]);
        __half sum = prod + y[i];
        y[i] = sum;
    }
}
