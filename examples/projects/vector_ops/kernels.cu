#include "vector_ops.cuh"

__global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

__global__ void saxpy(float alpha, const float* __restrict__ x, float* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = alpha * x[i] + y[i];
}

__global__ void scale_clamp(float* v, float s, float lo, float hi, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    v[i] = fminf(fmaxf(v[i] * s, lo), hi);
}

void launch_vec_add(const float* a, const float* b, float* c, int n) {
    int block = 256;
    vec_add<<<(n + block - 1) / block, block>>>(a, b, c, n);
    CHECK_CUDA(cudaGetLastError());
}

void launch_saxpy(float alpha, const float* x, float* y, int n) {
    saxpy<<<32, 128>>>(alpha, x, y, n);
    CHECK_CUDA(cudaGetLastError());
}

void launch_scale_clamp(float* v, float s, float lo, float hi, int n) {
    scale_clamp<<<(n + 127) / 128, 128>>>(v, s, lo, hi, n);
    CHECK_CUDA(cudaGetLastError());
}
