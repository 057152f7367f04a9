__global__ void heat_step_kernel(const float* src, float* dst, float alpha, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float left = (i > 0) ? src[i - 1] : src[i];
    float right = (i < n - 1) ? src[i + 1] : src[i];
    dst[i] = src[i] + alpha * (left - 2.0f * src[i] + right);
}
