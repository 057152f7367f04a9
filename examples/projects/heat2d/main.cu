#include <cmath>
#include <cstdio>
#include <vector>
#include "heat.h"

int main() {
    const int nx = 130, ny = 97, steps = 50;
    const float alpha = 0.2f;
    std::vector<float> u(nx * ny, 0.0f), ref;
    for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x) u[y * nx + x] = (x > nx / 3 && x < nx / 2 && y > ny / 4) ? 100.0f : 0.0f;
    ref = u;
    float *du, *dt;
    cudaMalloc(&du, u.size() * sizeof(float));
    cudaMalloc(&dt, u.size() * sizeof(float));
    cudaMemcpy(du, u.data(), u.size() * sizeof(float), cudaMemcpyHostToDevice);
    simulate(du, dt, nx, ny, alpha, steps);
    cudaMemcpy(u.data(), du, u.size() * sizeof(float), cudaMemcpyDeviceToHost);
    std::vector<float> next(ref.size());
    for (int s = 0; s < steps; ++s) {
        for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x) {
                int i = y * nx + x;
                bool border = x == 0 || y == 0 || x == nx - 1 || y == ny - 1;
                next[i] = border ? ref[i] : ref[i] + alpha * (ref[i - 1] + ref[i + 1] + ref[i - nx] + ref[i + nx] - 4.0f * ref[i]);
            }
        ref.swap(next);
    }
    double err = 0.0, heat = 0.0;
    for (size_t i = 0; i < u.size(); ++i) { err = std::fmax(err, std::fabs(u[i] - ref[i])); heat += u[i]; }
    std::printf("total heat %.4f max_err %.3e\n", heat, err);
    cudaFree(du); cudaFree(dt);
    std::printf(err < 1e-3 ? "PASS\n" : "FAIL\n");
    return err < 1e-3 ? 0 : 1;
}
