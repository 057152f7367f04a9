// Thrust: statistics of a sequence (transform, reduce, sort, scan) plus a custom kernel.
#include <cmath>
#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/functional.h>

struct square {
    __host__ __device__ float operator()(float v) const { return v * v; }
};

__global__ void wiggle(float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = sinf(v[i] * 0.01f) * 10.0f;
}

int main() {
    const int n = 100000;
    thrust::device_vector<float> d(n);
    thrust::sequence(d.begin(), d.end());
    wiggle<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(d.data()), n);
    float total = thrust::reduce(d.begin(), d.end(), 0.0f, thrust::plus<float>());
    thrust::device_vector<float> sq(n);
    thrust::transform(d.begin(), d.end(), sq.begin(), square());
    float sumsq = thrust::reduce(sq.begin(), sq.end());
    thrust::sort(d.begin(), d.end());
    thrust::host_vector<float> sorted = d;
    thrust::device_vector<int> ones(n, 1), ranks(n);
    thrust::exclusive_scan(ones.begin(), ones.end(), ranks.begin());
    thrust::host_vector<int> h_ranks = ranks;

    double e_total = 0.0, e_sumsq = 0.0;
    for (int i = 0; i < n; ++i) { double v = std::sin(i * 0.01f) * 10.0f; e_total += v; e_sumsq += v * v; }
    bool sorted_ok = true;
    for (int i = 1; i < n; ++i) sorted_ok &= sorted[i - 1] <= sorted[i];
    bool ok = std::fabs(total - e_total) < 1e-2 * std::fmax(1.0, std::fabs(e_total)) &&
              std::fabs(sumsq - e_sumsq) < 1e-3 * e_sumsq && sorted_ok && h_ranks[n - 1] == n - 1 &&
              sorted[0] >= -10.0f && sorted[n - 1] <= 10.0f;
    std::printf("total %.3f sumsq %.1f min %.3f max %.3f\n", total, sumsq, sorted[0], sorted[n - 1]);
    std::printf(ok ? "PASS\n" : "FAIL\n");
    return ok ? 0 : 1;
}
