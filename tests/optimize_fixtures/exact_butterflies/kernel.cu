// Butterfly steps (t ^ j) whose results depend on what each step reads: a bitonic sort of values
// with NaN and Inf among them (a NaN compares false, so where it stands decides what moves) and
// Walsh-Hadamard sums of +-2^20 plus values in [-1, 1) (each step's sums and differences rounded
// in their order).
#define BLOCK 64
#define BIG 1048576.0f

__global__ void sort_kernel(const float* special, float* sorted)
{
    __shared__ float s[BLOCK];
    unsigned int t = threadIdx.x;
    s[t] = special[blockIdx.x * BLOCK + t];
    __syncthreads();
    for (unsigned int k = 2; k <= BLOCK; k <<= 1) {
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
    sorted[blockIdx.x * BLOCK + t] = s[t];
}

__global__ void walsh_kernel(const float* x, float* walsh)
{
    __shared__ float s[BLOCK];
    unsigned int t = threadIdx.x;
    s[t] = x[blockIdx.x * BLOCK + t] + ((t & 1) ? -BIG : BIG);
    __syncthreads();
    for (unsigned int h = 1; h < BLOCK; h <<= 1) {
        unsigned int p = t ^ h;
        if (p > t) {
            float a = s[t], b = s[p];
            s[t] = a + b;
            s[p] = a - b;
        }
        __syncthreads();
    }
    walsh[blockIdx.x * BLOCK + t] = s[t];
}
