// CPU CUDA runtime: make_* functions live with the types.
#pragma once
#include "vector_types.h"
