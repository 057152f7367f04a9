// CPU CUDA runtime, Thrust subset: see detail/zip.h.
#pragma once
#include "detail/core.h"
