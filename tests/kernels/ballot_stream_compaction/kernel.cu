#define BLOCK 256
#define WARPS (BLOCK / 32)

__global__ void count_kernel(const float* x, int* block_counts, int n)
{
    __shared__ int warp_counts[WARPS];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    bool keep = (i < n) && (x[i] > 0.0f);
    unsigned int ballot = __ballot_sync(0xffffffff, keep);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_counts[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        int total = 0;
        for (int w = 0; w < WARPS; ++w)
            total += warp_counts[w];
        block_counts[blockIdx.x] = total;
    }
}

__global__ void offsets_kernel(int* block_counts, int* total, int nblocks)
{
    if (threadIdx.x == 0) {
        int run = 0;
        for (int b = 0; b < nblocks; ++b) {
            int c = block_counts[b];
            block_counts[b] = run;
            run += c;
        }
        total[0] = run;
    }
}

__global__ void scatter_kernel(const float* x, const int* block_offsets, float* out, int n)
{
    __shared__ int warp_base[WARPS];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    bool keep = (i < n) && (x[i] > 0.0f);
    unsigned int ballot = __ballot_sync(0xffffffff, keep);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        warp_base[warp] = __popc(ballot);
    __syncthreads();
    if (threadIdx.x == 0) {
        int run = 0;
        for (int w = 0; w < WARPS; ++w) {
            int c = warp_base[w];
            warp_base[w] = run;
            run += c;
        }
    }
    __syncthreads();
    if (keep) {
        unsigned int lower = ballot & ((1u << lane) - 1u);
        out[block_offsets[blockIdx.x] + warp_base[warp] + __popc(lower)] = x[i];
    }
}
