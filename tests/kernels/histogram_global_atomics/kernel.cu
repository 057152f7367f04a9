__global__ void hist_global_kernel(const float* x, int* hist, int n, int nbins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int k = (int)(x[i] * nbins);
        k = min(max(k, 0), nbins - 1);
        atomicAdd(&hist[k], 1);
    }
}
