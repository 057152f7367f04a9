__global__ void ordered_sum_kernel(const float* big, const float* small, float* out, int rows, int k)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float acc = big[r];
    for (int j = 0; j < k; ++j)
        acc += small[r * k + j];
    out[r] = acc - big[r];
}
