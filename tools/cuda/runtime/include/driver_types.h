// CPU CUDA runtime: driver_types.h has nothing of its own here; everything is in cuda_runtime.h.
#pragma once
#include "cuda_runtime.h"
