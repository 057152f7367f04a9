// CPU CUDA runtime: CUDA's atomic functions, correct when OpenMP threads call them at once.
//
// Every function returns the value the location held before, as CUDA does.  Integer
// operations use the GCC __atomic builtins; float, double and the min/max/inc/dec
// operations use a compare-and-swap loop on the location's bits.  The _block and
// _system variants are the same operations (one memory, one coherent view).
#pragma once
#include "cuda_cpu/defines.h"

namespace cuda_cpu {

constexpr int atomic_order = __ATOMIC_SEQ_CST;

// Replace *address by update(old) atomically; return old.
template <class T, class Update>
inline T atomic_update(T* address, Update update) {
    T old;
    __atomic_load(address, &old, __ATOMIC_RELAXED);
    T desired = update(old);
    while (!__atomic_compare_exchange(address, &old, &desired, true, atomic_order, __ATOMIC_RELAXED))
        desired = update(old);
    return old;
}

template <class T>
inline T atomic_min(T* address, T value) {
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (value < old && !__atomic_compare_exchange_n(address, &old, value, true, atomic_order, __ATOMIC_RELAXED)) {
    }
    return old;
}

template <class T>
inline T atomic_max(T* address, T value) {
    T old = __atomic_load_n(address, __ATOMIC_RELAXED);
    while (value > old && !__atomic_compare_exchange_n(address, &old, value, true, atomic_order, __ATOMIC_RELAXED)) {
    }
    return old;
}

template <class T>
inline T atomic_cas(T* address, T compare, T value) {
    __atomic_compare_exchange_n(address, &compare, value, false, atomic_order, atomic_order);
    return compare;  // on failure the builtin stores the current value here
}

}  // namespace cuda_cpu

inline int atomicAdd(int* a, int v) { return __atomic_fetch_add(a, v, cuda_cpu::atomic_order); }
inline unsigned int atomicAdd(unsigned int* a, unsigned int v) { return __atomic_fetch_add(a, v, cuda_cpu::atomic_order); }
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) { return __atomic_fetch_add(a, v, cuda_cpu::atomic_order); }
inline float atomicAdd(float* a, float v) { return cuda_cpu::atomic_update(a, [v](float old) { return old + v; }); }
inline double atomicAdd(double* a, double v) { return cuda_cpu::atomic_update(a, [v](double old) { return old + v; }); }

inline int atomicSub(int* a, int v) { return __atomic_fetch_sub(a, v, cuda_cpu::atomic_order); }
inline unsigned int atomicSub(unsigned int* a, unsigned int v) { return __atomic_fetch_sub(a, v, cuda_cpu::atomic_order); }

inline int atomicExch(int* a, int v) { return __atomic_exchange_n(a, v, cuda_cpu::atomic_order); }
inline unsigned int atomicExch(unsigned int* a, unsigned int v) { return __atomic_exchange_n(a, v, cuda_cpu::atomic_order); }
inline unsigned long long atomicExch(unsigned long long* a, unsigned long long v) { return __atomic_exchange_n(a, v, cuda_cpu::atomic_order); }
inline float atomicExch(float* a, float v) {
    float old;
    __atomic_exchange(a, &v, &old, cuda_cpu::atomic_order);
    return old;
}

inline int atomicMin(int* a, int v) { return cuda_cpu::atomic_min(a, v); }
inline unsigned int atomicMin(unsigned int* a, unsigned int v) { return cuda_cpu::atomic_min(a, v); }
inline unsigned long long atomicMin(unsigned long long* a, unsigned long long v) { return cuda_cpu::atomic_min(a, v); }
inline long long atomicMin(long long* a, long long v) { return cuda_cpu::atomic_min(a, v); }
inline int atomicMax(int* a, int v) { return cuda_cpu::atomic_max(a, v); }
inline unsigned int atomicMax(unsigned int* a, unsigned int v) { return cuda_cpu::atomic_max(a, v); }
inline unsigned long long atomicMax(unsigned long long* a, unsigned long long v) { return cuda_cpu::atomic_max(a, v); }
inline long long atomicMax(long long* a, long long v) { return cuda_cpu::atomic_max(a, v); }

// atomicInc: old >= limit ? 0 : old + 1.  atomicDec: (old == 0 || old > limit) ? limit : old - 1.
inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
    return cuda_cpu::atomic_update(a, [limit](unsigned int old) { return old >= limit ? 0u : old + 1u; });
}
inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
    return cuda_cpu::atomic_update(a, [limit](unsigned int old) { return (old == 0u || old > limit) ? limit : old - 1u; });
}

inline int atomicCAS(int* a, int compare, int v) { return cuda_cpu::atomic_cas(a, compare, v); }
inline unsigned int atomicCAS(unsigned int* a, unsigned int compare, unsigned int v) { return cuda_cpu::atomic_cas(a, compare, v); }
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare, unsigned long long v) {
    return cuda_cpu::atomic_cas(a, compare, v);
}
inline unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short v) { return cuda_cpu::atomic_cas(a, compare, v); }

inline int atomicAnd(int* a, int v) { return __atomic_fetch_and(a, v, cuda_cpu::atomic_order); }
inline unsigned int atomicAnd(unsigned int* a, unsigned int v) { return __atomic_fetch_and(a, v, cuda_cpu::atomic_order); }
inline unsigned long long atomicAnd(unsigned long long* a, unsigned long long v) { return __atomic_fetch_and(a, v, cuda_cpu::atomic_order); }
inline int atomicOr(int* a, int v) { return __atomic_fetch_or(a, v, cuda_cpu::atomic_order); }
inline unsigned int atomicOr(unsigned int* a, unsigned int v) { return __atomic_fetch_or(a, v, cuda_cpu::atomic_order); }
inline unsigned long long atomicOr(unsigned long long* a, unsigned long long v) { return __atomic_fetch_or(a, v, cuda_cpu::atomic_order); }
inline int atomicXor(int* a, int v) { return __atomic_fetch_xor(a, v, cuda_cpu::atomic_order); }
inline unsigned int atomicXor(unsigned int* a, unsigned int v) { return __atomic_fetch_xor(a, v, cuda_cpu::atomic_order); }
inline unsigned long long atomicXor(unsigned long long* a, unsigned long long v) { return __atomic_fetch_xor(a, v, cuda_cpu::atomic_order); }

// name_block / name_system forward to name; overloads declared later (__half, bfloat16)
// are found by argument-dependent lookup when these templates are instantiated.
#define CUDA_CPU_ATOMIC_SCOPES(name)                                                          \
    template <class... Args>                                                                  \
    inline auto name##_block(Args... args)->decltype(name(args...)) { return name(args...); } \
    template <class... Args>                                                                  \
    inline auto name##_system(Args... args)->decltype(name(args...)) { return name(args...); }
CUDA_CPU_ATOMIC_SCOPES(atomicAdd)
CUDA_CPU_ATOMIC_SCOPES(atomicSub)
CUDA_CPU_ATOMIC_SCOPES(atomicExch)
CUDA_CPU_ATOMIC_SCOPES(atomicMin)
CUDA_CPU_ATOMIC_SCOPES(atomicMax)
CUDA_CPU_ATOMIC_SCOPES(atomicInc)
CUDA_CPU_ATOMIC_SCOPES(atomicDec)
CUDA_CPU_ATOMIC_SCOPES(atomicCAS)
CUDA_CPU_ATOMIC_SCOPES(atomicAnd)
CUDA_CPU_ATOMIC_SCOPES(atomicOr)
CUDA_CPU_ATOMIC_SCOPES(atomicXor)
#undef CUDA_CPU_ATOMIC_SCOPES

// The same operations for code that no other thread runs beside: a launch the optimizer runs
// whole on the calling thread.  Plain loads and stores, which the compiler can keep in registers
// and vectorize.  A block that declares CUDA_CPU_ONE_THREAD_ATOMICS calls these for arithmetic
// types; other types (__half, vectors) still find theirs by argument-dependent lookup.
#include <type_traits>
namespace cuda_cpu::one_thread {
template <class T>
using if_arithmetic = std::enable_if_t<std::is_arithmetic_v<T>, T>;

template <class T, class V>
inline if_arithmetic<T> atomicAdd(T* a, V v) { T old = *a; *a = old + static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicSub(T* a, V v) { T old = *a; *a = old - static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicExch(T* a, V v) { T old = *a; *a = static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicMin(T* a, V v) { T old = *a; if (static_cast<T>(v) < old) *a = static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicMax(T* a, V v) { T old = *a; if (static_cast<T>(v) > old) *a = static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicInc(T* a, V limit) { T old = *a; *a = old >= static_cast<T>(limit) ? T(0) : T(old + 1); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicDec(T* a, V limit) {
    T old = *a;
    *a = (old == 0 || old > static_cast<T>(limit)) ? static_cast<T>(limit) : T(old - 1);
    return old;
}
template <class T, class C, class V>
inline if_arithmetic<T> atomicCAS(T* a, C compare, V v) { T old = *a; if (old == static_cast<T>(compare)) *a = static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicAnd(T* a, V v) { T old = *a; *a = old & static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicOr(T* a, V v) { T old = *a; *a = old | static_cast<T>(v); return old; }
template <class T, class V>
inline if_arithmetic<T> atomicXor(T* a, V v) { T old = *a; *a = old ^ static_cast<T>(v); return old; }
}  // namespace cuda_cpu::one_thread

#define CUDA_CPU_ONE_THREAD_ATOMICS                                                                   \
    using cuda_cpu::one_thread::atomicAdd; using cuda_cpu::one_thread::atomicSub;                     \
    using cuda_cpu::one_thread::atomicExch; using cuda_cpu::one_thread::atomicMin;                    \
    using cuda_cpu::one_thread::atomicMax; using cuda_cpu::one_thread::atomicInc;                     \
    using cuda_cpu::one_thread::atomicDec; using cuda_cpu::one_thread::atomicCAS;                     \
    using cuda_cpu::one_thread::atomicAnd; using cuda_cpu::one_thread::atomicOr;                      \
    using cuda_cpu::one_thread::atomicXor;
