// parse shim: nvcuda::wmma (warp matrix multiply-accumulate), declared only.  The calls are
// plain device functions to the lowering (no barrier, no exchange): each lane runs them on its
// own whole copy of the tile, as the CPU runtime's mma.h defines them.
#pragma once
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision { struct tf32 {}; }
namespace detail {
template <class Use, int M, int N, int K> struct tile_shape;
template <int M, int N, int K> struct tile_shape<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct tile_shape<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct tile_shape<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };
template <class T> struct storage { typedef T type; };
template <> struct storage<precision::tf32> { typedef float type; };
}  // namespace detail
template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
 public:
  typedef typename detail::storage<T>::type element_type;
  typedef element_type storage_element_type;
  enum { num_elements = detail::tile_shape<Use, M, N, K>::rows * detail::tile_shape<Use, M, N, K>::cols };
  storage_element_type x[num_elements];
};
template <class Use, int M, int N, int K, class T, class Layout>
__device__ void fill_fragment(fragment<Use, M, N, K, T, Layout>&, const typename detail::storage<T>::type&);
template <class Use, int M, int N, int K, class T, class Layout>
__device__ void load_matrix_sync(fragment<Use, M, N, K, T, Layout>&, const typename detail::storage<T>::type*, unsigned);
template <int M, int N, int K, class T>
__device__ void load_matrix_sync(fragment<accumulator, M, N, K, T, void>&, const typename detail::storage<T>::type*,
                                 unsigned, layout_t);
template <int M, int N, int K, class T>
__device__ void store_matrix_sync(typename detail::storage<T>::type*, const fragment<accumulator, M, N, K, T, void>&,
                                  unsigned, layout_t);
template <int M, int N, int K, class TA, class LayoutA, class TB, class LayoutB, class TC, class TD>
__device__ void mma_sync(fragment<accumulator, M, N, K, TD, void>&, const fragment<matrix_a, M, N, K, TA, LayoutA>&,
                         const fragment<matrix_b, M, N, K, TB, LayoutB>&, const fragment<accumulator, M, N, K, TC, void>&,
                         bool = false);
__device__ float __float_to_tf32(float);
}  // namespace wmma
}  // namespace nvcuda
