// CPU CUDA runtime, CUB subset: cub/version.cuh.  Every CUB header of the CUDA toolkit defines
// CUB_VERSION; these are the numbers of the CUB that ships with CUDA 12.0 (CUDART_VERSION 12000),
// the same release as THRUST_VERSION.
#pragma once

#define CUB_VERSION 200000
#define CUB_MAJOR_VERSION (CUB_VERSION / 100000)
#define CUB_MINOR_VERSION (CUB_VERSION / 100 % 1000)
#define CUB_SUBMINOR_VERSION (CUB_VERSION % 100)
#define CUB_PATCH_NUMBER 0
