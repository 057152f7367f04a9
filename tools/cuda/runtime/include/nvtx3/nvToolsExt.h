// CPU CUDA runtime: see ../nvToolsExt.h.
#pragma once
#include "../nvToolsExt.h"
