// CPU CUDA runtime, Thrust subset: the algorithms.  Each takes an optional execution
// policy first (thrust::device, thrust::host, thrust::seq, thrust::cuda::par[.on(s)]),
// which changes nothing on the CPU.  Over large random-access ranges the element-wise
// algorithms, reductions and scans run with OpenMP; reductions and scans combine
// fixed-size chunks in order, so floating-point results do not depend on the thread
// count (they may differ from the GPU's in the last bits, as Thrust allows).
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <numeric>
#include <utility>
#include <vector>

#include "core.h"

namespace thrust {

template <class A, class B>
using pair = std::pair<A, B>;
using std::make_pair;

namespace detail {

template <class It>
using value_of = typename std::iterator_traits<It>::value_type;
template <class It>
using difference_of = typename std::iterator_traits<It>::difference_type;
template <class It>
constexpr bool is_random_access =
    std::is_base_of<std::random_access_iterator_tag, typename std::iterator_traits<It>::iterator_category>::value;

constexpr std::ptrdiff_t parallel_threshold = 1 << 15;

template <class In, class Out, class F>
Out transform_impl(In first, In last, Out result, F f) {
    if constexpr (is_random_access<In> && is_random_access<Out>) {
        const std::ptrdiff_t n = last - first;
CUDA_CPU_OMP(omp parallel for schedule(static) if (n > parallel_threshold))
        for (std::ptrdiff_t i = 0; i < n; ++i) result[i] = f(first[i]);
        return result + n;
    } else {
        return std::transform(first, last, result, f);
    }
}
template <class In1, class In2, class Out, class F>
Out transform_impl(In1 first1, In1 last1, In2 first2, Out result, F f) {
    if constexpr (is_random_access<In1> && is_random_access<In2> && is_random_access<Out>) {
        const std::ptrdiff_t n = last1 - first1;
CUDA_CPU_OMP(omp parallel for schedule(static) if (n > parallel_threshold))
        for (std::ptrdiff_t i = 0; i < n; ++i) result[i] = f(first1[i], first2[i]);
        return result + n;
    } else {
        return std::transform(first1, last1, first2, result, f);
    }
}

// Large random-access ranges are folded in fixed-size chunks in parallel, then the chunk
// results in order: this relies on associativity only (as Thrust does), and since the
// chunks do not depend on the thread count neither does the result.
constexpr std::ptrdiff_t chunk_size = 8192;

template <class In, class T, class Op, class Unary>
T fold(In first, In last, T init, Op op, Unary unary) {
    if constexpr (is_random_access<In>) {
        const std::ptrdiff_t n = last - first;
        if (n > parallel_threshold) {
            const std::ptrdiff_t chunks = (n + chunk_size - 1) / chunk_size;
            std::vector<T> partial(static_cast<size_t>(chunks), init);
CUDA_CPU_OMP(omp parallel for schedule(static))
            for (std::ptrdiff_t c = 0; c < chunks; ++c) {
                const std::ptrdiff_t begin = c * chunk_size, end = begin + chunk_size < n ? begin + chunk_size : n;
                T acc = static_cast<T>(unary(first[begin]));
                for (std::ptrdiff_t i = begin + 1; i < end; ++i) acc = op(acc, unary(first[i]));
                partial[static_cast<size_t>(c)] = acc;
            }
            for (const T& value : partial) init = op(init, value);
            return init;
        }
    }
    for (; first != last; ++first) init = op(init, unary(*first));
    return init;
}

template <class In>
value_of<In> reduce_impl(In first, In last) { return fold(first, last, value_of<In>(), plus<>(), identity<>()); }
template <class In, class T>
T reduce_impl(In first, In last, T init) { return fold(first, last, init, plus<>(), identity<>()); }
template <class In, class T, class Op>
T reduce_impl(In first, In last, T init, Op op) { return fold(first, last, init, op, identity<>()); }

template <class In, class Unary, class T, class Binary>
T transform_reduce_impl(In first, In last, Unary unary, T init, Binary binary) { return fold(first, last, init, binary, unary); }

template <class In1, class In2, class T>
T inner_product_impl(In1 first1, In1 last1, In2 first2, T init) { return std::inner_product(first1, last1, first2, init); }
template <class In1, class In2, class T, class Op1, class Op2>
T inner_product_impl(In1 first1, In1 last1, In2 first2, T init, Op1 sum, Op2 product) {
    return std::inner_product(first1, last1, first2, init, sum, product);
}

template <class In, class T>
difference_of<In> count_impl(In first, In last, const T& value) { return std::count(first, last, value); }
template <class In, class Pred>
difference_of<In> count_if_impl(In first, In last, Pred pred) { return std::count_if(first, last, pred); }

template <class It>
void sort_impl(It first, It last) { std::sort(first, last); }
template <class It, class Comp>
void sort_impl(It first, It last, Comp comp) { std::sort(first, last, comp); }
template <class It>
void stable_sort_impl(It first, It last) { std::stable_sort(first, last); }
template <class It, class Comp>
void stable_sort_impl(It first, It last, Comp comp) { std::stable_sort(first, last, comp); }

// Integer keys ordered by less or greater are sorted as Thrust sorts them on a GPU, by a stable
// least-significant-digit radix sort (8 bits a pass; a pass where every key has the same digit is
// skipped): O(n) per byte of key, where comparing through an index is O(n log n) and cache-hostile.
template <class Comp, class K>
constexpr int radix_order() {  // 1: ascending, -1: descending, 0: not a radix-sortable order
    if constexpr (!std::is_integral<K>::value || std::is_same<K, bool>::value) return 0;
    else if constexpr (std::is_same<Comp, less<>>::value || std::is_same<Comp, less<K>>::value ||
                       std::is_same<Comp, std::less<>>::value || std::is_same<Comp, std::less<K>>::value) return 1;
    else if constexpr (std::is_same<Comp, greater<>>::value || std::is_same<Comp, greater<K>>::value ||
                       std::is_same<Comp, std::greater<>>::value || std::is_same<Comp, std::greater<K>>::value) return -1;
    else return 0;
}
template <class Index, class K, class V>
void radix_sort_pairs_indexed(std::vector<K>& keys, std::vector<V>& values, bool descending) {
    using U = std::make_unsigned_t<K>;
    constexpr int bits = int(sizeof(K)) * 8;
    constexpr U sign = std::is_signed<K>::value ? U(U(1) << (bits - 1)) : U(0);  // negatives first
    const U flip = descending ? U(~U(0)) : U(0);
    const size_t n = keys.size();
    std::vector<U> digits(n), digits_out(n);
    for (size_t i = 0; i < n; ++i) digits[i] = static_cast<U>(static_cast<U>(keys[i]) ^ sign ^ flip);
    std::vector<Index> order(n), order_out(n);
    std::iota(order.begin(), order.end(), Index(0));
    for (int shift = 0; shift < bits; shift += 8) {
        size_t count[257] = {};
        for (size_t i = 0; i < n; ++i) ++count[((digits[i] >> shift) & 0xFF) + 1];
        if (std::find(std::begin(count) + 1, std::end(count), n) != std::end(count)) continue;  // one digit: in order
        for (int d = 0; d < 256; ++d) count[d + 1] += count[d];
        for (size_t i = 0; i < n; ++i) {
            const size_t to = count[(digits[i] >> shift) & 0xFF]++;
            digits_out[to] = digits[i];
            order_out[to] = order[i];
        }
        digits.swap(digits_out);
        order.swap(order_out);
    }
    std::vector<V> sorted_values(n);
    for (size_t i = 0; i < n; ++i) {
        keys[i] = static_cast<K>(static_cast<U>(digits[i] ^ sign ^ flip));
        sorted_values[i] = values[order[i]];
    }
    values.swap(sorted_values);
}
template <class K, class V>
void radix_sort_pairs(std::vector<K>& keys, std::vector<V>& values, bool descending) {
    if (keys.size() <= 0xFFFFFFFFu) radix_sort_pairs_indexed<std::uint32_t>(keys, values, descending);
    else radix_sort_pairs_indexed<size_t>(keys, values, descending);
}

// Stable: equal keys keep their values' order (what Thrust's radix sort does).
template <class KeyIt, class ValueIt, class Comp>
void sort_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values_first, Comp comp) {
    const std::ptrdiff_t n = std::distance(keys_first, keys_last);
    if constexpr (radix_order<Comp, value_of<KeyIt>>() != 0) {
        std::vector<value_of<KeyIt>> keys(keys_first, keys_last);
        std::vector<value_of<ValueIt>> values(values_first, std::next(values_first, n));
        radix_sort_pairs(keys, values, radix_order<Comp, value_of<KeyIt>>() < 0);
        std::copy(keys.begin(), keys.end(), keys_first);
        std::copy(values.begin(), values.end(), values_first);
        return;
    }
    std::vector<std::ptrdiff_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), std::ptrdiff_t(0));
    std::vector<value_of<KeyIt>> keys(keys_first, keys_last);
    std::vector<value_of<ValueIt>> values(values_first, std::next(values_first, n));
    std::stable_sort(order.begin(), order.end(), [&](std::ptrdiff_t a, std::ptrdiff_t b) {
        return comp(keys[static_cast<size_t>(a)], keys[static_cast<size_t>(b)]);
    });
    for (std::ptrdiff_t i = 0; i < n; ++i, ++keys_first, ++values_first) {
        *keys_first = keys[static_cast<size_t>(order[static_cast<size_t>(i)])];
        *values_first = values[static_cast<size_t>(order[static_cast<size_t>(i)])];
    }
}
template <class KeyIt, class ValueIt>
void sort_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values_first) {
    sort_by_key_impl(keys_first, keys_last, values_first, less<>());
}
template <class KeyIt, class ValueIt, class... Comp>
void stable_sort_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values_first, Comp... comp) {
    sort_by_key_impl(keys_first, keys_last, values_first, comp...);
}

template <class It, class T>
void fill_impl(It first, It last, const T& value) {
    if constexpr (is_random_access<It>) {
        const std::ptrdiff_t n = last - first;
CUDA_CPU_OMP(omp parallel for schedule(static) if (n > parallel_threshold))
        for (std::ptrdiff_t i = 0; i < n; ++i) first[i] = value;
    } else {
        std::fill(first, last, value);
    }
}
template <class It, class Size, class T>
It fill_n_impl(It first, Size n, const T& value) { return std::fill_n(first, n, value); }
template <class It, class T>
void uninitialized_fill_impl(It first, It last, const T& value) { fill_impl(first, last, value); }

template <class In, class Out>
Out copy_impl(In first, In last, Out result) { return std::copy(first, last, result); }
template <class In, class Size, class Out>
Out copy_n_impl(In first, Size n, Out result) { return std::copy_n(first, n, result); }
template <class In, class Out>
Out uninitialized_copy_impl(In first, In last, Out result) { return std::copy(first, last, result); }
template <class In, class Out, class Pred>
Out copy_if_impl(In first, In last, Out result, Pred pred) { return std::copy_if(first, last, result, pred); }
template <class In, class Stencil, class Out, class Pred>
Out copy_if_impl(In first, In last, Stencil stencil, Out result, Pred pred) {
    for (; first != last; ++first, ++stencil)
        if (pred(*stencil)) *result++ = *first;
    return result;
}

template <class It, class T>
void sequence_impl(It first, It last, T init, T step) {
    using V = value_of<It>;
    if constexpr (is_random_access<It>) {
        const std::ptrdiff_t n = last - first;
CUDA_CPU_OMP(omp parallel for schedule(static) if (n > parallel_threshold))
        for (std::ptrdiff_t i = 0; i < n; ++i) first[i] = static_cast<V>(init + static_cast<T>(i) * step);
    } else {
        for (std::ptrdiff_t i = 0; first != last; ++first, ++i) *first = static_cast<V>(init + static_cast<T>(i) * step);
    }
}
template <class It, class T>
void sequence_impl(It first, It last, T init) { sequence_impl(first, last, init, T(1)); }
template <class It>
void sequence_impl(It first, It last) { sequence_impl(first, last, value_of<It>(0), value_of<It>(1)); }

template <class It, class F>
void tabulate_impl(It first, It last, F f) {
    const std::ptrdiff_t n = std::distance(first, last);
    for (std::ptrdiff_t i = 0; i < n; ++i, ++first) *first = f(i);
}

// Scans read each input before writing its output, so result may equal first.  Large
// random-access ranges go in three passes: chunk totals (parallel), the carry into each
// chunk (sequential, in order), each chunk's scan from its carry (parallel).
template <class In, class Out, class T, class Op>
Out scan(In first, In last, Out result, bool inclusive, bool has_init, T init, Op op) {
    if constexpr (is_random_access<In> && is_random_access<Out>) {
        const std::ptrdiff_t n = last - first;
        if (n > parallel_threshold) {
            const std::ptrdiff_t chunks = (n + chunk_size - 1) / chunk_size;
            std::vector<T> total(static_cast<size_t>(chunks), init);
CUDA_CPU_OMP(omp parallel for schedule(static))
            for (std::ptrdiff_t c = 0; c < chunks; ++c) {
                const std::ptrdiff_t begin = c * chunk_size, end = begin + chunk_size < n ? begin + chunk_size : n;
                T acc = static_cast<T>(first[begin]);
                for (std::ptrdiff_t i = begin + 1; i < end; ++i) acc = op(acc, first[i]);
                total[static_cast<size_t>(c)] = acc;
            }
            // carry[c]: everything before chunk c (absent for chunk 0 without an init).
            std::vector<T> carry(static_cast<size_t>(chunks), init);
            for (std::ptrdiff_t c = 1; c < chunks; ++c) {
                const size_t k = static_cast<size_t>(c);
                carry[k] = (c == 1 && !has_init) ? total[0] : op(carry[k - 1], total[k - 1]);
            }
CUDA_CPU_OMP(omp parallel for schedule(static))
            for (std::ptrdiff_t c = 0; c < chunks; ++c) {
                const std::ptrdiff_t begin = c * chunk_size, end = begin + chunk_size < n ? begin + chunk_size : n;
                const bool carried = c > 0 || has_init;
                T acc = carry[static_cast<size_t>(c)];
                for (std::ptrdiff_t i = begin; i < end; ++i) {
                    T value = static_cast<T>(first[i]);
                    T next = (carried || i > begin) ? op(acc, value) : value;
                    result[i] = inclusive ? next : acc;
                    acc = next;
                }
            }
            return result + n;
        }
    }
    bool started = has_init;
    T acc = init;
    for (; first != last; ++first, ++result) {
        T value = static_cast<T>(*first);
        T next = started ? op(acc, value) : value;
        *result = inclusive ? next : acc;
        acc = next;
        started = true;
    }
    return result;
}

template <class In, class Out, class Op>
Out inclusive_scan_impl(In first, In last, Out result, Op op) {
    return scan(first, last, result, true, false, value_of<In>(), op);
}
template <class In, class Out>
Out inclusive_scan_impl(In first, In last, Out result) { return inclusive_scan_impl(first, last, result, plus<>()); }
template <class In, class Out, class T, class Op>
Out exclusive_scan_impl(In first, In last, Out result, T init, Op op) { return scan(first, last, result, false, true, init, op); }
template <class In, class Out, class T>
Out exclusive_scan_impl(In first, In last, Out result, T init) { return exclusive_scan_impl(first, last, result, init, plus<>()); }
template <class In, class Out>
Out exclusive_scan_impl(In first, In last, Out result) { return exclusive_scan_impl(first, last, result, value_of<In>(0), plus<>()); }

template <class In, class Out, class Unary, class Op>
Out transform_inclusive_scan_impl(In first, In last, Out result, Unary unary, Op op) {
    return inclusive_scan_impl(make_transform_iterator(first, unary), make_transform_iterator(last, unary), result, op);
}
template <class In, class Out, class Unary, class T, class Op>
Out transform_exclusive_scan_impl(In first, In last, Out result, Unary unary, T init, Op op) {
    return exclusive_scan_impl(make_transform_iterator(first, unary), make_transform_iterator(last, unary), result, init, op);
}

// Segmented scans: a run of equal consecutive keys is one segment.
template <class KeyIt, class ValueIt, class Out, class Pred, class Op>
Out inclusive_scan_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values, Out result, Pred equal, Op op) {
    bool started = false;
    value_of<KeyIt> key{};
    value_of<ValueIt> sum{};
    for (; keys_first != keys_last; ++keys_first, ++values, ++result) {
        sum = (started && equal(key, *keys_first)) ? op(sum, *values) : static_cast<value_of<ValueIt>>(*values);
        key = *keys_first;
        started = true;
        *result = sum;
    }
    return result;
}
template <class KeyIt, class ValueIt, class Out, class Pred>
Out inclusive_scan_by_key_impl(KeyIt kf, KeyIt kl, ValueIt values, Out result, Pred equal) {
    return inclusive_scan_by_key_impl(kf, kl, values, result, equal, plus<>());
}
template <class KeyIt, class ValueIt, class Out>
Out inclusive_scan_by_key_impl(KeyIt kf, KeyIt kl, ValueIt values, Out result) {
    return inclusive_scan_by_key_impl(kf, kl, values, result, equal_to<>(), plus<>());
}
template <class KeyIt, class ValueIt, class Out, class T, class Pred, class Op>
Out exclusive_scan_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values, Out result, T init, Pred equal, Op op) {
    bool started = false;
    value_of<KeyIt> key{};
    T sum = init;
    for (; keys_first != keys_last; ++keys_first, ++values, ++result) {
        if (!started || !equal(key, *keys_first)) sum = init;
        key = *keys_first;
        started = true;
        T next = op(sum, *values);
        *result = sum;
        sum = next;
    }
    return result;
}
template <class KeyIt, class ValueIt, class Out, class T, class Pred>
Out exclusive_scan_by_key_impl(KeyIt kf, KeyIt kl, ValueIt values, Out result, T init, Pred equal) {
    return exclusive_scan_by_key_impl(kf, kl, values, result, init, equal, plus<>());
}
template <class KeyIt, class ValueIt, class Out, class T>
Out exclusive_scan_by_key_impl(KeyIt kf, KeyIt kl, ValueIt values, Out result, T init) {
    return exclusive_scan_by_key_impl(kf, kl, values, result, init, equal_to<>(), plus<>());
}
template <class KeyIt, class ValueIt, class Out>
Out exclusive_scan_by_key_impl(KeyIt kf, KeyIt kl, ValueIt values, Out result) {
    return exclusive_scan_by_key_impl(kf, kl, values, result, value_of<ValueIt>(0), equal_to<>(), plus<>());
}

template <class KeyIt, class ValueIt, class KeyOut, class ValueOut, class Pred, class Op>
pair<KeyOut, ValueOut> reduce_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values_first, KeyOut keys_out,
                                          ValueOut values_out, Pred equal, Op op) {
    if (keys_first == keys_last) return pair<KeyOut, ValueOut>(keys_out, values_out);
    value_of<KeyIt> key = *keys_first;
    value_of<ValueIt> sum = *values_first;
    for (++keys_first, ++values_first; keys_first != keys_last; ++keys_first, ++values_first) {
        if (equal(key, *keys_first)) {
            sum = op(sum, *values_first);
        } else {
            *keys_out++ = key;
            *values_out++ = sum;
            key = *keys_first;
            sum = *values_first;
        }
    }
    *keys_out++ = key;
    *values_out++ = sum;
    return pair<KeyOut, ValueOut>(keys_out, values_out);
}
template <class KeyIt, class ValueIt, class KeyOut, class ValueOut, class Pred>
pair<KeyOut, ValueOut> reduce_by_key_impl(KeyIt kf, KeyIt kl, ValueIt vf, KeyOut ko, ValueOut vo, Pred equal) {
    return reduce_by_key_impl(kf, kl, vf, ko, vo, equal, plus<>());
}
template <class KeyIt, class ValueIt, class KeyOut, class ValueOut>
pair<KeyOut, ValueOut> reduce_by_key_impl(KeyIt kf, KeyIt kl, ValueIt vf, KeyOut ko, ValueOut vo) {
    return reduce_by_key_impl(kf, kl, vf, ko, vo, equal_to<>(), plus<>());
}

template <class It, class... Comp>
It min_element_impl(It first, It last, Comp... comp) { return std::min_element(first, last, comp...); }
template <class It, class... Comp>
It max_element_impl(It first, It last, Comp... comp) { return std::max_element(first, last, comp...); }
template <class It, class... Comp>
pair<It, It> minmax_element_impl(It first, It last, Comp... comp) { return std::minmax_element(first, last, comp...); }
template <class It, class T>
It find_impl(It first, It last, const T& value) { return std::find(first, last, value); }
template <class It, class Pred>
It find_if_impl(It first, It last, Pred pred) { return std::find_if(first, last, pred); }
template <class In1, class In2, class... Pred>
bool equal_impl(In1 first1, In1 last1, In2 first2, Pred... pred) { return std::equal(first1, last1, first2, pred...); }
template <class It, class... Pred>
It unique_impl(It first, It last, Pred... pred) { return std::unique(first, last, pred...); }
template <class It>
void reverse_impl(It first, It last) { std::reverse(first, last); }
template <class In, class Out, class... Pred>
Out unique_copy_impl(In first, In last, Out result, Pred... pred) { return std::unique_copy(first, last, result, pred...); }
// Keeps the first key (and its value) of each run of equal keys.
template <class KeyIt, class ValueIt, class Pred>
pair<KeyIt, ValueIt> unique_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values_first, Pred equal) {
    KeyIt keys_out = keys_first;
    ValueIt values_out = values_first;
    if (keys_first == keys_last) return pair<KeyIt, ValueIt>(keys_out, values_out);
    ++keys_out;
    ++values_out;
    KeyIt previous = keys_first;
    ValueIt value = values_first;
    for (++keys_first, ++value; keys_first != keys_last; ++keys_first, ++value) {
        if (!equal(*previous, *keys_first)) {
            *keys_out = *keys_first;
            *values_out = *value;
            previous = keys_out;
            ++keys_out;
            ++values_out;
        }
    }
    return pair<KeyIt, ValueIt>(keys_out, values_out);
}
template <class KeyIt, class ValueIt>
pair<KeyIt, ValueIt> unique_by_key_impl(KeyIt keys_first, KeyIt keys_last, ValueIt values_first) {
    return unique_by_key_impl(keys_first, keys_last, values_first, equal_to<>());
}
template <class It, class Pred>
It partition_impl(It first, It last, Pred pred) { return std::stable_partition(first, last, pred); }
template <class It, class Pred>
It stable_partition_impl(It first, It last, Pred pred) { return std::stable_partition(first, last, pred); }
template <class In1, class In2, class Out, class... Comp>
Out merge_impl(In1 first1, In1 last1, In2 first2, In2 last2, Out result, Comp... comp) {
    return std::merge(first1, last1, first2, last2, result, comp...);
}
template <class It, class Pred, class T>
void replace_if_impl(It first, It last, Pred pred, const T& new_value) { std::replace_if(first, last, pred, new_value); }
// transform_if(first, last, result, op, pred) and the stencil form (first, last, stencil, result, op, pred).
template <class In, class Out, class F, class Pred>
Out transform_if_impl(In first, In last, Out result, F op, Pred pred) {
    for (; first != last; ++first, ++result)
        if (pred(*first)) *result = op(*first);
    return result;
}
template <class In, class Stencil, class Out, class F, class Pred>
Out transform_if_impl(In first, In last, Stencil stencil, Out result, F op, Pred pred) {
    for (; first != last; ++first, ++stencil, ++result)
        if (pred(*stencil)) *result = op(*first);
    return result;
}

template <class It, class F>
It for_each_impl(It first, It last, F f) {
    std::for_each(first, last, f);
    return last;
}
template <class It, class Size, class F>
It for_each_n_impl(It first, Size n, F f) { return std::for_each_n(first, n, f); }
template <class MapIt, class In, class Out>
Out gather_impl(MapIt map_first, MapIt map_last, In input, Out result) {
    for (; map_first != map_last; ++map_first, ++result) *result = input[*map_first];
    return result;
}
template <class In, class MapIt, class Out>
void scatter_impl(In first, In last, MapIt map, Out result) {
    for (; first != last; ++first, ++map) result[*map] = *first;
}
template <class It, class T>
void replace_impl(It first, It last, const T& old_value, const T& new_value) { std::replace(first, last, old_value, new_value); }
template <class It, class Pred>
It remove_if_impl(It first, It last, Pred pred) { return std::remove_if(first, last, pred); }
template <class It, class T>
It remove_impl(It first, It last, const T& value) { return std::remove(first, last, value); }
template <class It, class Gen>
void generate_impl(It first, It last, Gen gen) { std::generate(first, last, gen); }
template <class In, class Out, class... Op>
Out adjacent_difference_impl(In first, In last, Out result, Op... op) { return std::adjacent_difference(first, last, result, op...); }
template <class It, class Pred>
bool all_of_impl(It first, It last, Pred pred) { return std::all_of(first, last, pred); }
template <class It, class Pred>
bool any_of_impl(It first, It last, Pred pred) { return std::any_of(first, last, pred); }
template <class It, class Pred>
bool none_of_impl(It first, It last, Pred pred) { return std::none_of(first, last, pred); }
template <class It, class... Comp>
bool is_sorted_impl(It first, It last, Comp... comp) { return std::is_sorted(first, last, comp...); }
template <class It, class T, class... Comp>
It lower_bound_impl(It first, It last, const T& value, Comp... comp) { return std::lower_bound(first, last, value, comp...); }
template <class It, class T, class... Comp>
It upper_bound_impl(It first, It last, const T& value, Comp... comp) { return std::upper_bound(first, last, value, comp...); }
template <class It, class T, class... Comp>
bool binary_search_impl(It first, It last, const T& value, Comp... comp) { return std::binary_search(first, last, value, comp...); }
// thrust::shuffle: a permutation drawn from g (Fisher-Yates, as std::shuffle). Thrust's own bijective
// shuffle draws another permutation from the same g; code may rely only on it being one.
template <class It, class URBG>
void shuffle_impl(It first, It last, URBG&& g) { std::shuffle(first, last, g); }
template <class It, class Out, class URBG>
Out shuffle_copy_impl(It first, It last, Out result, URBG&& g) {
    Out end = std::copy(first, last, result);
    std::shuffle(result, end, g);
    return end;
}

}  // namespace detail

// thrust::name(args...) and thrust::name(policy, args...) both call detail::name_impl(args...).
#define CUDA_CPU_THRUST_ALGORITHM(name)                                                                       \
    template <class First, class... Rest, std::enable_if_t<!detail::is_policy<First>::value, int> = 0>       \
    inline auto name(First&& first, Rest&&... rest)                                                           \
        ->decltype(detail::name##_impl(std::forward<First>(first), std::forward<Rest>(rest)...)) {            \
        return detail::name##_impl(std::forward<First>(first), std::forward<Rest>(rest)...);                  \
    }                                                                                                         \
    template <class Policy, class... Rest, std::enable_if_t<detail::is_policy<Policy>::value, int> = 0>      \
    inline auto name(const Policy&, Rest&&... rest)->decltype(detail::name##_impl(std::forward<Rest>(rest)...)) { \
        return detail::name##_impl(std::forward<Rest>(rest)...);                                              \
    }
CUDA_CPU_THRUST_ALGORITHM(transform)
CUDA_CPU_THRUST_ALGORITHM(reduce)
CUDA_CPU_THRUST_ALGORITHM(transform_reduce)
CUDA_CPU_THRUST_ALGORITHM(inner_product)
CUDA_CPU_THRUST_ALGORITHM(count)
CUDA_CPU_THRUST_ALGORITHM(count_if)
CUDA_CPU_THRUST_ALGORITHM(sort)
CUDA_CPU_THRUST_ALGORITHM(stable_sort)
CUDA_CPU_THRUST_ALGORITHM(sort_by_key)
CUDA_CPU_THRUST_ALGORITHM(stable_sort_by_key)
CUDA_CPU_THRUST_ALGORITHM(fill)
CUDA_CPU_THRUST_ALGORITHM(fill_n)
CUDA_CPU_THRUST_ALGORITHM(uninitialized_fill)
CUDA_CPU_THRUST_ALGORITHM(copy)
CUDA_CPU_THRUST_ALGORITHM(copy_n)
CUDA_CPU_THRUST_ALGORITHM(uninitialized_copy)
CUDA_CPU_THRUST_ALGORITHM(copy_if)
CUDA_CPU_THRUST_ALGORITHM(sequence)
CUDA_CPU_THRUST_ALGORITHM(tabulate)
CUDA_CPU_THRUST_ALGORITHM(inclusive_scan)
CUDA_CPU_THRUST_ALGORITHM(exclusive_scan)
CUDA_CPU_THRUST_ALGORITHM(reduce_by_key)
CUDA_CPU_THRUST_ALGORITHM(transform_inclusive_scan)
CUDA_CPU_THRUST_ALGORITHM(transform_exclusive_scan)
CUDA_CPU_THRUST_ALGORITHM(inclusive_scan_by_key)
CUDA_CPU_THRUST_ALGORITHM(exclusive_scan_by_key)
CUDA_CPU_THRUST_ALGORITHM(min_element)
CUDA_CPU_THRUST_ALGORITHM(max_element)
CUDA_CPU_THRUST_ALGORITHM(minmax_element)
CUDA_CPU_THRUST_ALGORITHM(find)
CUDA_CPU_THRUST_ALGORITHM(find_if)
CUDA_CPU_THRUST_ALGORITHM(equal)
CUDA_CPU_THRUST_ALGORITHM(unique)
CUDA_CPU_THRUST_ALGORITHM(reverse)
CUDA_CPU_THRUST_ALGORITHM(unique_copy)
CUDA_CPU_THRUST_ALGORITHM(unique_by_key)
CUDA_CPU_THRUST_ALGORITHM(partition)
CUDA_CPU_THRUST_ALGORITHM(stable_partition)
CUDA_CPU_THRUST_ALGORITHM(merge)
CUDA_CPU_THRUST_ALGORITHM(replace_if)
CUDA_CPU_THRUST_ALGORITHM(transform_if)
CUDA_CPU_THRUST_ALGORITHM(for_each)
CUDA_CPU_THRUST_ALGORITHM(for_each_n)
CUDA_CPU_THRUST_ALGORITHM(gather)
CUDA_CPU_THRUST_ALGORITHM(scatter)
CUDA_CPU_THRUST_ALGORITHM(replace)
CUDA_CPU_THRUST_ALGORITHM(remove_if)
CUDA_CPU_THRUST_ALGORITHM(remove)
CUDA_CPU_THRUST_ALGORITHM(generate)
CUDA_CPU_THRUST_ALGORITHM(adjacent_difference)
CUDA_CPU_THRUST_ALGORITHM(all_of)
CUDA_CPU_THRUST_ALGORITHM(any_of)
CUDA_CPU_THRUST_ALGORITHM(none_of)
CUDA_CPU_THRUST_ALGORITHM(is_sorted)
CUDA_CPU_THRUST_ALGORITHM(lower_bound)
CUDA_CPU_THRUST_ALGORITHM(upper_bound)
CUDA_CPU_THRUST_ALGORITHM(binary_search)
CUDA_CPU_THRUST_ALGORITHM(shuffle)
CUDA_CPU_THRUST_ALGORITHM(shuffle_copy)
#undef CUDA_CPU_THRUST_ALGORITHM

}  // namespace thrust
