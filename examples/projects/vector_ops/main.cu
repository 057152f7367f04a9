// Vector operations: add, saxpy, scale+clamp; checks against a host computation.
#include <cmath>
#include <vector>
#include "vector_ops.cuh"

int main() {
    const int n = 1 << 18;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; ++i) {
        a[i] = std::sin(0.001f * i);
        b[i] = std::cos(0.002f * i);
    }
    float *da, *db, *dc;
    CHECK_CUDA(cudaMalloc(&da, n * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&db, n * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dc, n * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    launch_vec_add(da, db, dc, n);       // c = a + b
    launch_saxpy(0.5f, da, dc, n);       // c = 0.5 a + c
    launch_scale_clamp(dc, 2.0f, -1.5f, 1.5f, n);
    CHECK_CUDA(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));

    int bad = 0;
    double checksum = 0.0;
    for (int i = 0; i < n; ++i) {
        float expect = std::fmin(std::fmax((a[i] + b[i] + 0.5f * a[i]) * 2.0f, -1.5f), 1.5f);
        if (std::fabs(expect - c[i]) > 1e-5f) ++bad;
        checksum += c[i];
    }
    std::printf("checksum %.6f\n", checksum);
    cudaFree(da); cudaFree(db); cudaFree(dc);
    std::printf(bad ? "FAIL: %d mismatches\n" : "PASS\n", bad);
    return bad ? 1 : 0;
}
