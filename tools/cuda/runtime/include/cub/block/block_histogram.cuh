// CPU CUDA runtime: CUB block-wide histograms, as types only (see block_reduce.cuh). The translator
// rewrites each call of InitHistogram, Histo and Composite in device code (tools/cuda/cub_blocks.py);
// what stays is the class, its TempStorage and the constructor.
#pragma once
#include "block_reduce.cuh"

namespace cub {

enum BlockHistogramAlgorithm { BLOCK_HISTO_SORT, BLOCK_HISTO_ATOMIC };

template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, int BINS,
          BlockHistogramAlgorithm ALGORITHM = BLOCK_HISTO_SORT, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1,
          int LEGACY_PTX_ARCH = 0>
class BlockHistogram {
  public:
    struct TempStorage {};
    __device__ BlockHistogram() {}
    __device__ explicit BlockHistogram(TempStorage&) {}
    template <class CounterT>
    __device__ void InitHistogram(CounterT histogram[BINS]);
    template <class CounterT>
    __device__ void Histo(T (&items)[ITEMS_PER_THREAD], CounterT histogram[BINS]);
    template <class CounterT>
    __device__ void Composite(T (&items)[ITEMS_PER_THREAD], CounterT histogram[BINS]);
};

}  // namespace cub
