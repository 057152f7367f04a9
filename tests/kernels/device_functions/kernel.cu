__device__ __forceinline__ float clampf(float v, float lo, float hi)
{
    return fminf(fmaxf(v, lo), hi);
}

__device__ float smoothstep(float e0, float e1, float x)
{
    float t = clampf((x - e0) / (e1 - e0), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

__device__ void compare_swap(float& a, float& b)
{
    if (a > b) {
        float t = a;
        a = b;
        b = t;
    }
}

__device__ void sort4(float* v)
{
    compare_swap(v[0], v[1]);
    compare_swap(v[2], v[3]);
    compare_swap(v[0], v[2]);
    compare_swap(v[1], v[3]);
    compare_swap(v[1], v[2]);
}

__device__ __noinline__ int ipow(int base, int e)
{
    int r = 1;
    while (e > 0) {
        if (e & 1)
            r *= base;
        base *= base;
        e >>= 1;
    }
    return r;
}

__global__ void device_fn_kernel(const float* x, float* sorted, float* smooth, int* powers, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v[4];
    for (int k = 0; k < 4; ++k)
        v[k] = x[4 * i + k];
    sort4(v);
    for (int k = 0; k < 4; ++k)
        sorted[4 * i + k] = v[k];
    smooth[i] = smoothstep(-0.5f, 0.5f, x[4 * i]);
    powers[i] = ipow(i % 7 + 1, i % 5);
}
