#define BS 16

__global__ void jacobi_kernel(const float* in, float* out, int H, int W)
{
    __shared__ float tile[BS + 2][BS + 2];
    int x = blockIdx.x * BS + threadIdx.x;
    int y = blockIdx.y * BS + threadIdx.y;
    int lx = threadIdx.x + 1, ly = threadIdx.y + 1;
    bool inside = x < W && y < H;
    tile[ly][lx] = inside ? in[y * W + x] : 0.0f;
    if (threadIdx.x == 0)
        tile[ly][0] = (x > 0 && y < H) ? in[y * W + x - 1] : 0.0f;
    if (threadIdx.x == BS - 1)
        tile[ly][BS + 1] = (x + 1 < W && y < H) ? in[y * W + x + 1] : 0.0f;
    if (threadIdx.y == 0)
        tile[0][lx] = (y > 0 && x < W) ? in[(y - 1) * W + x] : 0.0f;
    if (threadIdx.y == BS - 1)
        tile[BS + 1][lx] = (y + 1 < H && x < W) ? in[(y + 1) * W + x] : 0.0f;
    __syncthreads();
    if (!inside)
        return;
    if (x == 0 || y == 0 || x == W - 1 || y == H - 1) {
        out[y * W + x] = tile[ly][lx];
        return;
    }
    out[y * W + x] = 0.25f * (tile[ly][lx - 1] + tile[ly][lx + 1] + tile[ly - 1][lx] + tile[ly + 1][lx]);
}
