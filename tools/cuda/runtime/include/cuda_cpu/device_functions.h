// CPU CUDA runtime: device-side helpers other than math and atomics: cache-hinted loads and
// stores (plain accesses on the CPU), memory fences, clocks, sleep and trap.
//
// clock() stays the C library's (processor time, CLOCKS_PER_SEC units): a kernel that
// takes differences of clock() still gets a non-decreasing counter. clock64() reads a
// steady nanosecond counter.
#pragma once
#include "cuda_cpu/defines.h"

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sched.h>
#include <time.h>

template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T value) { *p = value; }
template <class T> inline void __stcs(T* p, T value) { *p = value; }
template <class T> inline void __stwb(T* p, T value) { *p = value; }
template <class T> inline void __stwt(T* p, T value) { *p = value; }

inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }

inline long long clock64() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}
inline unsigned long long __globaltimer() { return static_cast<unsigned long long>(clock64()); }

inline void __nanosleep(unsigned int ns) {
    // Short sleeps are spin-wait back-offs on the GPU; yielding is the CPU equivalent.
    if (ns < 10000u) {
        sched_yield();
    } else {
        timespec duration{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
        nanosleep(&duration, nullptr);
    }
}

[[noreturn]] inline void __trap() { std::abort(); }
inline void __brkpt() { std::abort(); }
