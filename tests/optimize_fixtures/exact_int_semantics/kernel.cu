// Integer results that change when arithmetic is widened, reassociated into another type, or
// strength-reduced without care: unsigned hashes that wrap, int32 products that overflow (then
// widened, or summed in an int accumulator that is divided afterwards), division and remainder of
// negative values (truncation toward zero: a / 8 is not a >> 3, a % 8 is not a & 7), max of an int
// and an unsigned (compared as unsigned).
__global__ void int_kernel(const unsigned int* u, const int* a, const int* b, unsigned int* hash, int* prod,
                           long long* widened, int* dot, int* q, int* r, int* q8, int* r8, unsigned int* uq, unsigned int* mixed,
                           int n, int k)
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
