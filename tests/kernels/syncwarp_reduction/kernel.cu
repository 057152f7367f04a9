#define BLOCK 128

__global__ void syncwarp_reduce_kernel(const float* x, float* partial, int n)
{
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    s[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = BLOCK / 2; stride >= 32; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < 32) {
        float v = s[tid];
        for (int stride = 16; stride > 0; stride >>= 1) {
            v += s[tid + stride];
            __syncwarp();
            s[tid] = v;
            __syncwarp();
        }
    }
    if (tid == 0)
        partial[blockIdx.x] = s[0];
}
