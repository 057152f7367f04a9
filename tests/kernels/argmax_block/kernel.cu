#define BLOCK 128

__device__ void better(float& v, int& idx, float ov, int oidx)
{
    if (ov > v || (ov == v && oidx < idx)) {
        v = ov;
        idx = oidx;
    }
}

__global__ void argmax_kernel(const float* x, float* best_val, int* best_idx, int n)
{
    __shared__ float sval[BLOCK];
    __shared__ int sidx[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    sval[tid] = (i < n) ? x[i] : -3.0e38f;
    sidx[tid] = (i < n) ? i : 0x7fffffff;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if (tid < s) {
            float v = sval[tid];
            int idx = sidx[tid];
            better(v, idx, sval[tid + s], sidx[tid + s]);
            sval[tid] = v;
            sidx[tid] = idx;
        }
        __syncthreads();
    }
    if (tid == 0) {
        best_val[blockIdx.x] = sval[0];
        best_idx[blockIdx.x] = sidx[0];
    }
}
