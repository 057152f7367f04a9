// CPU CUDA runtime: CUB's block- and warp-wide collectives, as types only.
//
// The translator rewrites each call of BlockReduce, BlockScan, BlockLoad, BlockStore, WarpReduce and WarpScan (and
// of the collectives the other headers here declare) in device code
// before the lowering (tools/cuda/cub_blocks.py): what stays of them is the class, its
// TempStorage (empty: the rewritten code keeps its own shared slots) and the constructor.
// The member functions are declared so that code reads as CUB's; a call that was not
// rewritten does not link.
#pragma once
#include <type_traits>

#include "../../cuda_runtime.h"
#include "../version.cuh"

namespace cub {

// Operands of two types (an accumulator and an element: a count of bool flags into an
// int64) combine as CUB's operators do: in the type of their sum, or their common type.
struct Sum {
    template <class T>
    __host__ __device__ T operator()(const T& a, const T& b) const { return a + b; }
    template <class T, class U>
    __host__ __device__ auto operator()(const T& a, const U& b) const -> decltype(a + b) { return a + b; }
};
struct Max {
    template <class T>
    __host__ __device__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
    template <class T, class U>
    __host__ __device__ std::common_type_t<T, U> operator()(const T& a, const U& b) const {
        return a < b ? std::common_type_t<T, U>(b) : std::common_type_t<T, U>(a);
    }
};
struct Min {
    template <class T>
    __host__ __device__ T operator()(const T& a, const T& b) const { return b < a ? b : a; }
    template <class T, class U>
    __host__ __device__ std::common_type_t<T, U> operator()(const T& a, const U& b) const {
        return b < a ? std::common_type_t<T, U>(b) : std::common_type_t<T, U>(a);
    }
};
struct Equality {
    template <class T, class U>
    __host__ __device__ bool operator()(const T& a, const U& b) const { return a == b; }
};
struct Inequality {
    template <class T, class U>
    __host__ __device__ bool operator()(const T& a, const U& b) const { return a != b; }
};
struct Difference {
    template <class T, class U>
    __host__ __device__ auto operator()(const T& a, const U& b) const -> decltype(a - b) { return a - b; }
};

enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };

template <class T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
  public:
    struct TempStorage {};
    __device__ BlockReduce() {}
    __device__ explicit BlockReduce(TempStorage&) {}
    __device__ T Sum(T input);
    __device__ T Sum(T input, int num_valid);
    template <class Op>
    __device__ T Reduce(T input, Op op);
    template <class Op>
    __device__ T Reduce(T input, Op op, int num_valid);
    template <int N>
    __device__ T Sum(T (&inputs)[N]);
    template <int N, class Op>
    __device__ T Reduce(T (&inputs)[N], Op op);
};

template <class T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan {
  public:
    struct TempStorage {};
    __device__ BlockScan() {}
    __device__ explicit BlockScan(TempStorage&) {}
    __device__ void ExclusiveSum(T input, T& output);
    __device__ void ExclusiveSum(T input, T& output, T& block_aggregate);
    __device__ void InclusiveSum(T input, T& output);
    __device__ void InclusiveSum(T input, T& output, T& block_aggregate);
    template <class Op>
    __device__ void ExclusiveScan(T input, T& output, T initial_value, Op op);
    template <class Op>
    __device__ void ExclusiveScan(T input, T& output, T initial_value, Op op, T& block_aggregate);
    template <class Op>
    __device__ void ExclusiveScan(T input, T& output, Op op);
    template <class Op>
    __device__ void InclusiveScan(T input, T& output, Op op);
    template <class Op>
    __device__ void InclusiveScan(T input, T& output, Op op, T& block_aggregate);
    // each thread's items
    template <int N>
    __device__ void ExclusiveSum(T (&input)[N], T (&output)[N]);
    template <int N>
    __device__ void InclusiveSum(T (&input)[N], T (&output)[N]);
    template <int N, class Op>
    __device__ void ExclusiveScan(T (&input)[N], T (&output)[N], T initial_value, Op op);
    template <int N, class Op>
    __device__ void InclusiveScan(T (&input)[N], T (&output)[N], Op op);
};

template <class T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpReduce {
  public:
    struct TempStorage {};
    __device__ explicit WarpReduce(TempStorage&) {}
    __device__ T Sum(T input);
    template <class Op>
    __device__ T Reduce(T input, Op op);
};

enum BlockLoadAlgorithm { BLOCK_LOAD_DIRECT, BLOCK_LOAD_STRIPED, BLOCK_LOAD_VECTORIZE, BLOCK_LOAD_TRANSPOSE,
                          BLOCK_LOAD_WARP_TRANSPOSE, BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED };
enum BlockStoreAlgorithm { BLOCK_STORE_DIRECT, BLOCK_STORE_STRIPED, BLOCK_STORE_VECTORIZE, BLOCK_STORE_TRANSPOSE,
                           BLOCK_STORE_WARP_TRANSPOSE, BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED };

template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockLoadAlgorithm ALGORITHM = BLOCK_LOAD_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockLoad {
  public:
    struct TempStorage {};
    __device__ BlockLoad() {}
    __device__ explicit BlockLoad(TempStorage&) {}
    template <class It>
    __device__ void Load(It in, T (&items)[ITEMS_PER_THREAD]);
    template <class It>
    __device__ void Load(It in, T (&items)[ITEMS_PER_THREAD], int valid_items);
    template <class It, class D>
    __device__ void Load(It in, T (&items)[ITEMS_PER_THREAD], int valid_items, D oob_default);
};

template <class T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockStoreAlgorithm ALGORITHM = BLOCK_STORE_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockStore {
  public:
    struct TempStorage {};
    __device__ BlockStore() {}
    __device__ explicit BlockStore(TempStorage&) {}
    template <class It>
    __device__ void Store(It out, T (&items)[ITEMS_PER_THREAD]);
    template <class It>
    __device__ void Store(It out, T (&items)[ITEMS_PER_THREAD], int valid_items);
};

template <class T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpScan {
  public:
    struct TempStorage {};
    __device__ explicit WarpScan(TempStorage&) {}
    __device__ void ExclusiveSum(T input, T& output);
    __device__ void ExclusiveSum(T input, T& output, T& warp_aggregate);
    __device__ void InclusiveSum(T input, T& output);
    __device__ void InclusiveSum(T input, T& output, T& warp_aggregate);
    template <class Op>
    __device__ void ExclusiveScan(T input, T& output, T initial_value, Op op);
    template <class Op>
    __device__ void ExclusiveScan(T input, T& output, T initial_value, Op op, T& warp_aggregate);
    template <class Op>
    __device__ void ExclusiveScan(T input, T& output, Op op);
    template <class Op>
    __device__ void InclusiveScan(T input, T& output, Op op);
    template <class Op>
    __device__ void InclusiveScan(T input, T& output, Op op, T& warp_aggregate);
};

}  // namespace cub
