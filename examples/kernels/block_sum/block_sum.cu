// Per-block tree reduction in shared memory, then one atomicAdd per block.
#define BLOCK 256

__global__ void block_sum_kernel(const float* in, float* total, int n) {
    __shared__ float partial[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(total, partial[0]);
}
