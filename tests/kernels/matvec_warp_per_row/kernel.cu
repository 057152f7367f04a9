__global__ void matvec_kernel(const float* A, const float* x, float* y, int rows, int cols)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows)
        return;
    float acc = 0.0f;
    for (int c = lane; c < cols; c += 32)
        acc += A[warp * cols + c] * x[c];
    for (int off = 16; off > 0; off /= 2)
        acc += __shfl_down_sync(0xffffffff, acc, off);
    if (lane == 0)
        y[warp] = acc;
}
