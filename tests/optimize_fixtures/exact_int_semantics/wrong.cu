// What an unsafe optimization of kernel.cu computes: products and the accumulator widened to 64
// bits, / 8 and % 8 strength-reduced to a shift and a mask (wrong for negative values), the
// unsigned hash in 64 bits, max(int, unsigned) compared as signed. The checks must reject it:
// tests/test_optimize_exactness.py.
__global__ void int_kernel(const unsigned int* u, const int* a, const int* b, unsigned int* hash, int* prod,
                           long long* widened, int* dot, int* q, int* r, int* q8, int* r8, unsigned int* uq,
                           unsigned int* mixed, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned long long h = 2166136261u;
    for (int j = 0; j < k; ++j) {
        h = (h ^ u[(i + j) % n]) * 16777619u;
        h ^= h >> 13;
    }
    hash[i] = (unsigned int)h;
    int av = a[i], bv = b[i];
    long long p = (long long)av * bv;
    prod[i] = (int)p;
    widened[i] = p - (long long)av * (long long)bv;
    long long acc = 0;
    for (int j = 0; j < k; ++j)
        acc += (long long)a[(i + j) % n] * b[(i + 2 * j) % n];
    dot[i] = (int)(acc / 16);
    int d = (bv % 97) - 48;
    d = (d == 0 || d == -1) ? -7 : d;
    q[i] = av / d;
    r[i] = av % d;
    q8[i] = av >> 3;
    r8[i] = av & 7;
    uq[i] = (unsigned int)av / 8u + u[i] % 10u;
    mixed[i] = (unsigned int)max(av, 7);
}

// A block histogram in shared memory, merged into the output with global atomics: exact in any
// order, but only if no update is lost (plain read-modify-writes of a shared bin in a vectorized
// thread loop lose them).
__global__ void hist_kernel(const unsigned int* u, int* hist, int n)
{
    __shared__ int bins[16];
    if (threadIdx.x < 16)
        bins[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[u[i] % 16u], 1);
    __syncthreads();
    if (threadIdx.x < 16)
        atomicAdd(&hist[threadIdx.x], bins[threadIdx.x]);
}
