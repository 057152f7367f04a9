// CPU CUDA runtime: the CUDA declaration qualifiers, defined away for a host compiler.
//
// Code that includes these headers is compiled by g++ (C++17, -fopenmp), never by nvcc:
// __CUDA_ARCH__ stays undefined, so host code takes its host paths; the port defines __CUDACC__
// for .cu sources, as nvcc does on the host side.
// CUDART_VERSION is defined (cuda_runtime_api.h) because host code tests it.
#pragma once

// libstdc++ spells __attribute__((__noinline__)) in <memory> (12 and later) and <string> (13 and
// later); include them before the macro below turns that spelling into a nested attribute.
#include <memory>
#include <string>

// The front end (tools/cuda/frontend.py) parses with its own CUDA shim and defines
// CUDA_CPU_PARSE_SHIM: the qualifiers must then keep their CUDA meaning.
#ifndef CUDA_CPU_PARSE_SHIM
#define __host__
#define __device__
#define __global__
#define __shared__
#define __constant__
#define __managed__
#define __grid_constant__
#define __device_builtin__
#define __cudart_builtin__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#endif  // CUDA_CPU_PARSE_SHIM
// Calling-convention and export markers of CUDA's headers.
#define CUDART_CB
#define CUDARTAPI
#define CUBLASAPI
#define CURANDAPI
#define CUDAAPI
// __restrict__ is a g++ keyword already.

// OpenMP pragmas of the headers: active under -fopenmp, absent (not "unknown") without it. A port's
// CUDA sources compile with -fopenmp but without _OPENMP where nvcc did not define it (their #ifdef _OPENMP
// branches are for builds without CUDA); CUDA_CPU_OPENMP says -fopenmp is on all the same.
#if defined(_OPENMP) || defined(CUDA_CPU_OPENMP)
#define CUDA_CPU_OMP(...) _Pragma(#__VA_ARGS__)
#else
#define CUDA_CPU_OMP(...)
#endif
