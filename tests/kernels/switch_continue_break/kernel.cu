__device__ int d_weights[4] = {3, -1, 4, 1};

__global__ void switch_kernel(const int* ops, const int* vals, int* out, int n, int len)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int acc = 0;
    for (int j = 0; j < len; ++j) {
        int op = ops[i * len + j];
        int v = vals[i * len + j];
        if (op == 7)
            continue;
        if (op == 9)
            break;
        switch (op) {
        case 0:
            acc += v;
            break;
        case 1:
            acc -= v;
            break;
        case 2:
        case 3:
            acc = acc * 2 + d_weights[op];
            break;
        case 4:
            acc ^= v;
            break;
        default:
            acc += d_weights[op & 3] * v;
        }
    }
    out[i] = acc;
}
