#include "reduce.cuh"

constexpr int kBlock = 256;

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// Pass 1: each block sums a strided slice into partial[blockIdx.x].
__global__ void block_partials(const float* in, float* partial, int n) {
    __shared__ float sdata[kBlock];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) sum += in[i];
    sdata[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (threadIdx.x < s) sdata[threadIdx.x] += sdata[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        float v = sdata[threadIdx.x] + sdata[threadIdx.x + 32];
        v = warp_sum(v);
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }
}

// Pass 2: one block sums the partials.
__global__ void final_sum(const float* partial, float* out, int m) {
    __shared__ float warp_totals[kBlock / 32];
    float v = 0.0f;
    for (int i = threadIdx.x; i < m; i += blockDim.x) v += partial[i];
    v = warp_sum(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warp_totals[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) *out = v;
    }
}

__global__ void max_kernel(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : INT_MIN;
    for (int offset = 16; offset > 0; offset >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if ((threadIdx.x & 31) == 0) atomicMax(out, v);
}

float reduce_sum(const float* d_in, int n) {
    const int blocks = 64;
    float *d_partial, *d_out, result = 0.0f;
    CUDA_OK(cudaMalloc(&d_partial, blocks * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_out, sizeof(float)));
    block_partials<<<blocks, kBlock>>>(d_in, d_partial, n);
    final_sum<<<1, kBlock>>>(d_partial, d_out, blocks);
    CUDA_OK(cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(d_partial);
    cudaFree(d_out);
    return result;
}

int reduce_max(const int* d_in, int n) {
    int *d_out, result = INT_MIN;
    CUDA_OK(cudaMalloc(&d_out, sizeof(int)));
    CUDA_OK(cudaMemcpy(d_out, &result, sizeof(int), cudaMemcpyHostToDevice));
    max_kernel<<<(n + kBlock - 1) / kBlock, kBlock>>>(d_in, d_out, n);
    CUDA_OK(cudaMemcpy(&result, d_out, sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(d_out);
    return result;
}
