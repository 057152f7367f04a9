// CPU CUDA runtime, Thrust subset: see detail/algorithms.h.
#pragma once
#include "detail/algorithms.h"
