#include "heat.h"

// One explicit step of the 2-D heat equation with fixed (Dirichlet) borders.
__global__ void heat_step(const float* __restrict__ u, float* __restrict__ v, int nx, int ny, float alpha) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int i = y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
        v[i] = u[i];
        return;
    }
    v[i] = u[i] + alpha * (u[i - 1] + u[i + 1] + u[i - nx] + u[i + nx] - 4.0f * u[i]);
}

void simulate(float* d_u, float* d_tmp, int nx, int ny, float alpha, int steps) {
    dim3 block(32, 8);
    dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
    for (int s = 0; s < steps; ++s) {
        heat_step<<<grid, block>>>(d_u, d_tmp, nx, ny, alpha);
        float* t = d_u; d_u = d_tmp; d_tmp = t;
    }
    if (steps % 2) cudaMemcpy(d_tmp, d_u, sizeof(float) * nx * ny, cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
}
