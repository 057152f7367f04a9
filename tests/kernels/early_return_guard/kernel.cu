__global__ void mix_kernel(const int* x, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = x[i];
    int r = v * 3 + i;
    if (v < 0)
        r = -r;
    out[i] = r ^ (i >> 2);
}
