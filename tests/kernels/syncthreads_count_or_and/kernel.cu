__global__ void sync_reduce_kernel(const int* x, int* counts, int* anys, int* alls, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? x[i] : 0;
    int c = __syncthreads_count(i < n && v > 0);
    int o = __syncthreads_or(i < n && v > 90);
    int a = __syncthreads_and(i >= n || v > -95);
    if (threadIdx.x == 0) {
        counts[blockIdx.x] = c;
        anys[blockIdx.x] = o != 0;
        alls[blockIdx.x] = a != 0;
    }
}
