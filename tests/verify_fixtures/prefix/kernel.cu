// Inclusive prefix sum of one block-sized chunk per block (single block here), plus a running total.
__global__ void prefix_kernel(const int* x, int* y, long long* total, int n) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < n; i++) { s += x[i]; y[i] = s; }
    total[0] += s;
  }
}
