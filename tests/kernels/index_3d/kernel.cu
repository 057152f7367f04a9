__global__ void index3d_kernel(const float* in, float* out, int* block_id, int D, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= W || y >= H || z >= D)
        return;
    int idx = (z * H + y) * W + x;
    out[idx] = in[idx] * (float)(x + 2 * y + 3 * z) + (float)(threadIdx.x * 100 + threadIdx.y * 10 + threadIdx.z);
    block_id[idx] = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}
