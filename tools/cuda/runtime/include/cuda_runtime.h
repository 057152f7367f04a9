// CPU CUDA runtime: the header that stands in for CUDA's cuda_runtime.h when CUDA code (host
// code unchanged, kernels lowered to OpenMP loops) is compiled by g++ -fopenmp -std=c++17.
//
// It provides: the declaration qualifiers defined away (cuda_cpu/defines.h), the vector
// types and dim3 (vector_types.h), the runtime API with CPU semantics (cuda_runtime_api.h),
// the device math library and intrinsics (cuda_cpu/device_math.h), loads/stores, fences
// and clocks (cuda_cpu/device_functions.h) and the atomics (cuda_cpu/atomics.h).
//
// It does NOT declare threadIdx, blockIdx, blockDim, gridDim, __syncthreads or the warp
// intrinsics: the lowering emits those where a kernel needs them.  warpSize is a
// constexpr int 32 unless CUDA_CPU_NO_WARPSIZE is defined before inclusion.
#pragma once
#define __CUDA_RUNTIME_H__  // CUDA's guard name: some code tests it
#include "cuda_cpu/defines.h"
#include "vector_types.h"
#include "cuda_runtime_api.h"
#include "cuda_cpu/device_math.h"
#include "cuda_cpu/device_functions.h"
#include "cuda_cpu/grid_barrier.h"
#include "cuda_cpu/atomics.h"

// What nvcc's own cuda_runtime.h brings in (nvcc -M of an empty file), which CUDA code relies
// on without including it.
#include <alloca.h>
#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#ifndef CUDA_CPU_NO_WARPSIZE
constexpr int warpSize = 32;
#endif
