#pragma once
#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(err_), \
                         __FILE__, __LINE__);                                         \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

void launch_vec_add(const float* a, const float* b, float* c, int n);
void launch_saxpy(float alpha, const float* x, float* y, int n);
void launch_scale_clamp(float* v, float s, float lo, float hi, int n);
