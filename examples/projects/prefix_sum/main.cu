#include <cstdio>
#include <vector>
#include "scan.cuh"

int main() {
    const int n = 200000;
    std::vector<int> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 13 - 6;
    int *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(int));
    cudaMalloc(&d_out, n * sizeof(int));
    cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    inclusive_scan(d_in, d_out, n);
    cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
    long long running = 0;
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        running += in[i];
        if (out[i] != running) ++bad;
    }
    std::printf("last %d\n", out[n - 1]);
    std::printf(bad ? "FAIL: %d wrong\n" : "PASS\n", bad);
    cudaFree(d_in); cudaFree(d_out);
    return bad ? 1 : 0;
}
