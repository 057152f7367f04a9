__global__ void shfl_patterns_kernel(const float* x, float* rot, float* bcast, float* down, float* seg_scan, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float v = (i < n) ? x[i] : 0.0f;
    float r = __shfl_sync(0xffffffff, v, (lane + 3) & 31);
    float b = __shfl_sync(0xffffffff, v, 5, 8);
    float d = __shfl_down_sync(0xffffffff, v, 2, 8);
    float s = v;
#pragma unroll
    for (int o = 1; o < 16; o <<= 1) {
        float t = __shfl_up_sync(0xffffffff, s, o, 16);
        if ((lane & 15) >= o)
            s += t;
    }
    if (i < n) {
        rot[i] = r;
        bcast[i] = b;
        down[i] = d;
        seg_scan[i] = s;
    }
}
