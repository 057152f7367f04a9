// A small reduction library: float sum (shared memory + warp shuffles), int max (atomics).
#include <climits>
#include <cmath>
#include <vector>
#include "reduce.cuh"

int main() {
    const int n = 1000003;
    std::vector<float> x(n);
    std::vector<int> k(n);
    double expect_sum = 0.0;
    int expect_max = INT_MIN;
    unsigned seed = 12345u;
    for (int i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (seed >> 8) / 16777216.0f;
        k[i] = static_cast<int>(seed % 2000003u) - 1000000;
        expect_sum += x[i];
        if (k[i] > expect_max) expect_max = k[i];
    }
    float* dx;
    int* dk;
    CUDA_OK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_OK(cudaMalloc(&dk, n * sizeof(int)));
    CUDA_OK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dk, k.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    float sum = reduce_sum(dx, n);
    int mx = reduce_max(dk, n);
    std::printf("sum %.3f (expected %.3f)\nmax %d (expected %d)\n", sum, expect_sum, mx, expect_max);
    bool ok = std::fabs(sum - expect_sum) <= 1e-4 * std::fabs(expect_sum) && mx == expect_max;
    cudaFree(dx);
    cudaFree(dk);
    std::printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
