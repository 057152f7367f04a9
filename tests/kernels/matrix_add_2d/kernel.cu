__global__ void matadd_kernel(const float* A, const float* B, float* C, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols)
        C[row * cols + col] = A[row * cols + col] + 2.0f * B[row * cols + col];
}
