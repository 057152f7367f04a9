__global__ void colsum_kernel(const float* a, float* sums, int rows, int cols)
{
    __shared__ float part[8][33];
    int col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    if (col < cols)
        for (int r = threadIdx.y; r < rows; r += 8)
            acc += a[r * cols + col];
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < cols) {
        float total = 0.0f;
        for (int k = 0; k < 8; ++k)
            total += part[k][threadIdx.x];
        sums[col] = total;
    }
}
