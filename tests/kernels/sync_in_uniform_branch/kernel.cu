#define BLOCK 256

__global__ void branch_sync_kernel(const float* x, float* y, int mode, int n)
{
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    float v = (i < n) ? x[i] : 0.0f;
    s[tid] = v;
    __syncthreads();
    if (blockIdx.x % 2 == 0) {
        float nb = s[(tid + 1) % BLOCK];
        __syncthreads();
        s[tid] = nb + v;
        __syncthreads();
    } else {
        float nb = s[BLOCK - 1 - tid];
        __syncthreads();
        s[tid] = nb * v;
        __syncthreads();
    }
    if (mode > 0) {
        float t = s[(tid + mode) % BLOCK];
        __syncthreads();
        s[tid] = t - v;
        __syncthreads();
    }
    if (i < n)
        y[i] = s[tid] + v;
}
