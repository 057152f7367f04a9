#pragma once
void kmeans_iteration(const float* d_points, float* d_centroids, int* d_labels, float* d_sums, int* d_counts,
                      int n, int k, int dim);
