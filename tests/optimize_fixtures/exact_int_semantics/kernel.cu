// Integer results that change when arithmetic is widened, reassociated into another type, or
// strength-reduced without care: unsigned hashes that wrap, int32 products that overflow (then
// widened, or summed in an int accumulator that is divided afterwards), division and remainder of
// negative values (truncation toward zero: a / 8 is not a >> 3, a % 8 is not a & 7), max of an int
// and an unsigned (compared as unsigned).
__global__ void int_kernel(const unsigned int* u, const int* a, const int* b, unsigned int* hash, int* prod,
                           long long* widened, int* dot, int* q, int* r, int* q8, int* r8, unsigned int* uq,
                           unsigned int* mixed, int n, int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned int h = 2166136261u;
    for (int j = 0; j < k; ++j) {
        h = (h ^ u[(i + j) % n]) * 16777619u;
        h ^= h >> 13;
    }
    hash[i] = h;
    int av = a[i], bv = b[i];
    int p = av * bv;
    prod[i] = p;
    widened[i] = (long long)p - (long long)av * (long long)bv;
    int acc = 0;
    for (int j = 0; j < k; ++j)
        acc += a[(i + j) % n] * b[(i + 2 * j) % n];
    dot[i] = acc / 16;
    int d = (bv % 97) - 48;
    d = (d == 0 || d == -1) ? -7 : d;  // INT_MIN / -1 would trap
    q[i] = av / d;
    r[i] = av % d;
    q8[i] = av / 8;
    r8[i] = av % 8;
    uq[i] = (unsigned int)av / 8u + u[i] % 10u;
    mixed[i] = max(av, 7u);
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
