// CPU CUDA runtime, Thrust subset: see detail/core.h.  The algorithms come with it, as Thrust's
// own vector and pointer headers bring them in through its CUDA backend: programs call
// thrust::reduce or thrust::sort having included only this header.
#pragma once
#include "detail/algorithms.h"
