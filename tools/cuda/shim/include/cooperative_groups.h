// parse shim: cooperative groups are parsed so that the lowering can report them as unsupported
#pragma once
namespace cooperative_groups {
struct thread_block { __device__ void sync() const; __device__ unsigned int thread_rank() const; __device__ unsigned int size() const; };
struct grid_group { __device__ void sync() const; __device__ unsigned long long thread_rank() const; __device__ unsigned long long size() const; };
template <unsigned int N> struct thread_block_tile { __device__ void sync() const; __device__ unsigned int thread_rank() const;
  template <class T> __device__ T shfl_down(T, unsigned int) const; template <class T> __device__ T shfl_xor(T, unsigned int) const;
  template <class T> __device__ T shfl(T, int) const; };
__device__ thread_block this_thread_block();
__device__ grid_group this_grid();
template <unsigned int N, class P> __device__ thread_block_tile<N> tiled_partition(const P&);
}
