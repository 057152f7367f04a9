// RMS normalisation of each row, one block of 128 threads per row, written the way TVM emits
// its cross-thread reductions: a straight-line __shfl_down_sync chain per warp, the warps' sums
// staged in shared memory, a second chain in the first warp and a broadcast from lane 0.
extern "C" __global__ void __launch_bounds__(128) row_rms_kernel(float* __restrict__ y, const float* __restrict__ x, int cols) {
  __shared__ float staging[4];
  __shared__ float total[1];
  float partial[1];
  float lane_sum[1];
  float warp_sum[1];
  float t0[1];
  partial[0] = 0.0f;
  for (int k = 0; k < (cols + 127) / 128; ++k) {
    int c = k * 128 + (int)threadIdx.x;
    if (c < cols) {
      float v = x[blockIdx.x * cols + c];
      partial[0] = partial[0] + v * v;
    }
  }
  lane_sum[0] = partial[0];
  unsigned int mask = __activemask();
  t0[0] = __shfl_down_sync(mask, lane_sum[0], 16, 32);
  lane_sum[0] = lane_sum[0] + t0[0];
  t0[0] = __shfl_down_sync(mask, lane_sum[0], 8, 32);
  lane_sum[0] = lane_sum[0] + t0[0];
  t0[0] = __shfl_down_sync(mask, lane_sum[0], 4, 32);
  lane_sum[0] = lane_sum[0] + t0[0];
  t0[0] = __shfl_down_sync(mask, lane_sum[0], 2, 32);
  lane_sum[0] = lane_sum[0] + t0[0];
  t0[0] = __shfl_down_sync(mask, lane_sum[0], 1, 32);
  lane_sum[0] = lane_sum[0] + t0[0];
  if (((int)threadIdx.x) % 32 == 0) {
    staging[((int)threadIdx.x) >> 5] = lane_sum[0];
  }
  __syncthreads();
  warp_sum[0] = 0.0f;
  if (((int)threadIdx.x) < 4) {
    warp_sum[0] = staging[(int)threadIdx.x];
  }
  mask = __activemask();
  t0[0] = __shfl_down_sync(mask, warp_sum[0], 2, 32);
  warp_sum[0] = warp_sum[0] + t0[0];
  t0[0] = __shfl_down_sync(mask, warp_sum[0], 1, 32);
  warp_sum[0] = warp_sum[0] + t0[0];
  warp_sum[0] = __shfl_sync(mask, warp_sum[0], 0, 32);
  if (((int)threadIdx.x) == 0) {
    total[0] = warp_sum[0];
  }
  __syncthreads();
  float scale = rsqrtf(total[0] / (float)cols + 1e-5f);
  for (int k = 0; k < (cols + 127) / 128; ++k) {
    int c = k * 128 + (int)threadIdx.x;
    if (c < cols) {
      y[blockIdx.x * cols + c] = x[blockIdx.x * cols + c] * scale;
    }
  }
}
