// CPU CUDA runtime: cooperative groups.
//
// Inside kernels the port rewrites every group operation it supports (tools/cuda/coop_groups.py)
// into barriers and warp intrinsics before lowering, so the group objects that remain in the
// lowered code (`cg::thread_block block = cg::this_thread_block();`) are empty values: this
// header gives them their types and the functions that make them, so that the lowered code
// and host code including <cooperative_groups.h> compile with g++. An operation called on a
// group outside a lowered kernel (the port reports such kernels as unsupported) stops the
// program with a message instead of computing something wrong.
#pragma once
#include <cstdio>
#include <cstdlib>
#include "cuda_cpu/defines.h"
#include "vector_types.h"

namespace cooperative_groups {
namespace details {
[[noreturn]] inline void unsupported(const char* what) {
  std::fprintf(stderr, "cooperative groups: %s is not supported outside a lowered kernel\n", what);
  std::abort();
}
}  // namespace details

// Variables of these types may be unused once their operations are rewritten.
struct __attribute__((unused)) thread_group {
  thread_group() {}
  template <class G> thread_group(const G&) {}
  void sync() const { details::unsupported("thread_group::sync"); }
  unsigned long long thread_rank() const { details::unsupported("thread_group::thread_rank"); }
  unsigned long long size() const { details::unsupported("thread_group::size"); }
  unsigned long long num_threads() const { details::unsupported("thread_group::num_threads"); }
};

struct __attribute__((unused)) thread_block {
  thread_block() {}
  void sync() const { details::unsupported("thread_block::sync"); }
  unsigned int thread_rank() const { details::unsupported("thread_block::thread_rank"); }
  unsigned int size() const { details::unsupported("thread_block::size"); }
  unsigned int num_threads() const { details::unsupported("thread_block::num_threads"); }
  dim3 group_index() const { details::unsupported("thread_block::group_index"); }
  dim3 thread_index() const { details::unsupported("thread_block::thread_index"); }
  dim3 group_dim() const { details::unsupported("thread_block::group_dim"); }
  dim3 dim_threads() const { details::unsupported("thread_block::dim_threads"); }
};

struct __attribute__((unused)) grid_group {
  void sync() const { details::unsupported("grid_group::sync"); }
  bool is_valid() const { return false; }
  unsigned long long thread_rank() const { details::unsupported("grid_group::thread_rank"); }
  unsigned long long size() const { details::unsupported("grid_group::size"); }
  unsigned long long num_threads() const { details::unsupported("grid_group::num_threads"); }
  unsigned long long block_rank() const { details::unsupported("grid_group::block_rank"); }
  unsigned long long num_blocks() const { details::unsupported("grid_group::num_blocks"); }
  dim3 group_dim() const { details::unsupported("grid_group::group_dim"); }
  dim3 dim_blocks() const { details::unsupported("grid_group::dim_blocks"); }
  dim3 block_index() const { details::unsupported("grid_group::block_index"); }
};

struct __attribute__((unused)) coalesced_group {
  unsigned int cudacpu_lanes;  // the lanes that made the group (set by the lowering)
  void sync() const { details::unsupported("coalesced_group::sync"); }
  unsigned long long thread_rank() const { details::unsupported("coalesced_group::thread_rank"); }
  unsigned long long size() const { details::unsupported("coalesced_group::size"); }
  unsigned long long num_threads() const { details::unsupported("coalesced_group::num_threads"); }
  template <class T> T shfl(T, int) const { details::unsupported("coalesced_group::shfl"); }
  template <class T> T shfl_down(T, unsigned int) const { details::unsupported("coalesced_group::shfl_down"); }
  template <class T> T shfl_up(T, unsigned int) const { details::unsupported("coalesced_group::shfl_up"); }
  int any(int) const { details::unsupported("coalesced_group::any"); }
  int all(int) const { details::unsupported("coalesced_group::all"); }
  unsigned int ballot(int) const { details::unsupported("coalesced_group::ballot"); }
};

template <unsigned int N, class Parent = void>
struct __attribute__((unused)) thread_block_tile {
  static_assert(N > 0 && N <= 32 && (N & (N - 1)) == 0, "a thread_block_tile has a power of two <= 32 threads");
  thread_block_tile() {}
  template <class P> thread_block_tile(const thread_block_tile<N, P>&) {}
  void sync() const { details::unsupported("thread_block_tile::sync"); }
  unsigned int thread_rank() const { details::unsupported("thread_block_tile::thread_rank"); }
  static constexpr unsigned int size() { return N; }
  static constexpr unsigned int num_threads() { return N; }
  unsigned int meta_group_rank() const { details::unsupported("thread_block_tile::meta_group_rank"); }
  unsigned int meta_group_size() const { details::unsupported("thread_block_tile::meta_group_size"); }
  template <class T> T shfl(T, int) const { details::unsupported("thread_block_tile::shfl"); }
  template <class T> T shfl_down(T, unsigned int) const { details::unsupported("thread_block_tile::shfl_down"); }
  template <class T> T shfl_up(T, unsigned int) const { details::unsupported("thread_block_tile::shfl_up"); }
  template <class T> T shfl_xor(T, unsigned int) const { details::unsupported("thread_block_tile::shfl_xor"); }
  int any(int) const { details::unsupported("thread_block_tile::any"); }
  int all(int) const { details::unsupported("thread_block_tile::all"); }
  unsigned int ballot(int) const { details::unsupported("thread_block_tile::ballot"); }
};

inline thread_block this_thread_block() { return thread_block(); }
inline grid_group this_grid() { return grid_group(); }
inline coalesced_group coalesced_threads() { details::unsupported("coalesced_threads"); }
template <unsigned int N, class P> thread_block_tile<N, P> tiled_partition(const P&) { return thread_block_tile<N, P>(); }
template <class P> thread_group tiled_partition(const P&, unsigned int) { return thread_group(); }
template <class G> void sync(const G&) { details::unsupported("cooperative_groups::sync"); }
template <class G> unsigned long long thread_rank(const G&) { details::unsupported("cooperative_groups::thread_rank"); }
template <class G> unsigned long long group_size(const G&) { details::unsupported("cooperative_groups::group_size"); }

template <class T> struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { T operator()(const T& a, const T& b) const { return a < b ? a : b; } };
template <class T> struct greater { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };

template <class G, class T, class Op> auto reduce(const G&, T&& value, Op&& op) -> decltype(op(value, value)) {
  details::unsupported("cooperative_groups::reduce");
}
template <class G, class T, class Op> auto inclusive_scan(const G&, T&& value, Op&& op) -> decltype(op(value, value)) {
  details::unsupported("cooperative_groups::inclusive_scan");
}
template <class G, class T, class Op> auto exclusive_scan(const G&, T&& value, Op&& op) -> decltype(op(value, value)) {
  details::unsupported("cooperative_groups::exclusive_scan");
}

namespace experimental {}
}  // namespace cooperative_groups

// grid.sync() as tools/cuda/coop_groups.py rewrites it; the lowering splits a kernel there (its
// blocks then wait for each other: cudacpu::GridBarrier), so only code it did not lower reaches this.
inline void cudacpu_grid_sync() { cooperative_groups::details::unsupported("grid_group::sync"); }
