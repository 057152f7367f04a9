#define N 512

__global__ void bitonic_kernel(float* data)
{
    __shared__ float s[N];
    unsigned int t = threadIdx.x;
    s[t] = data[blockIdx.x * N + t];
    __syncthreads();
    for (unsigned int k = 2; k <= N; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = t ^ j;
            if (ixj > t) {
                bool up = (t & k) == 0;
                float a = s[t], b = s[ixj];
                if ((a > b) == up) {
                    s[t] = b;
                    s[ixj] = a;
                }
            }
            __syncthreads();
        }
    }
    data[blockIdx.x * N + t] = s[t];
}
