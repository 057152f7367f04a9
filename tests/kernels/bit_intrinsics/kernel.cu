__global__ void bits_kernel(const unsigned int* u, const float* f, int* popc, int* clz, int* ffs, unsigned int* brev,
                            unsigned int* mulhi, int* mul24, int* popcll, unsigned int* fbits, float* from_bits,
                            unsigned int* f2u, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned int x = u[i];
    popc[i] = __popc(x);
    clz[i] = __clz((int)x);
    ffs[i] = __ffs((int)x);
    brev[i] = __brev(x);
    mulhi[i] = __umulhi(x, 0x9e3779b9u);
    mul24[i] = __mul24((int)(x & 0x7fffff), (int)((x >> 8) & 0xff));
    popcll[i] = __popcll(((unsigned long long)x << 32) | (x * 2654435761u));
    fbits[i] = __float_as_uint(f[i]);
    from_bits[i] = __uint_as_float((x & 0x007fffffu) | 0x3f800000u);
    f2u[i] = __float2uint_rn(fabsf(f[i]) * 1000.0f);
}
