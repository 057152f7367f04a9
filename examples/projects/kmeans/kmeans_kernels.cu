#include "kmeans.h"

// Assign each point to its nearest centroid (centroids cached in shared memory).
__global__ void assign_points(const float* points, const float* centroids, int* labels, int n, int k, int dim) {
    extern __shared__ float c[];
    for (int t = threadIdx.x; t < k * dim; t += blockDim.x) c[t] = centroids[t];
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int best = 0;
    float best_d = 3.4e38f;
    for (int j = 0; j < k; ++j) {
        float d = 0.0f;
        for (int f = 0; f < dim; ++f) {
            float diff = points[i * dim + f] - c[j * dim + f];
            d += diff * diff;
        }
        if (d < best_d) { best_d = d; best = j; }
    }
    labels[i] = best;
}

// Accumulate coordinates and counts per cluster with atomics.
__global__ void accumulate(const float* points, const int* labels, float* sums, int* counts, int n, int dim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int l = labels[i];
    atomicAdd(&counts[l], 1);
    for (int f = 0; f < dim; ++f) atomicAdd(&sums[l * dim + f], points[i * dim + f]);
}

__global__ void update_centroids(float* centroids, const float* sums, const int* counts, int k, int dim) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= k * dim) return;
    int cnt = counts[t / dim];
    if (cnt > 0) centroids[t] = sums[t] / cnt;
}

void kmeans_iteration(const float* d_points, float* d_centroids, int* d_labels, float* d_sums, int* d_counts,
                      int n, int k, int dim) {
    int block = 128;
    assign_points<<<(n + block - 1) / block, block, k * dim * sizeof(float)>>>(d_points, d_centroids, d_labels, n, k, dim);
    cudaMemset(d_sums, 0, k * dim * sizeof(float));
    cudaMemset(d_counts, 0, k * sizeof(int));
    accumulate<<<(n + block - 1) / block, block>>>(d_points, d_labels, d_sums, d_counts, n, dim);
    update_centroids<<<(k * dim + 63) / 64, 64>>>(d_centroids, d_sums, d_counts, k, dim);
}
