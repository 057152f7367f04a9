// CPU CUDA runtime, Thrust subset: the placeholder expressions of thrust::placeholders
// (_1 ... _4): `a * _1 + _2` builds a function object of the arguments it names.
#pragma once
#include <tuple>
#include <type_traits>
#include <utility>

namespace thrust {
namespace detail {

// An expression node: calling it with the algorithm's arguments evaluates the expression.
template <class Eval>
struct placeholder_expression {
    Eval eval;
    template <class... Args>
    constexpr auto operator()(Args&&... args) const -> decltype(eval(std::forward<Args>(args)...)) {
        return eval(std::forward<Args>(args)...);
    }
};

template <std::size_t N>
struct argument {
    template <class... Args>
    constexpr auto operator()(Args&&... args) const -> decltype(std::get<N>(std::forward_as_tuple(std::forward<Args>(args)...))) {
        return std::get<N>(std::forward_as_tuple(std::forward<Args>(args)...));
    }
};

template <class T>
struct is_placeholder_expression : std::false_type {};
template <class Eval>
struct is_placeholder_expression<placeholder_expression<Eval>> : std::true_type {};

// Operands: expressions evaluate, anything else is a constant captured by value.
template <class T>
constexpr auto as_operand(const T& value) {
    if constexpr (is_placeholder_expression<T>::value) {
        return value;
    } else {
        return [value](auto&&...) { return value; };
    }
}

template <class A, class B>
using enable_if_any_expression =
    std::enable_if_t<is_placeholder_expression<std::decay_t<A>>::value || is_placeholder_expression<std::decay_t<B>>::value, int>;

// The operators live beside the expression type so that argument-dependent lookup finds them.
#define CUDA_CPU_THRUST_PLACEHOLDER_BINARY(op)                                                                  \
    template <class A, class B, enable_if_any_expression<A, B> = 0>                                     \
    constexpr auto operator op(const A& a, const B& b) {                                                         \
        auto left = as_operand(a);                                                                       \
        auto right = as_operand(b);                                                                      \
        auto eval = [left, right](auto&&... args) { return left(args...) op right(args...); };                   \
        return placeholder_expression<decltype(eval)>{eval};                                             \
    }
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(+)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(-)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(*)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(/)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(%)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(<)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(>)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(<=)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(>=)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(==)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(!=)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(&&)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(||)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(&)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(|)
CUDA_CPU_THRUST_PLACEHOLDER_BINARY(^)
#undef CUDA_CPU_THRUST_PLACEHOLDER_BINARY

template <class Eval>
constexpr auto operator-(const placeholder_expression<Eval>& a) {
    auto eval = [a](auto&&... args) { return -a(args...); };
    return placeholder_expression<decltype(eval)>{eval};
}
template <class Eval>
constexpr auto operator!(const placeholder_expression<Eval>& a) {
    auto eval = [a](auto&&... args) { return !a(args...); };
    return placeholder_expression<decltype(eval)>{eval};
}

}  // namespace detail

namespace placeholders {
constexpr detail::placeholder_expression<detail::argument<0>> _1{};
constexpr detail::placeholder_expression<detail::argument<1>> _2{};
constexpr detail::placeholder_expression<detail::argument<2>> _3{};
constexpr detail::placeholder_expression<detail::argument<3>> _4{};
}  // namespace placeholders

}  // namespace thrust
