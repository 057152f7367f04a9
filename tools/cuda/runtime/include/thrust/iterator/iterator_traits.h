// CPU CUDA runtime, Thrust subset: see detail/core.h.
#pragma once
#include "../detail/core.h"
