#define NB 16

__global__ void shared_atomic_kernel(const float* x, const int* v, float* block_bins, int* block_max, int* block_min, int n)
{
    __shared__ float bins[NB];
    __shared__ int smax, smin;
    int tid = threadIdx.x;
    if (tid < NB)
        bins[tid] = 0.0f;
    if (tid == 0) {
        smax = -2147483647 - 1;
        smin = 2147483647;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + tid;
    if (i < n) {
        atomicAdd(&bins[tid % NB], x[i]);
        atomicMax(&smax, v[i]);
        atomicMin(&smin, v[i]);
    }
    __syncthreads();
    if (tid < NB)
        block_bins[blockIdx.x * NB + tid] = bins[tid];
    if (tid == 0) {
        block_max[blockIdx.x] = smax;
        block_min[blockIdx.x] = smin;
    }
}
