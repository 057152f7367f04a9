__global__ void scatter_add_kernel(const int* keys, const float* vals, float* fsum, double* dsum, int n, int nbins)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int k = keys[i] % nbins;
        if (k < 0)
            k += nbins;
        atomicAdd(&fsum[k], vals[i]);
        atomicAdd(&dsum[k], (double)vals[i] * 0.5);
    }
}
