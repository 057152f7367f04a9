__global__ void kahan_kernel(const float* x, float* out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float sum = 0.0f, c = 0.0f;
    for (int j = 0; j < cols; ++j) {
        float v = x[r * cols + j];
        v = (j % 3 == 0) ? v * 65536.0f : v;
        float y = v - c;
        float t = sum + y;
        c = (t - sum) - y;
        sum = t;
    }
    out[r] = sum;
}
