// CPU CUDA runtime: CUB warp-wide scans (see ../block/block_reduce.cuh, which declares every collective).
#pragma once
#include "../block/block_reduce.cuh"
