// parse shim: CUDA's cooperative groups, declared so that real code parses. tools/cuda/coop_groups.py
// rewrites the group operations of device code into the CUDA primitives the lowering knows
// (barriers, warp shuffles and votes); what it cannot is reported as unsupported.
#pragma once
namespace cooperative_groups {

struct thread_group {
  __device__ thread_group() {}
  template <class G> __device__ thread_group(const G&) {}
  __device__ void sync() const;
  __device__ unsigned long long thread_rank() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
};

struct thread_block {
  __device__ thread_block() {}
  __device__ void sync() const;
  __device__ unsigned int thread_rank() const;
  __device__ unsigned int size() const;
  __device__ unsigned int num_threads() const;
  __device__ dim3 group_index() const;
  __device__ dim3 thread_index() const;
  __device__ dim3 group_dim() const;
  __device__ dim3 dim_threads() const;
};

struct grid_group {
  __device__ void sync() const;
  __device__ bool is_valid() const;
  __device__ unsigned long long thread_rank() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
  __device__ unsigned long long block_rank() const;
  __device__ unsigned long long num_blocks() const;
  __device__ dim3 group_dim() const;
  __device__ dim3 dim_blocks() const;
  __device__ dim3 block_index() const;
};

struct coalesced_group {
  unsigned int cudacpu_lanes;  // the lanes that made the group (set by the lowering)
  __device__ void sync() const;
  __device__ unsigned long long thread_rank() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
  template <class T> __device__ T shfl(T, int) const;
  template <class T> __device__ T shfl_down(T, unsigned int) const;
  template <class T> __device__ T shfl_up(T, unsigned int) const;
  __device__ int any(int) const;
  __device__ int all(int) const;
  __device__ unsigned int ballot(int) const;
};

// `Parent` is the group partitioned (void: not known from the type, as CUDA's own
// `thread_block_tile<N>` that any tile of N converts to).
template <unsigned int N, class Parent = void>
struct thread_block_tile {
  __device__ thread_block_tile() {}
  template <class P> __device__ thread_block_tile(const thread_block_tile<N, P>&) {}
  __device__ void sync() const;
  __device__ unsigned int thread_rank() const;
  __device__ unsigned int size() const;
  __device__ unsigned int num_threads() const;
  __device__ unsigned int meta_group_rank() const;
  __device__ unsigned int meta_group_size() const;
  template <class T> __device__ T shfl(T, int) const;
  template <class T> __device__ T shfl_down(T, unsigned int) const;
  template <class T> __device__ T shfl_up(T, unsigned int) const;
  template <class T> __device__ T shfl_xor(T, unsigned int) const;
  __device__ int any(int) const;
  __device__ int all(int) const;
  __device__ unsigned int ballot(int) const;
  template <class T> __device__ unsigned int match_any(T) const;
  template <class T> __device__ unsigned int match_all(T, int&) const;
};

__device__ thread_block this_thread_block();
__device__ grid_group this_grid();
__device__ coalesced_group coalesced_threads();
template <unsigned int N, class P> __device__ thread_block_tile<N, P> tiled_partition(const P&);
template <class P> __device__ thread_group tiled_partition(const P&, unsigned int);
template <class G> __device__ void sync(const G&);
template <class G> __device__ unsigned long long thread_rank(const G&);
template <class G> __device__ unsigned long long group_size(const G&);

template <class T> struct plus { __device__ T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { __device__ T operator()(const T& a, const T& b) const { return a < b ? a : b; } };
template <class T> struct greater { __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
template <class T> struct bit_and { __device__ T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { __device__ T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { __device__ T operator()(const T& a, const T& b) const { return a ^ b; } };

template <class G, class T, class Op> __device__ auto reduce(const G&, T&& value, Op&& op) -> decltype(op(value, value));
template <class G, class T, class Op> __device__ auto inclusive_scan(const G&, T&& value, Op&& op) -> decltype(op(value, value));
template <class G, class T> __device__ T inclusive_scan(const G&, T&& value);
template <class G, class T, class Op> __device__ auto exclusive_scan(const G&, T&& value, Op&& op) -> decltype(op(value, value));
template <class G, class T> __device__ T exclusive_scan(const G&, T&& value);

namespace experimental {}
}  // namespace cooperative_groups

// grid.sync() as coop_groups.py rewrites it: a barrier of the whole grid, which the lowering splits at
__device__ void cudacpu_grid_sync();
