__global__ void exch_swap_kernel(float* a, const float* b, float* old_a, const unsigned int* u, unsigned int* block_max,
                                 int* block_and, int* block_or, int n)
{
    __shared__ unsigned int smax;
    __shared__ int sand;
    __shared__ int sor;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) {
        smax = 0u;
        sand = -1;
        sor = 0;
    }
    __syncthreads();
    if (i < n) {
        old_a[i] = atomicExch(&a[i], b[i] * 2.0f);
        atomicMax(&smax, u[i]);
        atomicAnd(&sand, (int)(u[i] | 0xF0F0F0F0u));
        atomicOr(&sor, (int)(u[i] & 0x0000FFFFu));
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        block_max[blockIdx.x] = smax;
        block_and[blockIdx.x] = sand;
        block_or[blockIdx.x] = sor;
    }
}
