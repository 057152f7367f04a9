// CPU CUDA runtime: cooperative groups (cg::scan is declared in cooperative_groups.h)
#pragma once
#include "../cooperative_groups.h"
