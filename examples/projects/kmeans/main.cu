// k-means on well-separated synthetic clusters: checks that every point lands in its true cluster.
#include <cmath>
#include <cstdio>
#include <vector>
#include "kmeans.h"

int main() {
    const int k = 4, dim = 3, per = 2500, n = k * per, iters = 8;
    const float centers[k][dim] = {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {0, 0, 10}};
    std::vector<float> pts(n * dim), cent(k * dim);
    std::vector<int> truth(n), labels(n);
    unsigned s = 7u;
    for (int i = 0; i < n; ++i) {
        truth[i] = i % k;
        for (int f = 0; f < dim; ++f) {
            s = s * 1103515245u + 12345u;
            pts[i * dim + f] = centers[truth[i]][f] + ((s >> 16) % 1000) / 500.0f - 1.0f;
        }
    }
    for (int j = 0; j < k; ++j)
        for (int f = 0; f < dim; ++f) cent[j * dim + f] = pts[j * dim + f];  // first k points (one per cluster)
    float *dp, *dc, *ds; int *dl, *dn;
    cudaMalloc(&dp, pts.size() * sizeof(float));
    cudaMalloc(&dc, cent.size() * sizeof(float));
    cudaMalloc(&ds, cent.size() * sizeof(float));
    cudaMalloc(&dl, n * sizeof(int));
    cudaMalloc(&dn, k * sizeof(int));
    cudaMemcpy(dp, pts.data(), pts.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dc, cent.data(), cent.size() * sizeof(float), cudaMemcpyHostToDevice);
    for (int it = 0; it < iters; ++it) kmeans_iteration(dp, dc, dl, ds, dn, n, k, dim);
    cudaMemcpy(labels.data(), dl, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(cent.data(), dc, cent.size() * sizeof(float), cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += labels[i] != truth[i];
    double drift = 0.0;
    for (int j = 0; j < k; ++j)
        for (int f = 0; f < dim; ++f) drift = std::fmax(drift, std::fabs(cent[j * dim + f] - centers[j][f]));
    std::printf("mislabelled %d, centroid drift %.4f\n", wrong, drift);
    bool ok = wrong == 0 && drift < 0.1;
    std::printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
