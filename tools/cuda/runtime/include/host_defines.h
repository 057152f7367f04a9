// CPU CUDA runtime: host_defines.h has nothing of its own here; everything is in cuda_runtime.h.
#pragma once
#include "cuda_runtime.h"
