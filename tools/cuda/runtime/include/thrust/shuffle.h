// CPU CUDA runtime, Thrust subset: see detail/algorithms.h (shuffle, shuffle_copy).
#pragma once
#include "detail/algorithms.h"
