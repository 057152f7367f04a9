// The shape of TVM's generated layout kernels: flattened indices through a shifted thread
// index, divisions and remainders by constants, a partially used last block.
// transpose (6, 10, 12) -> (10, 6, 12) with axes [1, 0, 2]
extern "C" __global__ void __launch_bounds__(256) transpose_kernel(float* __restrict__ T_transpose_ptr, float* __restrict__ x_ptr) {
  if (((((int)blockIdx.x) * 128) + (((int)threadIdx.x) >> 1)) < 360) {
    int cse_v1 = ((((int)blockIdx.x) * 128) + (((int)threadIdx.x) >> 1));
    T_transpose_ptr[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = x_ptr[(((((((((int)blockIdx.x) * 128) + (((int)threadIdx.x) >> 1)) % 36) / 6) * 120) + ((cse_v1 / 36) * 12)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 12))];
  }
}

// a broadcast along the last axis: out[i] = x[i] + b[i % 12]
extern "C" __global__ void __launch_bounds__(256) add_broadcast_kernel(float* __restrict__ T_add_ptr, float* __restrict__ x_ptr, float* __restrict__ b_ptr) {
  if (((((int)blockIdx.x) * 64) + (((int)threadIdx.x) >> 2)) < 180) {
    T_add_ptr[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = (x_ptr[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] + b_ptr[(((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 12)]);
  }
}

// nearest upsampling of both axes of x as (60, 12) by 2: a floor by 2 stays inside runs of 24
extern "C" __global__ void __launch_bounds__(256) upsample_kernel(float* __restrict__ T_up_ptr, float* __restrict__ x_ptr) {
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < 2880) {
    T_up_ptr[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = x_ptr[(((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 48) * 12) + ((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 24) >> 1))];
  }
}
