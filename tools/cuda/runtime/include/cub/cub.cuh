// CPU CUDA runtime: CUB's device-wide algorithms (host API) on the CPU.
//
// Provided: DeviceReduce (Sum, Min, Max, Reduce, ArgMin, ArgMax), DeviceScan (Inclusive/
// ExclusiveSum, Inclusive/ExclusiveScan), DeviceRadixSort (SortKeys, SortPairs and their
// Descending forms, with bit ranges), DeviceSelect (If, Flagged), DeviceHistogram
// (HistogramEven).  As in CUB, a call with d_temp_storage == nullptr only sets
// temp_storage_bytes; the work is done by the second call.  Block- and warp-level CUB
// (BlockReduce, BlockScan, WarpReduce) is rewritten by the translator: block/block_reduce.cuh.
// Input iterators: CountingInputIterator, ConstantInputIterator, TransformInputIterator,
// ArgIndexInputIterator, CacheModifiedInputIterator (cub/iterator/*.cuh include this file).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <numeric>
#include <type_traits>
#include <vector>

#include "../cuda_runtime.h"
#include "../thrust/detail/algorithms.h"
#include "block/block_reduce.cuh"
#include "block/block_radix_sort.cuh"
#include "block/block_exchange.cuh"
#include "block/block_discontinuity.cuh"
#include "block/block_adjacent_difference.cuh"
#include "block/block_histogram.cuh"

// Entry points stay out of line: inlined, g++ would see the size-query path (no output
// written) and warn that the caller's outputs "may be used uninitialized".
#define CUDA_CPU_CUB_ENTRY [[gnu::noinline]]

namespace cub {

template <class Key, class Value>
struct KeyValuePair {
    Key key;
    Value value;
};

// ---------------------------------------------------------------- input iterators
// CUB's fancy input iterators, as random-access iterators over host memory: what the
// device-wide algorithms above (and any loop) read through them.  Their value_type is the
// one CUB gives them (TransformInputIterator: its first template argument).

// The moves and comparisons every input iterator below shares: Derived keeps a position
// (position(): what differences and comparisons read) and moves it (advance(n)).
template <class Derived, class DifferenceT>
class InputIteratorMoves {
  public:
    Derived& operator++() { self().advance(1); return self(); }
    Derived operator++(int) { Derived old = self(); self().advance(1); return old; }
    template <class Distance>
    Derived& operator+=(Distance n) { self().advance(static_cast<DifferenceT>(n)); return self(); }
    template <class Distance>
    Derived operator+(Distance n) const { Derived out = self(); out.advance(static_cast<DifferenceT>(n)); return out; }
    template <class Distance>
    Derived operator-(Distance n) const { Derived out = self(); out.advance(-static_cast<DifferenceT>(n)); return out; }
    DifferenceT operator-(const Derived& other) const { return static_cast<DifferenceT>(self().position() - other.position()); }
    bool operator==(const Derived& other) const { return self().position() == other.position(); }
    bool operator!=(const Derived& other) const { return !(self() == other); }

  private:
    Derived& self() { return static_cast<Derived&>(*this); }
    const Derived& self() const { return static_cast<const Derived&>(*this); }
};

template <class ValueType, class OffsetT = std::ptrdiff_t>
class CountingInputIterator : public InputIteratorMoves<CountingInputIterator<ValueType, OffsetT>, OffsetT> {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = ValueType;
    using difference_type = OffsetT;
    using pointer = const ValueType*;
    using reference = ValueType;

    CountingInputIterator() : value_(ValueType()) {}
    CountingInputIterator(const ValueType& value) : value_(value) {}
    reference operator*() const { return value_; }
    template <class Distance>
    reference operator[](Distance n) const { return static_cast<ValueType>(value_ + n); }

    void advance(difference_type n) { value_ = static_cast<ValueType>(value_ + n); }
    auto position() const { return value_; }

  private:
    ValueType value_;
};

template <class ValueType, class OffsetT = std::ptrdiff_t>
class ConstantInputIterator : public InputIteratorMoves<ConstantInputIterator<ValueType, OffsetT>, OffsetT> {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = ValueType;
    using difference_type = OffsetT;
    using pointer = const ValueType*;
    using reference = ValueType;

    ConstantInputIterator() : value_(ValueType()), offset_(0) {}
    ConstantInputIterator(ValueType value, OffsetT offset = 0) : value_(value), offset_(offset) {}
    reference operator*() const { return value_; }
    template <class Distance>
    reference operator[](Distance) const { return value_; }

    void advance(difference_type n) { offset_ += n; }
    auto position() const { return offset_; }

  private:
    ValueType value_;
    OffsetT offset_;
};

template <class ValueType, class ConversionOp, class InputIteratorT, class OffsetT = std::ptrdiff_t>
class TransformInputIterator : public InputIteratorMoves<TransformInputIterator<ValueType, ConversionOp, InputIteratorT, OffsetT>, OffsetT> {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = ValueType;
    using difference_type = OffsetT;
    using pointer = const ValueType*;
    using reference = ValueType;

    TransformInputIterator(InputIteratorT input, ConversionOp op) : input_(input), op_(op) {}
    reference operator*() const { return static_cast<ValueType>(op_(*input_)); }
    template <class Distance>
    reference operator[](Distance n) const { return static_cast<ValueType>(op_(input_[n])); }

    void advance(difference_type n) { input_ += n; }
    auto position() const { return input_; }

  private:
    InputIteratorT input_;
    ConversionOp op_;
};

// Each element paired with its position: {key: offset, value: element}.
template <class InputIteratorT, class OffsetT = std::ptrdiff_t,
          class OutputValueT = typename std::iterator_traits<InputIteratorT>::value_type>
class ArgIndexInputIterator : public InputIteratorMoves<ArgIndexInputIterator<InputIteratorT, OffsetT, OutputValueT>, OffsetT> {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = KeyValuePair<OffsetT, OutputValueT>;
    using difference_type = OffsetT;
    using pointer = const value_type*;
    using reference = value_type;

    ArgIndexInputIterator(InputIteratorT input, difference_type offset = 0) : input_(input), offset_(offset) {}
    reference operator*() const { return value_type{offset_, static_cast<OutputValueT>(input_[offset_])}; }
    template <class Distance>
    reference operator[](Distance n) const { return value_type{static_cast<OffsetT>(offset_ + n), static_cast<OutputValueT>(input_[offset_ + n])}; }
    bool operator==(const ArgIndexInputIterator& other) const { return offset_ == other.offset_ && input_ == other.input_; }
    // Makes the current position offset 0, as CUB's normalize().
    void normalize() { input_ += offset_; offset_ = 0; }

    void advance(difference_type n) { offset_ += n; }
    auto position() const { return offset_; }

  private:
    InputIteratorT input_;
    difference_type offset_;
};

// The cache hints of a load mean nothing on the CPU: the iterator reads the pointer.
enum CacheLoadModifier { LOAD_DEFAULT, LOAD_CA, LOAD_CG, LOAD_CS, LOAD_CV, LOAD_LDG, LOAD_VOLATILE };

template <CacheLoadModifier MODIFIER, class ValueType, class OffsetT = std::ptrdiff_t>
class CacheModifiedInputIterator : public InputIteratorMoves<CacheModifiedInputIterator<MODIFIER, ValueType, OffsetT>, OffsetT> {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = ValueType;
    using difference_type = OffsetT;
    using pointer = const ValueType*;
    using reference = ValueType;

    template <class Q>
    CacheModifiedInputIterator(Q* ptr) : ptr_(const_cast<ValueType*>(reinterpret_cast<const ValueType*>(ptr))) {}
    reference operator*() const { return *ptr_; }
    template <class Distance>
    reference operator[](Distance n) const { return ptr_[n]; }

    void advance(difference_type n) { ptr_ += n; }
    auto position() const { return ptr_; }

  private:
    ValueType* ptr_;
};


namespace detail {

// The size query of CUB's two-phase calls: true when this call only reports the size.
inline bool size_query(void* temp_storage, size_t& temp_storage_bytes) {
    if (temp_storage != nullptr) return false;
    temp_storage_bytes = 1;
    return true;
}

template <class It>
using value_of = typename std::iterator_traits<It>::value_type;

// The type CUB reduces in: the output's value type, or the input's where the output has
// none (an output iterator whose value_type is void).
template <class In, class Out>
using accumulator_of = std::conditional_t<std::is_void<value_of<Out>>::value, value_of<In>, value_of<Out>>;

// Radix-sort order as CUB defines it: the key's bits, "twiddled" so that unsigned
// comparison orders signed integers and floats numerically (-0 before +0, NaNs by sign).
template <class Key>
inline std::uint64_t radix_bits(Key key) {
    static_assert(sizeof(Key) <= 8, "radix sort keys are at most 64 bits");
    std::uint64_t bits = 0;
    std::memcpy(&bits, &key, sizeof(Key));
    const std::uint64_t sign = std::uint64_t(1) << (8 * sizeof(Key) - 1);
    if constexpr (std::is_floating_point<Key>::value) {
        const std::uint64_t all = sizeof(Key) == 8 ? ~std::uint64_t(0) : (std::uint64_t(1) << (8 * sizeof(Key))) - 1;
        bits = (bits & sign) ? (~bits & all) : (bits | sign);
    } else if constexpr (std::is_signed<Key>::value) {
        bits ^= sign;
    }
    return bits;
}

template <class Key>
inline std::uint64_t radix_digit(Key key, int begin_bit, int end_bit) {
    const std::uint64_t bits = radix_bits(key) >> begin_bit;
    const int width = end_bit - begin_bit;
    return width >= 64 ? bits : bits & ((std::uint64_t(1) << width) - 1);
}

// Stable sort of n keys (and values, when given) by the bits [begin_bit, end_bit).
template <class Key, class Value>
inline void radix_sort(const Key* keys_in, Key* keys_out, const Value* values_in, Value* values_out, int n, int begin_bit,
                       int end_bit, bool descending) {
    std::vector<int> order(static_cast<size_t>(n > 0 ? n : 0));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        std::uint64_t da = radix_digit(keys_in[a], begin_bit, end_bit), db = radix_digit(keys_in[b], begin_bit, end_bit);
        return descending ? db < da : da < db;
    });
    std::vector<Key> keys(order.size());
    for (size_t i = 0; i < order.size(); ++i) keys[i] = keys_in[order[i]];
    if (values_in != nullptr) {
        std::vector<Value> values(order.size());
        for (size_t i = 0; i < order.size(); ++i) values[i] = values_in[order[i]];
        std::copy(values.begin(), values.end(), values_out);
    }
    std::copy(keys.begin(), keys.end(), keys_out);
}

}  // namespace detail

struct DeviceReduce {
    template <class In, class Out, class Op, class T>
    CUDA_CPU_CUB_ENTRY static cudaError_t Reduce(void* temp, size_t& bytes, In in, Out out, int n, Op op, T init, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        *out = thrust::reduce(in, in + n, init, op);
        return cudaSuccess;
    }
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t Sum(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        return Reduce(temp, bytes, in, out, n, cub::Sum(), detail::accumulator_of<In, Out>());
    }
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t Max(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        using T = detail::value_of<In>;
        return Reduce(temp, bytes, in, out, n, cub::Max(), std::numeric_limits<T>::lowest());
    }
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t Min(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        using T = detail::value_of<In>;
        return Reduce(temp, bytes, in, out, n, cub::Min(), std::numeric_limits<T>::max());
    }
    // The first position of the extreme value; an empty input gives {1, lowest/max} as CUB.
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t ArgMax(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        using T = detail::value_of<In>;
        return ArgExtreme(temp, bytes, in, out, n, std::numeric_limits<T>::lowest(),
                          [](In first, In last) { return std::max_element(first, last); });
    }
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t ArgMin(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        using T = detail::value_of<In>;
        return ArgExtreme(temp, bytes, in, out, n, std::numeric_limits<T>::max(),
                          [](In first, In last) { return std::min_element(first, last); });
    }

  private:
    template <class In, class Out, class T, class Find>
    static cudaError_t ArgExtreme(void* temp, size_t& bytes, In in, Out out, int n, T empty, Find find) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        if (n <= 0) {
            *out = {1, empty};
            return cudaSuccess;
        }
        int best = static_cast<int>(find(in, in + n) - in);
        *out = {best, in[best]};
        return cudaSuccess;
    }
};

struct DeviceScan {
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t InclusiveSum(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        thrust::inclusive_scan(in, in + n, out);
        return cudaSuccess;
    }
    template <class In, class Out>
    CUDA_CPU_CUB_ENTRY static cudaError_t ExclusiveSum(void* temp, size_t& bytes, In in, Out out, int n, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        thrust::exclusive_scan(in, in + n, out);
        return cudaSuccess;
    }
    template <class In, class Out, class Op>
    CUDA_CPU_CUB_ENTRY static cudaError_t InclusiveScan(void* temp, size_t& bytes, In in, Out out, Op op, int n, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        thrust::inclusive_scan(in, in + n, out, op);
        return cudaSuccess;
    }
    template <class In, class Out, class Op, class T>
    CUDA_CPU_CUB_ENTRY static cudaError_t ExclusiveScan(void* temp, size_t& bytes, In in, Out out, Op op, T init, int n, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        thrust::exclusive_scan(in, in + n, out, init, op);
        return cudaSuccess;
    }
};

struct DeviceRadixSort {
    template <class Key>
    CUDA_CPU_CUB_ENTRY static cudaError_t SortKeys(void* temp, size_t& bytes, const Key* keys_in, Key* keys_out, int n, int begin_bit = 0,
                                int end_bit = sizeof(Key) * 8, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        detail::radix_sort<Key, char>(keys_in, keys_out, nullptr, nullptr, n, begin_bit, end_bit, false);
        return cudaSuccess;
    }
    template <class Key>
    CUDA_CPU_CUB_ENTRY static cudaError_t SortKeysDescending(void* temp, size_t& bytes, const Key* keys_in, Key* keys_out, int n, int begin_bit = 0,
                                          int end_bit = sizeof(Key) * 8, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        detail::radix_sort<Key, char>(keys_in, keys_out, nullptr, nullptr, n, begin_bit, end_bit, true);
        return cudaSuccess;
    }
    template <class Key, class Value>
    CUDA_CPU_CUB_ENTRY static cudaError_t SortPairs(void* temp, size_t& bytes, const Key* keys_in, Key* keys_out, const Value* values_in,
                                 Value* values_out, int n, int begin_bit = 0, int end_bit = sizeof(Key) * 8, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        detail::radix_sort(keys_in, keys_out, values_in, values_out, n, begin_bit, end_bit, false);
        return cudaSuccess;
    }
    template <class Key, class Value>
    CUDA_CPU_CUB_ENTRY static cudaError_t SortPairsDescending(void* temp, size_t& bytes, const Key* keys_in, Key* keys_out, const Value* values_in,
                                           Value* values_out, int n, int begin_bit = 0, int end_bit = sizeof(Key) * 8,
                                           cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        detail::radix_sort(keys_in, keys_out, values_in, values_out, n, begin_bit, end_bit, true);
        return cudaSuccess;
    }
};

struct DeviceSelect {
    template <class In, class Out, class Count, class Pred>
    CUDA_CPU_CUB_ENTRY static cudaError_t If(void* temp, size_t& bytes, In in, Out out, Count num_selected, int n, Pred pred, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        *num_selected = static_cast<int>(std::copy_if(in, in + n, out, pred) - out);
        return cudaSuccess;
    }
    template <class In, class Flags, class Out, class Count>
    CUDA_CPU_CUB_ENTRY static cudaError_t Flagged(void* temp, size_t& bytes, In in, Flags flags, Out out, Count num_selected, int n, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        int selected = 0;
        for (int i = 0; i < n; ++i)
            if (flags[i]) out[selected++] = in[i];
        *num_selected = selected;
        return cudaSuccess;
    }
};

struct DeviceHistogram {
    // num_levels boundaries make num_levels - 1 equal bins over [lower, upper); samples
    // outside are not counted.
    template <class Samples, class Counter, class Level>
    CUDA_CPU_CUB_ENTRY static cudaError_t HistogramEven(void* temp, size_t& bytes, Samples samples, Counter* histogram, int num_levels, Level lower,
                                     Level upper, int num_samples, cudaStream_t = 0) {
        if (detail::size_query(temp, bytes)) return cudaSuccess;
        const int bins = num_levels - 1;
        if (bins <= 0 || !(lower < upper)) return cudaErrorInvalidValue;
        std::fill(histogram, histogram + bins, Counter(0));
        const double scale = bins / (static_cast<double>(upper) - static_cast<double>(lower));
        for (int i = 0; i < num_samples; ++i) {
            const double value = static_cast<double>(samples[i]);
            if (!(value >= static_cast<double>(lower) && value < static_cast<double>(upper))) continue;
            int bin = static_cast<int>((value - static_cast<double>(lower)) * scale);
            histogram[bin < bins ? bin : bins - 1] += 1;
        }
        return cudaSuccess;
    }
};

}  // namespace cub
