#define BLOCK 128

__global__ void last_block_sum_kernel(const float* x, float* partials, unsigned int* counter, float* total, int n)
{
    __shared__ float sdata[BLOCK];
    __shared__ bool am_last;
    int tid = threadIdx.x;
    float acc = 0.0f;
    for (int i = blockIdx.x * BLOCK + tid; i < n; i += BLOCK * gridDim.x)
        acc += x[i];
    sdata[tid] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) {
        partials[blockIdx.x] = sdata[0];
        __threadfence();
        unsigned int ticket = atomicInc(counter, gridDim.x - 1);
        am_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (am_last && tid == 0) {
        __threadfence();
        float sum = 0.0f;
        for (int b = 0; b < gridDim.x; ++b)
            sum += ((volatile float*)partials)[b];
        total[0] = sum;
    }
}
