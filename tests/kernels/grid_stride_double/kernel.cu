__global__ void sqrt_scale(const double* x, double* y, double s, int n)
{
    int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = x[i];
        y[i] = sqrt(fabs(v)) * s + v * v;
    }
}
