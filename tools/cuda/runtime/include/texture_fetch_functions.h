// CPU CUDA runtime: CUDA texture objects and arrays are in cuda_runtime.h (cuda_cpu/textures.h).
#pragma once
#include "cuda_runtime.h"
