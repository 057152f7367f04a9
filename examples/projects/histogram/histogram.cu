// 256-bin histogram of bytes: per-block shared-memory bins, merged with global atomics.
#include <cstdio>
#include <cstdlib>
#include <vector>

#define BINS 256

__global__ void histogram_shared(const unsigned char* data, unsigned int* bins, int n) {
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

int main() {
    const int n = 3000017;
    std::vector<unsigned char> data(n);
    std::vector<unsigned int> expect(BINS, 0), got(BINS, 0);
    unsigned state = 2463534242u;
    for (int i = 0; i < n; ++i) {
        state ^= state << 13; state ^= state >> 17; state ^= state << 5;
        data[i] = static_cast<unsigned char>((state % 251u + (i % 7)) & 0xff);
        ++expect[data[i]];
    }
    unsigned char* d_data;
    unsigned int* d_bins;
    cudaMalloc(&d_data, n);
    cudaMalloc(&d_bins, BINS * sizeof(unsigned int));
    cudaMemcpy(d_data, data.data(), n, cudaMemcpyHostToDevice);
    cudaMemset(d_bins, 0, BINS * sizeof(unsigned int));
    histogram_shared<<<120, 256>>>(d_data, d_bins, n);
    cudaMemcpy(got.data(), d_bins, BINS * sizeof(unsigned int), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int b = 0; b < BINS; ++b) bad += got[b] != expect[b];
    std::printf("bin[0]=%u bin[100]=%u\n", got[0], got[100]);
    std::printf(bad ? "FAIL: %d bins differ\n" : "PASS\n", bad);
    cudaFree(d_data); cudaFree(d_bins);
    return bad != 0;
}
