__global__ void u64_kernel(const int* keys, unsigned long long* counts, unsigned long long* sumsq, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = keys[i] & 15;
        unsigned long long v = (unsigned long long)keys[i];
        atomicAdd(&counts[k], 1ull);
        atomicAdd(&sumsq[k], v * v);
    }
}
