// CPU CUDA runtime: see ../cub.cuh.
#pragma once
#include "../cub.cuh"
