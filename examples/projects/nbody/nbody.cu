// All-pairs n-body accelerations with shared-memory tiles of bodies, then a leapfrog step.
#include <cmath>
#include <cstdio>
#include <vector>

#define TILE 128
#define SOFTENING 1e-3f

__global__ void accelerations(const float4* pos, float3* acc, int n) {
    __shared__ float4 tile[TILE];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = i < n ? pos[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float3 a = make_float3(0.f, 0.f, 0.f);
    for (int base = 0; base < n; base += TILE) {
        int j = base + threadIdx.x;
        tile[threadIdx.x] = j < n ? pos[j] : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
        for (int k = 0; k < TILE; ++k) {
            float dx = tile[k].x - me.x, dy = tile[k].y - me.y, dz = tile[k].z - me.z;
            float inv = rsqrtf(dx * dx + dy * dy + dz * dz + SOFTENING);
            float s = tile[k].w * inv * inv * inv;
            a.x += dx * s; a.y += dy * s; a.z += dz * s;
        }
        __syncthreads();
    }
    if (i < n) acc[i] = a;
}

__global__ void integrate(float4* pos, float3* vel, const float3* acc, int n, float dt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    vel[i].x += acc[i].x * dt; vel[i].y += acc[i].y * dt; vel[i].z += acc[i].z * dt;
    pos[i].x += vel[i].x * dt; pos[i].y += vel[i].y * dt; pos[i].z += vel[i].z * dt;
}

int main() {
    const int n = 1000, steps = 5;
    const float dt = 0.01f;
    std::vector<float4> p(n);
    std::vector<float3> v(n, make_float3(0.f, 0.f, 0.f));
    for (int i = 0; i < n; ++i)
        p[i] = make_float4(std::sin(i * 0.37f), std::cos(i * 0.11f), std::sin(i * 0.05f + 1.f), 1.0f / n);
    std::vector<float4> rp = p;
    std::vector<float3> rv = v;
    float4* dp; float3 *dv, *da;
    cudaMalloc(&dp, n * sizeof(float4));
    cudaMalloc(&dv, n * sizeof(float3));
    cudaMalloc(&da, n * sizeof(float3));
    cudaMemcpy(dp, p.data(), n * sizeof(float4), cudaMemcpyHostToDevice);
    cudaMemcpy(dv, v.data(), n * sizeof(float3), cudaMemcpyHostToDevice);
    int blocks = (n + TILE - 1) / TILE;
    for (int s = 0; s < steps; ++s) {
        accelerations<<<blocks, TILE>>>(dp, da, n);
        integrate<<<blocks, TILE>>>(dp, dv, da, n, dt);
    }
    cudaMemcpy(p.data(), dp, n * sizeof(float4), cudaMemcpyDeviceToHost);
    // Host reference in double precision.
    for (int s = 0; s < steps; ++s) {
        std::vector<float3> ra(n);
        for (int i = 0; i < n; ++i) {
            double ax = 0, ay = 0, az = 0;
            for (int k = 0; k < n; ++k) {
                double dx = rp[k].x - rp[i].x, dy = rp[k].y - rp[i].y, dz = rp[k].z - rp[i].z;
                double inv = 1.0 / std::sqrt(dx * dx + dy * dy + dz * dz + SOFTENING);
                double sc = rp[k].w * inv * inv * inv;
                ax += dx * sc; ay += dy * sc; az += dz * sc;
            }
            ra[i] = make_float3((float)ax, (float)ay, (float)az);
        }
        for (int i = 0; i < n; ++i) {
            rv[i].x += ra[i].x * dt; rv[i].y += ra[i].y * dt; rv[i].z += ra[i].z * dt;
            rp[i].x += rv[i].x * dt; rp[i].y += rv[i].y * dt; rp[i].z += rv[i].z * dt;
        }
    }
    double err = 0.0;
    for (int i = 0; i < n; ++i)
        err = std::fmax(err, std::fabs(p[i].x - rp[i].x) + std::fabs(p[i].y - rp[i].y) + std::fabs(p[i].z - rp[i].z));
    std::printf("max position error %.3e\n", err);
    cudaFree(dp); cudaFree(dv); cudaFree(da);
    std::printf(err < 1e-3 ? "PASS\n" : "FAIL\n");
    return err < 1e-3 ? 0 : 1;
}
