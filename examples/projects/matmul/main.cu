#include <cmath>
#include <cstdio>
#include <vector>
#include "matmul.h"

int main(int argc, char** argv) {
    const int M = 300, N = 200, K = 170;
    std::vector<float> A(M * K), B(K * N), bias(N), C(M * N);
    for (int i = 0; i < M * K; ++i) A[i] = ((i * 37) % 101) / 101.0f - 0.5f;
    for (int i = 0; i < K * N; ++i) B[i] = ((i * 53) % 89) / 89.0f - 0.5f;
    for (int j = 0; j < N; ++j) bias[j] = 0.01f * (j % 7) - 0.02f;
    float *dA, *dB, *dbias, *dC;
    cudaMalloc(&dA, A.size() * sizeof(float));
    cudaMalloc(&dB, B.size() * sizeof(float));
    cudaMalloc(&dbias, bias.size() * sizeof(float));
    cudaMalloc(&dC, C.size() * sizeof(float));
    cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dbias, bias.data(), bias.size() * sizeof(float), cudaMemcpyHostToDevice);
    dense_relu(dA, dB, dbias, dC, M, N, K);
    cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost);
    double max_err = 0.0, total = 0.0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double acc = bias[j];
            for (int k = 0; k < K; ++k) acc += (double)A[i * K + k] * B[k * N + j];
            acc = acc > 0.0 ? acc : 0.0;
            max_err = std::fmax(max_err, std::fabs(acc - C[i * N + j]));
            total += C[i * N + j];
        }
    std::printf("total %.5f max_err %.3e\n", total, max_err);
    cudaFree(dA); cudaFree(dB); cudaFree(dbias); cudaFree(dC);
    if (max_err > 1e-3) { std::printf("FAIL\n"); return 1; }
    std::printf("PASS\n");
    return 0;
}
