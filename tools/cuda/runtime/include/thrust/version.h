// CPU CUDA runtime, Thrust subset: thrust/version.h.  Every Thrust header of the CUDA toolkit
// defines THRUST_VERSION (through thrust/detail/config.h), and code selects APIs by it
// (`#if THRUST_VERSION >= 101700` for par_nosync).  These are the numbers of the Thrust that
// ships with CUDA 12.0, the toolkit CUDART_VERSION (12000) names; the APIs they select exist here.
#pragma once

#define THRUST_VERSION 200000
#define THRUST_MAJOR_VERSION (THRUST_VERSION / 100000)
#define THRUST_MINOR_VERSION (THRUST_VERSION / 100 % 1000)
#define THRUST_SUBMINOR_VERSION (THRUST_VERSION % 100)
#define THRUST_PATCH_NUMBER 0
