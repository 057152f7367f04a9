__global__ void collatz_kernel(const int* x, int* steps_out, int* rounds_out, int n)
{
    __shared__ int active;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    unsigned int v = (i < n) ? (unsigned int)x[i] : 1u;
    int steps = 0, rounds = 0;
    while (true) {
        if (t == 0)
            active = 0;
        __syncthreads();
        if (v != 1u) {
            v = (v & 1u) ? 3u * v + 1u : v / 2u;
            steps++;
            active = 1;
        }
        __syncthreads();
        if (active == 0)
            break;
        rounds++;
        __syncthreads();
    }
    if (i < n)
        steps_out[i] = steps;
    if (t == 0)
        rounds_out[blockIdx.x] = rounds;
}
