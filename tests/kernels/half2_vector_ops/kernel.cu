#include <cuda_fp16.h>

__global__ void half2_kernel(const __half* a, const __half* b, __half* c, float* lo_hi_sum, int npairs)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npairs) {
        __half2 va = reinterpret_cast<const __half2*>(a)[i];
        __half2 vb = reinterpret_cast<const __half2*>(b)[i];
        __half2 one = __floats2half2_rn(1.0f, -1.0f);
        __half2 r = __hfma2(va, vb, __hadd2(one, __hmul2(va, one)));
        reinterpret_cast<__half2*>(c)[i] = r;
        lo_hi_sum[i] = __low2float(r) + __high2float(r);
    }
}
