__device__ float atomic_max_float(float* addr, float value)
{
    int* p = (int*)addr;
    int old = *p;
    while (__int_as_float(old) < value) {
        int assumed = old;
        old = atomicCAS(p, assumed, __float_as_int(value));
        if (old == assumed)
            break;
    }
    return __int_as_float(old);
}

__device__ double atomic_add_double_cas(double* addr, double value)
{
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __double_as_longlong(__longlong_as_double(assumed) + value));
    } while (assumed != old);
    return __longlong_as_double(old);
}

__global__ void cas_kernel(const float* x, float* maxes, double* sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int slot = (i / 7) % 8;
        atomic_max_float(&maxes[slot], x[i]);
        atomic_add_double_cas(&sums[slot], (double)x[i]);
    }
}
