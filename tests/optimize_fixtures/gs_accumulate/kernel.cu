// Each thread accumulates its own grid-stride elements (values of very different magnitudes:
// 1e7 added to every fourth) and writes one partial per thread: flattening the loop would
// change which elements a partial holds, so the optimizer must leave it alone.
__global__ void partial_kernel(const float* x, float* partial, int n)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    for (int i = g; i < n; i += blockDim.x * gridDim.x) {
        float v = x[i];
        acc += (i % 4 == 0) ? v + 1.0e7f : v;
    }
    partial[g] = acc;
}
