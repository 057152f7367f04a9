// CPU CUDA runtime: CUB block-wide radix sorts, as types only (see block_reduce.cuh).
//
// The translator rewrites each call of Sort, SortDescending, SortBlockedToStriped and
// SortDescendingBlockedToStriped in device code (tools/cuda/cub_blocks.py); what stays is the
// class, its TempStorage and the constructor.
#pragma once
#include "block_reduce.cuh"

namespace cub {

struct NullType {};

// Each method with keys alone or keys and values, the bits [begin_bit, end_bit) or all of them
// (overloads rather than default arguments, so that a call's arguments are those written).
#define CUDA_CPU_CUB_RADIX_SORT(NAME)                                                                   \
    __device__ void NAME(KeyT (&keys)[ITEMS_PER_THREAD]);                                               \
    __device__ void NAME(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit);                                \
    __device__ void NAME(KeyT (&keys)[ITEMS_PER_THREAD], int begin_bit, int end_bit);                   \
    __device__ void NAME(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD]);           \
    __device__ void NAME(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD], int begin_bit); \
    __device__ void NAME(KeyT (&keys)[ITEMS_PER_THREAD], ValueT (&values)[ITEMS_PER_THREAD], int begin_bit, int end_bit);

template <class KeyT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, class ValueT = NullType, int RADIX_BITS = 4,
          bool MEMOIZE_OUTER_SCAN = true, BlockScanAlgorithm INNER_SCAN_ALGORITHM = BLOCK_SCAN_WARP_SCANS,
          cudaSharedMemConfig SMEM_CONFIG = cudaSharedMemBankSizeFourByte, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1,
          int LEGACY_PTX_ARCH = 0>
class BlockRadixSort {
  public:
    struct TempStorage {};
    __device__ BlockRadixSort() {}
    __device__ explicit BlockRadixSort(TempStorage&) {}
    CUDA_CPU_CUB_RADIX_SORT(Sort)
    CUDA_CPU_CUB_RADIX_SORT(SortDescending)
    CUDA_CPU_CUB_RADIX_SORT(SortBlockedToStriped)
    CUDA_CPU_CUB_RADIX_SORT(SortDescendingBlockedToStriped)
};

#undef CUDA_CPU_CUB_RADIX_SORT

}  // namespace cub
