__global__ void bmm_kernel(const float* A, const float* B, float* C, int M, int N, int K)
{
    int b = blockIdx.z;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N)
        return;
    const float* Ab = A + (size_t)b * M * K;
    const float* Bb = B + (size_t)b * K * N;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k)
        acc = fmaf(Ab[row * K + k], Bb[k * N + col], acc);
    C[(size_t)b * M * N + row * N + col] = acc;
}
