// CPU CUDA runtime: CUB block-wide adjacent differences, as types only (see block_reduce.cuh). The
// translator rewrites each call of SubtractLeft, SubtractLeftPartialTile, SubtractRight and
// SubtractRightPartialTile in device code (tools/cuda/cub_blocks.py); what stays is the class, its
// TempStorage and the constructor.
#pragma once
#include "block_reduce.cuh"

namespace cub {

template <class T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockAdjacentDifference {
  public:
    struct TempStorage {};
    __device__ BlockAdjacentDifference() {}
    __device__ explicit BlockAdjacentDifference(TempStorage&) {}
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractLeft(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op);
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractLeft(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op,
                                 T tile_predecessor_item);
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractLeftPartialTile(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op,
                                            int valid_items);
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractLeftPartialTile(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op,
                                            int valid_items, T tile_predecessor_item);
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractRight(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op);
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractRight(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op,
                                  T tile_successor_item);
    template <int N, class OutputT, class DifferenceOpT>
    __device__ void SubtractRightPartialTile(T (&input)[N], OutputT (&output)[N], DifferenceOpT difference_op,
                                             int valid_items);
};

}  // namespace cub
