#pragma once
#include <cstdio>
#include <climits>
#include <cstdlib>

#define CUDA_OK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); std::exit(2); } } while (0)

// Sum of n floats in two passes; returns the total.
float reduce_sum(const float* d_in, int n);
// Maximum of n ints with a warp-shuffle kernel and atomicMax.
int reduce_max(const int* d_in, int n);
