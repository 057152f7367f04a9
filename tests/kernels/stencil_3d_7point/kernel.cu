__global__ void laplace3d_kernel(const float* u, float* out, int D, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= W || y >= H || z >= D)
        return;
    int idx = (z * H + y) * W + x;
    if (x == 0 || y == 0 || z == 0 || x == W - 1 || y == H - 1 || z == D - 1) {
        out[idx] = 0.0f;
        return;
    }
    int sy = W, sz = H * W;
    out[idx] = u[idx - 1] + u[idx + 1] + u[idx - sy] + u[idx + sy] + u[idx - sz] + u[idx + sz] - 6.0f * u[idx];
}
