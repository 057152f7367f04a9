#define TW 16

struct Particle {
    float x;
    float v;
    int id;
};

__global__ void struct_tile_kernel(const float* a, const float* b, float* out_t, float* mix, int rows, int cols)
{
    extern __shared__ float smem[];
    float (*tile)[TW + 1] = reinterpret_cast<float (*)[TW + 1]>(smem);
    __shared__ Particle parts[TW];
    const float weights[4] = {0.5f, -1.0f, 2.0f, 0.25f};
    int tx = threadIdx.x, ty = threadIdx.y;
    int r = blockIdx.y * TW + ty;
    int c = blockIdx.x * TW + tx;
    tile[ty][tx] = a[r * cols + c];
    if (ty == 0) {
        Particle p;
        p.x = a[r * cols + c];
        p.v = b[r * cols + c];
        p.id = tx;
        parts[tx] = p;
    }
    __syncthreads();
    out_t[(blockIdx.x * TW + ty) * rows + blockIdx.y * TW + tx] = tile[tx][ty];
    const Particle& q = parts[(tx + ty) % TW];
    mix[r * cols + c] = q.x * q.v + (float)q.id + weights[tx % 4];
}
