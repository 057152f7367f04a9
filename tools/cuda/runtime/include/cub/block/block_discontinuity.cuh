// CPU CUDA runtime: CUB block-wide discontinuity flags, as types only (see block_reduce.cuh). The
// translator rewrites each call of FlagHeads, FlagTails and FlagHeadsAndTails in device code
// (tools/cuda/cub_blocks.py); what stays is the class, its TempStorage and the constructor.
#pragma once
#include "block_reduce.cuh"

namespace cub {

template <class T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockDiscontinuity {
  public:
    struct TempStorage {};
    __device__ BlockDiscontinuity() {}
    __device__ explicit BlockDiscontinuity(TempStorage&) {}
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagHeads(FlagT (&head_flags)[N], T (&input)[N], FlagOp flag_op);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagHeads(FlagT (&head_flags)[N], T (&input)[N], FlagOp flag_op, T tile_predecessor_item);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagTails(FlagT (&tail_flags)[N], T (&input)[N], FlagOp flag_op);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagTails(FlagT (&tail_flags)[N], T (&input)[N], FlagOp flag_op, T tile_successor_item);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagHeadsAndTails(FlagT (&head_flags)[N], FlagT (&tail_flags)[N], T (&input)[N], FlagOp flag_op);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagHeadsAndTails(FlagT (&head_flags)[N], FlagT (&tail_flags)[N], T tile_successor_item,
                                      T (&input)[N], FlagOp flag_op);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagHeadsAndTails(FlagT (&head_flags)[N], T tile_predecessor_item, FlagT (&tail_flags)[N],
                                      T (&input)[N], FlagOp flag_op);
    template <int N, class FlagT, class FlagOp>
    __device__ void FlagHeadsAndTails(FlagT (&head_flags)[N], T tile_predecessor_item, FlagT (&tail_flags)[N],
                                      T tile_successor_item, T (&input)[N], FlagOp flag_op);
};

}  // namespace cub
