extern __shared__ float dyn_f[];
extern __shared__ int dyn_i[];

__global__ void alias_kernel(const float* x, const int* keys, float* out, int n)
{
    int t = threadIdx.x;
    int B = blockDim.x;
    int i = blockIdx.x * B + t;
    float* fs = dyn_f;
    int* is = dyn_i + B;
    fs[t] = (i < n) ? x[i] : 0.0f;
    is[t] = (i < n) ? keys[i] : 0;
    __syncthreads();
    if (i < n)
        out[i] = fs[(t + 1) % B] * (float)is[(t + 2) % B];
}
