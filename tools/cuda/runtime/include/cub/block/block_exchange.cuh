// CPU CUDA runtime: CUB block-wide exchanges of items between threads, as types only (see
// block_reduce.cuh). The translator rewrites each call of StripedToBlocked, BlockedToStriped,
// WarpStripedToBlocked, BlockedToWarpStriped, ScatterToBlocked and ScatterToStriped in device code
// (tools/cuda/cub_blocks.py); what stays is the class, its TempStorage and the constructor.
#pragma once
#include "block_reduce.cuh"

namespace cub {

// Each exchange from the input items to the output items, or in place
#define CUDA_CPU_CUB_EXCHANGE(NAME)                                                                     \
    template <class InputT, class OutputT>                                                              \
    __device__ void NAME(InputT (&input_items)[ITEMS_PER_THREAD], OutputT (&output_items)[ITEMS_PER_THREAD]); \
    __device__ void NAME(T (&items)[ITEMS_PER_THREAD]);
#define CUDA_CPU_CUB_SCATTER(NAME)                                                                      \
    template <class InputT, class OutputT, class OffsetT>                                               \
    __device__ void NAME(InputT (&input_items)[ITEMS_PER_THREAD], OutputT (&output_items)[ITEMS_PER_THREAD], \
                         OffsetT (&ranks)[ITEMS_PER_THREAD]);                                           \
    template <class OffsetT>                                                                            \
    __device__ void NAME(T (&items)[ITEMS_PER_THREAD], OffsetT (&ranks)[ITEMS_PER_THREAD]);

template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, bool WARP_TIME_SLICING = false, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockExchange {
  public:
    struct TempStorage {};
    __device__ BlockExchange() {}
    __device__ explicit BlockExchange(TempStorage&) {}
    CUDA_CPU_CUB_EXCHANGE(StripedToBlocked)
    CUDA_CPU_CUB_EXCHANGE(BlockedToStriped)
    CUDA_CPU_CUB_EXCHANGE(WarpStripedToBlocked)
    CUDA_CPU_CUB_EXCHANGE(BlockedToWarpStriped)
    CUDA_CPU_CUB_SCATTER(ScatterToBlocked)
    CUDA_CPU_CUB_SCATTER(ScatterToStriped)
};

#undef CUDA_CPU_CUB_EXCHANGE
#undef CUDA_CPU_CUB_SCATTER

}  // namespace cub
