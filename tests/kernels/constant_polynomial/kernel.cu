#define DEGREE 6

__constant__ float c_coeffs[DEGREE + 1] = {1.0f, -0.5f, 0.25f, 0.125f, -0.0625f, 0.03125f, 0.015625f};
__constant__ int c_shift = 3;

__device__ float horner(float x)
{
    float r = c_coeffs[DEGREE];
    for (int k = DEGREE - 1; k >= 0; --k)
        r = r * x + c_coeffs[k];
    return r;
}

__global__ void poly_kernel(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = horner(x[i]) + (float)c_shift;
}
