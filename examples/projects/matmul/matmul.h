#pragma once
// A dense layer: C = relu(A * B + bias) on device pointers.
void dense_relu(const float* A, const float* B, const float* bias, float* C, int M, int N, int K);
