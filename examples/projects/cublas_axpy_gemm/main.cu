// cuBLAS: y = alpha*x + y, dot, and C = A*B (column-major), plus a custom kernel; host-checked.
#include <cmath>
#include <cstdio>
#include <vector>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void square_inplace(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = v[i] * v[i];
}

#define CUBLAS_OK(x) do { if ((x) != CUBLAS_STATUS_SUCCESS) { std::printf("cuBLAS error line %d\n", __LINE__); return 2; } } while (0)

int main() {
    const int n = 4096, M = 64, N = 48, K = 32;
    std::vector<float> x(n), y(n), A(M * K), B(K * N), C(M * N);
    for (int i = 0; i < n; ++i) { x[i] = 0.001f * i; y[i] = 1.0f - 0.0005f * i; }
    for (int i = 0; i < M * K; ++i) A[i] = (i % 17) * 0.1f - 0.8f;
    for (int i = 0; i < K * N; ++i) B[i] = (i % 13) * 0.05f - 0.3f;
    float *dx, *dy, *dA, *dB, *dC;
    cudaMalloc(&dx, n * sizeof(float)); cudaMalloc(&dy, n * sizeof(float));
    cudaMalloc(&dA, A.size() * sizeof(float)); cudaMalloc(&dB, B.size() * sizeof(float));
    cudaMalloc(&dC, C.size() * sizeof(float));
    cublasHandle_t h;
    CUBLAS_OK(cublasCreate(&h));
    CUBLAS_OK(cublasSetVector(n, sizeof(float), x.data(), 1, dx, 1));
    CUBLAS_OK(cublasSetVector(n, sizeof(float), y.data(), 1, dy, 1));
    cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice);
    const float alpha = 2.0f, one = 1.0f, zero = 0.0f;
    CUBLAS_OK(cublasSaxpy(h, n, &alpha, dx, 1, dy, 1));
    square_inplace<<<(n + 255) / 256, 256>>>(dy, n);
    float dot = 0.0f;
    CUBLAS_OK(cublasSdot(h, n, dx, 1, dy, 1, &dot));
    CUBLAS_OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M));
    cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost);
    double expect_dot = 0.0;
    for (int i = 0; i < n; ++i) { double v = 2.0 * x[i] + y[i]; expect_dot += x[i] * v * v; }
    double gemm_err = 0.0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double acc = 0.0;
            for (int k = 0; k < K; ++k) acc += (double)A[i + k * M] * B[k + j * K];
            gemm_err = std::fmax(gemm_err, std::fabs(acc - C[i + j * M]));
        }
    std::printf("dot %.4f (expected %.4f), gemm max err %.2e\n", dot, expect_dot, gemm_err);
    cublasDestroy(h);
    cudaFree(dx); cudaFree(dy); cudaFree(dA); cudaFree(dB); cudaFree(dC);
    bool ok = std::fabs(dot - expect_dot) <= 1e-3 * std::fabs(expect_dot) && gemm_err < 1e-4;
    std::printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
