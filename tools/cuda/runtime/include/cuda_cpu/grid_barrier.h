// CPU CUDA runtime: cooperative groups' grid.sync() in lowered kernels.
//
// A kernel that synchronizes its grid is split there, as at __syncthreads(), and its blocks wait
// for each other between the parts. A cooperative launch is sized to the blocks a GPU runs
// together (the occupancy calls and the multiprocessor count say how many), so each block runs
// on a thread of its own, and waiting threads yield their core.
#pragma once
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sched.h>

#include "vector_types.h"

namespace cudacpu {

class GridBarrier {
 public:
  static constexpr unsigned long long kMostBlocks = 4096;  // threads this CPU is asked to interleave

  explicit GridBarrier(dim3 grid) : blocks_(1ull * grid.x * grid.y * grid.z) {
    if (blocks_ > kMostBlocks) {
      std::fprintf(stderr, "cudacpu: a kernel that synchronizes its grid was launched with %llu blocks; "
                   "at most %llu run together here (size a cooperative launch with the occupancy calls)\n",
                   blocks_, kMostBlocks);
      std::abort();
    }
  }

  int blocks() const { return static_cast<int>(blocks_); }

  // Every block's thread checks that OpenMP gave each block its own thread (a smaller team would wait forever).
  void require_team(int threads) const {
    if (static_cast<unsigned long long>(threads) != blocks_) {
      std::fprintf(stderr, "cudacpu: a kernel that synchronizes its grid needs its %llu blocks on as many threads; "
                   "OpenMP gave %d (OMP_THREAD_LIMIT, or a launch inside a parallel region)\n", blocks_, threads);
      std::abort();
    }
  }

  // The last block to arrive opens the barrier; what every block wrote before it is visible after it.
  void wait() {
    const unsigned generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == blocks_) {
      arrived_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      return;
    }
    while (generation_.load(std::memory_order_acquire) == generation) sched_yield();
  }

 private:
  unsigned long long blocks_;
  std::atomic<unsigned long long> arrived_{0};
  std::atomic<unsigned> generation_{0};
};

}  // namespace cudacpu
