// y = alpha * x; cnt[r] = number of positive elements of row r.
__global__ void scale_count(const float* x, float* y, int* cnt, int rows, int cols, float alpha) {
  int r = blockIdx.x;
  if (r >= rows) return;
  int local = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    float v = x[r * cols + c];
    y[r * cols + c] = alpha * v;
    local += v > 0.0f;
  }
  atomicAdd(&cnt[r], local);
}
