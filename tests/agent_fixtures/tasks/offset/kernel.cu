__global__ void offset_kernel(const int* a, int* b, int k, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    b[i] = a[i] + k;
}
