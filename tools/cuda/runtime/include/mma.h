// CPU CUDA runtime: nvcuda::wmma, the warp matrix multiply-accumulate API of <mma.h>.
//
// In CUDA a fragment is spread over the 32 lanes of a warp in an unspecified layout, and
// load_matrix_sync / mma_sync / store_matrix_sync are warp-collective.  The lowering runs a
// warp's lanes one after another (tools/cuda), so here every lane holds the WHOLE tile
// (num_elements = rows * cols of its tile, x[] in row-major order of the tile) and each call
// acts on the whole tile: every lane computes the same result, so whichever lanes store it,
// memory ends up as on the GPU, and element-wise loops over frag.num_elements stay correct.
// A fragment is a plain aggregate (copyable, default-constructible): the lowering may keep
// one per thread across a barrier.
//
// Arithmetic: half, bfloat16 and tf32 products are exact in float and are accumulated in
// float, in order of k, onto C (a half accumulator is rounded to half once per mma_sync);
// int8 accumulates in 32-bit integers (wrapping, or clamped with satf); double in double.
// tf32 inputs are used with their 10-bit mantissa (low bits dropped, as the tensor cores
// ignore them); __float_to_tf32 rounds to nearest, ties away from zero.
// Sub-byte types (precision::u4/s4/b1, bmma_sync) are not provided.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include "cuda_fp16.h"
#include "cuda_bf16.h"

namespace nvcuda {
namespace wmma {

// What a fragment is used as, and how a matrix_a / matrix_b tile lies in memory.
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
// How an accumulator tile lies in memory (given at each load/store).
enum layout_t { mem_row_major, mem_col_major };

namespace precision {
struct tf32 {};  // stored as float, multiplied with a 10-bit mantissa
}  // namespace precision

namespace detail {

// Rows and columns of the tile a fragment holds: A is M x K, B is K x N, C/D are M x N.
template <class Use, int M, int N, int K> struct tile_shape;
template <int M, int N, int K> struct tile_shape<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct tile_shape<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct tile_shape<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };

template <class T> struct storage { using type = T; };
template <> struct storage<precision::tf32> { using type = float; };

inline float tf32_bits_dropped(float value) {  // what a tensor core multiplies: the top 19 bits
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    bits &= 0xffffe000u;
    std::memcpy(&value, &bits, sizeof bits);
    return value;
}

// An input element as the multiplier sees it, in the accumulator's arithmetic type.
template <class T> struct input;
template <> struct input<__half> { static float value(__half v) { return __half2float(v); } };
template <> struct input<__nv_bfloat16> { static float value(__nv_bfloat16 v) { return __bfloat162float(v); } };
template <> struct input<precision::tf32> { static float value(float v) { return tf32_bits_dropped(v); } };
template <> struct input<signed char> { static int value(signed char v) { return v; } };
template <> struct input<unsigned char> { static int value(unsigned char v) { return v; } };
template <> struct input<double> { static double value(double v) { return v; } };

// An accumulator element: its arithmetic type, conversions, and satf (saturate to finite).
template <class T> struct accumulate;
template <> struct accumulate<float> {
    using type = float;
    static float load(float v) { return v; }
    static float store(float v, bool satf) {
        if (!satf) return v;
        if (v != v) return 0.0f;
        const float most = std::numeric_limits<float>::max();
        return v > most ? most : (v < -most ? -most : v);
    }
};
template <> struct accumulate<__half> {
    using type = float;
    static float load(__half v) { return __half2float(v); }
    static __half store(float v, bool satf) {
        __half rounded = __float2half(v);
        if (!satf) return rounded;
        if (__hisnan(rounded)) return __float2half(0.0f);
        const int infinity = __hisinf(rounded);
        return infinity ? __float2half(infinity > 0 ? 65504.0f : -65504.0f) : rounded;
    }
};
template <> struct accumulate<int> {
    using type = std::int64_t;  // wide enough for one tile's sum of int8 products
    static std::int64_t load(int v) { return v; }
    static int store(std::int64_t v, bool satf) {
        if (satf) {
            const std::int64_t low = std::numeric_limits<int>::min(), high = std::numeric_limits<int>::max();
            return static_cast<int>(v < low ? low : (v > high ? high : v));
        }
        return static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));  // two's complement wrap
    }
};
template <> struct accumulate<double> {
    using type = double;
    static double load(double v) { return v; }
    static double store(double v, bool) { return v; }
};

}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
 public:
    using element_type = typename detail::storage<T>::type;
    using storage_element_type = element_type;
    enum { num_elements = detail::tile_shape<Use, M, N, K>::rows * detail::tile_shape<Use, M, N, K>::cols };
    storage_element_type x[num_elements];
};

template <class Use, int M, int N, int K, class T, class Layout>
inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& frag,
                          const typename detail::storage<T>::type& value) {
    for (int i = 0; i < frag.num_elements; ++i) frag.x[i] = value;
}

namespace detail {
template <class Frag>
inline void load_tile(Frag& frag, const typename Frag::storage_element_type* source, unsigned ldm,
                      int rows, int cols, bool row_major_memory) {
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            frag.x[r * cols + c] = row_major_memory ? source[static_cast<std::size_t>(r) * ldm + static_cast<std::size_t>(c)]
                                                    : source[static_cast<std::size_t>(c) * ldm + static_cast<std::size_t>(r)];
}
}  // namespace detail

// matrix_a / matrix_b: the layout is the fragment's; ldm counts elements between rows
// (row_major) or columns (col_major).
template <class Use, int M, int N, int K, class T, class Layout>
inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& frag,
                             const typename detail::storage<T>::type* source, unsigned ldm) {
    static_assert(std::is_same<Layout, row_major>::value || std::is_same<Layout, col_major>::value,
                  "load_matrix_sync without a layout_t needs a row_major or col_major fragment");
    using shape = detail::tile_shape<Use, M, N, K>;
    detail::load_tile(frag, source, ldm, shape::rows, shape::cols, std::is_same<Layout, row_major>::value);
}

// accumulator: the layout is given at the call.
template <int M, int N, int K, class T>
inline void load_matrix_sync(fragment<accumulator, M, N, K, T, void>& frag,
                             const typename detail::storage<T>::type* source, unsigned ldm, layout_t layout) {
    detail::load_tile(frag, source, ldm, M, N, layout == mem_row_major);
}

template <int M, int N, int K, class T>
inline void store_matrix_sync(typename detail::storage<T>::type* destination,
                              const fragment<accumulator, M, N, K, T, void>& frag, unsigned ldm, layout_t layout) {
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
            const std::size_t at = layout == mem_row_major ? static_cast<std::size_t>(r) * ldm + static_cast<std::size_t>(c)
                                                           : static_cast<std::size_t>(c) * ldm + static_cast<std::size_t>(r);
            destination[at] = frag.x[r * N + c];
        }
}

// D = A * B + C.  D may be C itself: each element of D reads only its own element of C.
template <int M, int N, int K, class TA, class LayoutA, class TB, class LayoutB, class TC, class TD>
inline void mma_sync(fragment<accumulator, M, N, K, TD, void>& d, const fragment<matrix_a, M, N, K, TA, LayoutA>& a,
                     const fragment<matrix_b, M, N, K, TB, LayoutB>& b, const fragment<accumulator, M, N, K, TC, void>& c,
                     bool satf = false) {
    static_assert(std::is_same<TA, TB>::value, "mma_sync: matrix_a and matrix_b of different element types");
    static_assert(std::is_same<TC, TD>::value, "mma_sync: C and D of different element types");
    using sum_type = typename detail::accumulate<TD>::type;
    sum_type a_values[static_cast<std::size_t>(M * K)], b_values[static_cast<std::size_t>(K * N)];  // converted once
    for (int i = 0; i < M * K; ++i) a_values[i] = detail::input<TA>::value(a.x[i]);
    for (int i = 0; i < K * N; ++i) b_values[i] = detail::input<TB>::value(b.x[i]);
    for (int r = 0; r < M; ++r)
        for (int col = 0; col < N; ++col) {
            sum_type sum = detail::accumulate<TC>::load(c.x[r * N + col]);
            for (int k = 0; k < K; ++k) sum += a_values[r * K + k] * b_values[k * N + col];
            d.x[r * N + col] = detail::accumulate<TD>::store(sum, satf);
        }
}

// float -> tf32 (kept in a float): the mantissa rounded to 10 bits, ties away from zero.
inline float __float_to_tf32(float value) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    if ((bits & 0x7f800000u) != 0x7f800000u) {  // not inf or NaN (those stay as they are)
        bits += 0x1000u;
        bits &= 0xffffe000u;
    }
    std::memcpy(&value, &bits, sizeof bits);
    return value;
}

}  // namespace wmma
}  // namespace nvcuda
