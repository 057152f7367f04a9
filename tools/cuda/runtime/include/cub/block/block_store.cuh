// CPU CUDA runtime: CUB block stores (see block_reduce.cuh, which declares every collective).
#pragma once
#include "block_reduce.cuh"
