// CPU CUDA runtime, Thrust subset: execution policies, device_ptr, device/host vectors,
// function objects and fancy iterators.  "Device" memory is host memory, so
// device_vector is a std::vector whose data() is a device_ptr, and every algorithm runs on
// the CPU (OpenMP for the embarrassingly parallel ones).
#pragma once
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../cuda_runtime.h"
#include "../version.h"
#include "placeholders.h"
#include "zip.h"

namespace thrust {

// ---------------------------------------------------------------- execution policies
namespace detail {
struct execution_policy_base {};
template <class T>
struct is_policy : std::is_base_of<execution_policy_base, std::decay_t<T>> {};
}  // namespace detail

template <class Derived>
struct execution_policy : detail::execution_policy_base {
    // .on(stream): work is finished when issued, so the stream changes nothing.
    Derived on(cudaStream_t) const { return Derived(); }
};
struct host_t : execution_policy<host_t> {};
struct device_t : execution_policy<device_t> {};
struct seq_t : execution_policy<seq_t> {};
inline constexpr host_t host{};
inline constexpr device_t device{};
inline constexpr seq_t seq{};
namespace cuda {
struct par_t : execution_policy<par_t> {};
inline constexpr par_t par{};
inline constexpr par_t par_nosync{};
}  // namespace cuda
namespace system {
namespace cuda {
using thrust::cuda::par;
}
namespace omp {
using thrust::cuda::par;
}
namespace cpp {
using thrust::cuda::par;
}
}  // namespace system

template <class T>
struct is_execution_policy : detail::is_policy<T> {};

// ---------------------------------------------------------------- device_ptr
template <class T>
class device_ptr {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::remove_cv_t<T>;
    using difference_type = std::ptrdiff_t;
    using pointer = T*;
    using reference = T&;

    device_ptr() : ptr_(nullptr) {}
    device_ptr(T* ptr) : ptr_(ptr) {}  // implicit: raw and device pointers are one here
    template <class U, class = std::enable_if_t<std::is_convertible<U*, T*>::value>>
    device_ptr(const device_ptr<U>& other) : ptr_(other.get()) {}

    T* get() const { return ptr_; }
    T& operator*() const { return *ptr_; }
    T* operator->() const { return ptr_; }
    T& operator[](difference_type i) const { return ptr_[i]; }
    device_ptr& operator++() { ++ptr_; return *this; }
    device_ptr& operator--() { --ptr_; return *this; }
    device_ptr operator++(int) { device_ptr old = *this; ++ptr_; return old; }
    device_ptr operator--(int) { device_ptr old = *this; --ptr_; return old; }
    device_ptr& operator+=(difference_type n) { ptr_ += n; return *this; }
    device_ptr& operator-=(difference_type n) { ptr_ -= n; return *this; }
    device_ptr operator+(difference_type n) const { return device_ptr(ptr_ + n); }
    device_ptr operator-(difference_type n) const { return device_ptr(ptr_ - n); }
    difference_type operator-(const device_ptr& other) const { return ptr_ - other.ptr_; }
    bool operator==(const device_ptr& other) const { return ptr_ == other.ptr_; }
    bool operator!=(const device_ptr& other) const { return ptr_ != other.ptr_; }
    bool operator<(const device_ptr& other) const { return ptr_ < other.ptr_; }
    bool operator>(const device_ptr& other) const { return ptr_ > other.ptr_; }
    bool operator<=(const device_ptr& other) const { return ptr_ <= other.ptr_; }
    bool operator>=(const device_ptr& other) const { return ptr_ >= other.ptr_; }
    explicit operator bool() const { return ptr_ != nullptr; }
#if defined(__GLIBCXX__)
    // Thrust's device_vector<T>::iterator is built from a device_ptr<T> (`Iterator it = ptr;`);
    // ours is std::vector<T>'s iterator, which libstdc++ builds from the raw pointer.
    using vector_iterator = std::conditional_t<std::is_const<T>::value,
                                               typename std::vector<std::remove_cv_t<T>>::const_iterator,
                                               typename std::vector<std::remove_cv_t<T>>::iterator>;
    operator vector_iterator() const { return vector_iterator(ptr_); }
#endif

  private:
    T* ptr_;
};
template <class T>
inline device_ptr<T> operator+(std::ptrdiff_t n, const device_ptr<T>& p) { return p + n; }

template <class T>
inline T* raw_pointer_cast(T* ptr) { return ptr; }
template <class T>
inline T* raw_pointer_cast(const device_ptr<T>& ptr) { return ptr.get(); }
template <class T>
inline device_ptr<T> device_pointer_cast(T* ptr) { return device_ptr<T>(ptr); }
template <class T>
inline device_ptr<T> device_pointer_cast(const device_ptr<T>& ptr) { return ptr; }

template <class T>
inline device_ptr<T> device_malloc(std::size_t n) {
    void* memory = nullptr;
    cudaMalloc(&memory, n * sizeof(T));
    return device_ptr<T>(static_cast<T*>(memory));
}
template <class T>
inline void device_free(device_ptr<T> ptr) { cudaFree(ptr.get()); }

// ---------------------------------------------------------------- vectors
template <class T, class Alloc = std::allocator<T>>
class host_vector : public std::vector<T, Alloc> {
    using Base = std::vector<T, Alloc>;

  public:
    using Base::Base;
    host_vector() = default;
    template <class U, class A>
    host_vector(const std::vector<U, A>& other) : Base(other.begin(), other.end()) {}
    template <class U, class A>
    host_vector& operator=(const std::vector<U, A>& other) {
        Base::assign(other.begin(), other.end());
        return *this;
    }
};

template <class T, class Alloc = std::allocator<T>>
class device_vector : public std::vector<T, Alloc> {
    using Base = std::vector<T, Alloc>;

  public:
    using Base::Base;
    device_vector() = default;
    template <class U, class A>
    device_vector(const std::vector<U, A>& other) : Base(other.begin(), other.end()) {}
    template <class U, class A>
    device_vector& operator=(const std::vector<U, A>& other) {
        Base::assign(other.begin(), other.end());
        return *this;
    }
    device_ptr<T> data() { return device_ptr<T>(Base::data()); }
    device_ptr<const T> data() const { return device_ptr<const T>(Base::data()); }
};

// ---------------------------------------------------------------- function objects
#define CUDA_CPU_THRUST_BINARY(name, op)                                                         \
    template <class T = void>                                                                    \
    struct name {                                                                                \
        using first_argument_type = T;                                                           \
        using second_argument_type = T;                                                          \
        using result_type = T;                                                                   \
        constexpr T operator()(const T& a, const T& b) const { return op; }                      \
    };                                                                                           \
    template <>                                                                                  \
    struct name<void> {                                                                          \
        template <class A, class B>                                                              \
        constexpr auto operator()(A&& a, B&& b) const -> decltype(op) { return op; }             \
    };
CUDA_CPU_THRUST_BINARY(plus, a + b)
CUDA_CPU_THRUST_BINARY(minus, a - b)
CUDA_CPU_THRUST_BINARY(multiplies, a * b)
CUDA_CPU_THRUST_BINARY(divides, a / b)
CUDA_CPU_THRUST_BINARY(modulus, a % b)
CUDA_CPU_THRUST_BINARY(maximum, a < b ? b : a)
CUDA_CPU_THRUST_BINARY(minimum, b < a ? b : a)
CUDA_CPU_THRUST_BINARY(bit_and, a & b)
CUDA_CPU_THRUST_BINARY(bit_or, a | b)
CUDA_CPU_THRUST_BINARY(bit_xor, a ^ b)
#undef CUDA_CPU_THRUST_BINARY

#define CUDA_CPU_THRUST_PREDICATE(name, op)                                                      \
    template <class T = void>                                                                    \
    struct name {                                                                                \
        using first_argument_type = T;                                                           \
        using second_argument_type = T;                                                          \
        using result_type = bool;                                                                \
        constexpr bool operator()(const T& a, const T& b) const { return op; }                   \
    };                                                                                           \
    template <>                                                                                  \
    struct name<void> {                                                                          \
        template <class A, class B>                                                              \
        constexpr bool operator()(A&& a, B&& b) const { return op; }                             \
    };
CUDA_CPU_THRUST_PREDICATE(equal_to, a == b)
CUDA_CPU_THRUST_PREDICATE(not_equal_to, a != b)
CUDA_CPU_THRUST_PREDICATE(less, a < b)
CUDA_CPU_THRUST_PREDICATE(greater, a > b)
CUDA_CPU_THRUST_PREDICATE(less_equal, a <= b)
CUDA_CPU_THRUST_PREDICATE(greater_equal, a >= b)
CUDA_CPU_THRUST_PREDICATE(logical_and, a && b)
CUDA_CPU_THRUST_PREDICATE(logical_or, a || b)
#undef CUDA_CPU_THRUST_PREDICATE

template <class T = void>
struct negate {
    using argument_type = T;
    using result_type = T;
    constexpr T operator()(const T& a) const { return -a; }
};
template <>
struct negate<void> {
    template <class A>
    constexpr auto operator()(A&& a) const -> decltype(-a) { return -a; }
};
template <class T = void>
struct logical_not {
    constexpr bool operator()(const T& a) const { return !a; }
};
template <>
struct logical_not<void> {
    template <class A>
    constexpr bool operator()(A&& a) const { return !a; }
};
template <class T = void>
struct identity {
    constexpr const T& operator()(const T& a) const { return a; }
};
template <>
struct identity<void> {
    template <class A>
    constexpr A&& operator()(A&& a) const { return std::forward<A>(a); }
};

// ---------------------------------------------------------------- fancy iterators
template <class T>
class counting_iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = T;

    counting_iterator() : value_(T()) {}
    explicit counting_iterator(T value) : value_(value) {}
    T operator*() const { return value_; }
    T operator[](difference_type n) const { return static_cast<T>(value_ + n); }
    counting_iterator& operator++() { ++value_; return *this; }
    counting_iterator operator++(int) { counting_iterator old = *this; ++value_; return old; }
    counting_iterator& operator--() { --value_; return *this; }
    counting_iterator operator--(int) { counting_iterator old = *this; --value_; return old; }
    counting_iterator& operator+=(difference_type n) { value_ = static_cast<T>(value_ + n); return *this; }
    counting_iterator& operator-=(difference_type n) { value_ = static_cast<T>(value_ - n); return *this; }
    counting_iterator operator+(difference_type n) const { return counting_iterator(static_cast<T>(value_ + n)); }
    counting_iterator operator-(difference_type n) const { return counting_iterator(static_cast<T>(value_ - n)); }
    difference_type operator-(const counting_iterator& other) const { return static_cast<difference_type>(value_) - static_cast<difference_type>(other.value_); }
    bool operator==(const counting_iterator& other) const { return value_ == other.value_; }
    bool operator!=(const counting_iterator& other) const { return value_ != other.value_; }
    bool operator<(const counting_iterator& other) const { return value_ < other.value_; }
    bool operator>(const counting_iterator& other) const { return value_ > other.value_; }
    bool operator<=(const counting_iterator& other) const { return value_ <= other.value_; }
    bool operator>=(const counting_iterator& other) const { return value_ >= other.value_; }

  private:
    T value_;
};
template <class T>
inline counting_iterator<T> make_counting_iterator(T value) { return counting_iterator<T>(value); }

template <class T>
class constant_iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = const T*;
    using reference = T;

    constant_iterator() : value_(T()), index_(0) {}
    explicit constant_iterator(T value, difference_type index = 0) : value_(value), index_(index) {}
    T operator*() const { return value_; }
    T operator[](difference_type) const { return value_; }
    constant_iterator& operator++() { ++index_; return *this; }
    constant_iterator operator++(int) { constant_iterator old = *this; ++index_; return old; }
    constant_iterator& operator--() { --index_; return *this; }
    constant_iterator& operator+=(difference_type n) { index_ += n; return *this; }
    constant_iterator operator+(difference_type n) const { return constant_iterator(value_, index_ + n); }
    constant_iterator operator-(difference_type n) const { return constant_iterator(value_, index_ - n); }
    difference_type operator-(const constant_iterator& other) const { return index_ - other.index_; }
    bool operator==(const constant_iterator& other) const { return index_ == other.index_; }
    bool operator!=(const constant_iterator& other) const { return index_ != other.index_; }
    bool operator<(const constant_iterator& other) const { return index_ < other.index_; }

  private:
    T value_;
    difference_type index_;
};
template <class T>
inline constant_iterator<T> make_constant_iterator(T value) { return constant_iterator<T>(value); }

template <class Function, class Iterator>
class transform_iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::decay_t<decltype(std::declval<Function>()(*std::declval<Iterator>()))>;
    using difference_type = std::ptrdiff_t;
    using pointer = const value_type*;
    using reference = value_type;

    transform_iterator() = default;
    transform_iterator(Iterator base, Function function) : base_(base), function_(function) {}
    value_type operator*() const { return function_(*base_); }
    value_type operator[](difference_type n) const { return function_(base_[n]); }
    transform_iterator& operator++() { ++base_; return *this; }
    transform_iterator operator++(int) { transform_iterator old = *this; ++base_; return old; }
    transform_iterator& operator--() { --base_; return *this; }
    transform_iterator& operator+=(difference_type n) { base_ += n; return *this; }
    transform_iterator operator+(difference_type n) const { return transform_iterator(base_ + n, function_); }
    transform_iterator operator-(difference_type n) const { return transform_iterator(base_ - n, function_); }
    difference_type operator-(const transform_iterator& other) const { return base_ - other.base_; }
    bool operator==(const transform_iterator& other) const { return base_ == other.base_; }
    bool operator!=(const transform_iterator& other) const { return base_ != other.base_; }
    bool operator<(const transform_iterator& other) const { return base_ < other.base_; }
    Iterator base() const { return base_; }

  private:
    Iterator base_;
    Function function_;
};
template <class Iterator, class Function>
inline transform_iterator<Function, Iterator> make_transform_iterator(Iterator base, Function function) {
    return transform_iterator<Function, Iterator>(base, function);
}

// The element of `elements` at each index `indices` gives, in the indices' order (a gather, read or written).
template <class ElementIterator, class IndexIterator>
class permutation_iterator {
  public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = typename std::iterator_traits<ElementIterator>::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = typename std::iterator_traits<ElementIterator>::pointer;
    using reference = typename std::iterator_traits<ElementIterator>::reference;

    permutation_iterator() = default;
    permutation_iterator(ElementIterator elements, IndexIterator indices) : elements_(elements), indices_(indices) {}
    reference operator*() const { return elements_[*indices_]; }
    reference operator[](difference_type n) const { return elements_[indices_[n]]; }
    permutation_iterator& operator++() { ++indices_; return *this; }
    permutation_iterator operator++(int) { permutation_iterator old = *this; ++indices_; return old; }
    permutation_iterator& operator--() { --indices_; return *this; }
    permutation_iterator operator--(int) { permutation_iterator old = *this; --indices_; return old; }
    permutation_iterator& operator+=(difference_type n) { indices_ += n; return *this; }
    permutation_iterator& operator-=(difference_type n) { indices_ -= n; return *this; }
    permutation_iterator operator+(difference_type n) const { return permutation_iterator(elements_, indices_ + n); }
    permutation_iterator operator-(difference_type n) const { return permutation_iterator(elements_, indices_ - n); }
    difference_type operator-(const permutation_iterator& other) const { return indices_ - other.indices_; }
    bool operator==(const permutation_iterator& other) const { return indices_ == other.indices_; }
    bool operator!=(const permutation_iterator& other) const { return indices_ != other.indices_; }
    bool operator<(const permutation_iterator& other) const { return indices_ < other.indices_; }
    bool operator>(const permutation_iterator& other) const { return other < *this; }
    bool operator<=(const permutation_iterator& other) const { return !(other < *this); }
    bool operator>=(const permutation_iterator& other) const { return !(*this < other); }

  private:
    ElementIterator elements_;
    IndexIterator indices_;
};
template <class ElementIterator, class IndexIterator>
inline permutation_iterator<ElementIterator, IndexIterator> make_permutation_iterator(ElementIterator elements,
                                                                                    IndexIterator indices) {
    return permutation_iterator<ElementIterator, IndexIterator>(elements, indices);
}

// Thrust's iterator traits: `typename thrust::iterator_difference<It>::type` and the like.
template <class It>
struct iterator_traits : std::iterator_traits<It> {};
template <class It>
struct iterator_value { using type = typename std::iterator_traits<It>::value_type; };
template <class It>
struct iterator_difference { using type = typename std::iterator_traits<It>::difference_type; };
template <class It>
struct iterator_reference { using type = typename std::iterator_traits<It>::reference; };
template <class It>
struct iterator_pointer { using type = typename std::iterator_traits<It>::pointer; };
template <class It>
using iterator_value_t = typename iterator_value<It>::type;
template <class It>
using iterator_difference_t = typename iterator_difference<It>::type;

}  // namespace thrust
