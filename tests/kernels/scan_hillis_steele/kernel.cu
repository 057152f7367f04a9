#define BLOCK 256

__global__ void hs_scan_kernel(const int* in, int* out, int n)
{
    __shared__ int buf[2][BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    int pout = 0, pin = 1;
    buf[pout][tid] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        int v = buf[pin][tid];
        if (tid >= offset)
            v += buf[pin][tid - offset];
        buf[pout][tid] = v;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[pout][tid];
}
