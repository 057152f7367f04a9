// CPU CUDA runtime: CUB warp-wide reductions (see ../block/block_reduce.cuh, which declares every collective).
#pragma once
#include "../block/block_reduce.cuh"
