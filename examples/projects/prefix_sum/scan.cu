#include "scan.cuh"

// Hillis-Steele scan of one block's chunk; the block's total goes to sums[blockIdx.x].
__global__ void scan_blocks(const int* in, int* out, int* sums, int n) {
    extern __shared__ int buf[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < blockDim.x; offset <<= 1) {
        int add = threadIdx.x >= offset ? buf[threadIdx.x - offset] : 0;
        __syncthreads();
        buf[threadIdx.x] += add;
        __syncthreads();
    }
    if (i < n) out[i] = buf[threadIdx.x];
    if (threadIdx.x == blockDim.x - 1) sums[blockIdx.x] = buf[threadIdx.x];
}

// Adds the scanned totals of all earlier blocks.
__global__ void add_offsets(int* out, const int* scanned_sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}

void inclusive_scan(const int* d_in, int* d_out, int n) {
    int blocks = (n + SCAN_BLOCK - 1) / SCAN_BLOCK;
    int *d_sums, *d_scanned;
    cudaMalloc(&d_sums, blocks * sizeof(int));
    cudaMalloc(&d_scanned, blocks * sizeof(int));
    scan_blocks<<<blocks, SCAN_BLOCK, SCAN_BLOCK * sizeof(int)>>>(d_in, d_out, d_sums, n);
    if (blocks > 1) {
        int* d_dummy;
        cudaMalloc(&d_dummy, sizeof(int));
        // blocks <= SCAN_BLOCK here: one block scans the per-block totals.
        scan_blocks<<<1, SCAN_BLOCK, SCAN_BLOCK * sizeof(int)>>>(d_sums, d_scanned, d_dummy, blocks);
        add_offsets<<<blocks, SCAN_BLOCK>>>(d_out, d_scanned, n);
        cudaFree(d_dummy);
    }
    cudaDeviceSynchronize();
    cudaFree(d_sums);
    cudaFree(d_scanned);
}
