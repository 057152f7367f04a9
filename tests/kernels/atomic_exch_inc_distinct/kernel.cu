__global__ void distinct_kernel(const int* keys, int* seen_exch, int* seen_cas, int* counts, unsigned int* ticket,
                                int n, int nkeys, unsigned int wrap)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int k = keys[i] % nkeys;
    if (k < 0)
        k = -k;
    if (atomicExch(&seen_exch[k], 1) == 0)
        atomicAdd(&counts[0], 1);
    if (atomicCAS(&seen_cas[k], 0, k + 1) == 0)
        atomicAdd(&counts[1], 1);
    atomicInc(ticket, wrap);
}
