__global__ void gs2d_kernel(const float* a, float* b, int rows, int cols)
{
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < rows; r += blockDim.y * gridDim.y)
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += blockDim.x * gridDim.x)
            b[r * cols + c] = a[r * cols + c] * (float)(r - c) + 1.0f;
}
