// CPU CUDA runtime: cuRAND's device API (per-thread generator states) on the CPU.
//
// All state types (curandState_t = XORWOW, Philox4_32_10, MRG32k3a) are Philox4x32-10
// underneath: curand_init(seed, subsequence, offset, &state) selects stream `subsequence`
// of key `seed` and skips `offset` values, exactly and in O(1).  Sequences are
// deterministic and independent per subsequence, but are not the GPU's bits.
#pragma once
#include "curand.h"
#include "cuda_cpu/philox.h"

namespace cuda_cpu {
namespace rand {

struct PhiloxState {
    unsigned long long seed;
    unsigned long long subsequence;
    unsigned long long position;  // index of the next 32-bit value in the subsequence
    int has_spare_normal;
    double spare_normal;
    unsigned long long cached_block;  // which block of four values `cache` holds (~0: none)
    unsigned int cache[4];
};

// One Philox evaluation gives four values: keep them for the next three calls.
inline unsigned int next(PhiloxState* state) {
    const unsigned long long block = state->position / 4;
    if (block != state->cached_block) {
        Block values = philox4x32_10(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
                                     static_cast<uint32_t>(state->subsequence), static_cast<uint32_t>(state->subsequence >> 32),
                                     static_cast<uint32_t>(state->seed), static_cast<uint32_t>(state->seed >> 32));
        for (int i = 0; i < 4; ++i) state->cache[i] = values.v[i];
        state->cached_block = block;
    }
    return state->cache[state->position++ % 4];
}

}  // namespace rand
}  // namespace cuda_cpu

struct curandStateXORWOW : cuda_cpu::rand::PhiloxState {};
struct curandStatePhilox4_32_10 : cuda_cpu::rand::PhiloxState {};
struct curandStateMRG32k3a : cuda_cpu::rand::PhiloxState {};
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStateXORWOW curandState_t;
typedef struct curandStateXORWOW curandState;
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
typedef struct curandStateMRG32k3a curandStateMRG32k3a_t;

inline void curand_init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset,
                        cuda_cpu::rand::PhiloxState* state) {
    state->seed = seed;
    state->subsequence = subsequence;
    state->position = offset;
    state->has_spare_normal = 0;
    state->spare_normal = 0.0;
    state->cached_block = ~0ULL;
}

inline void skipahead(unsigned long long n, cuda_cpu::rand::PhiloxState* state) { state->position += n; }
inline void skipahead_sequence(unsigned long long n, cuda_cpu::rand::PhiloxState* state) {
    state->subsequence += n;
    state->cached_block = ~0ULL;  // the cached values belong to the old subsequence
}

inline unsigned int curand(cuda_cpu::rand::PhiloxState* state) { return cuda_cpu::rand::next(state); }
inline uint4 curand4(cuda_cpu::rand::PhiloxState* state) {
    unsigned int a = curand(state), b = curand(state), c = curand(state), d = curand(state);
    return make_uint4(a, b, c, d);
}

inline float curand_uniform(cuda_cpu::rand::PhiloxState* state) { return cuda_cpu::rand::to_uniform_float(curand(state)); }
inline double curand_uniform_double(cuda_cpu::rand::PhiloxState* state) {
    unsigned int hi = curand(state);
    return cuda_cpu::rand::to_uniform_double(hi, curand(state));
}
inline float4 curand_uniform4(cuda_cpu::rand::PhiloxState* state) {
    float a = curand_uniform(state), b = curand_uniform(state), c = curand_uniform(state), d = curand_uniform(state);
    return make_float4(a, b, c, d);
}
inline double2 curand_uniform2_double(cuda_cpu::rand::PhiloxState* state) {
    double a = curand_uniform_double(state);
    return make_double2(a, curand_uniform_double(state));
}

// Normals come in Box-Muller pairs; the second of a pair is kept for the next call.
inline double curand_normal_double(cuda_cpu::rand::PhiloxState* state) {
    if (state->has_spare_normal) {
        state->has_spare_normal = 0;
        return state->spare_normal;
    }
    double u1 = curand_uniform_double(state), u2 = curand_uniform_double(state), z0, z1;
    cuda_cpu::rand::box_muller(u1, u2, &z0, &z1);
    state->has_spare_normal = 1;
    state->spare_normal = z1;
    return z0;
}
inline float curand_normal(cuda_cpu::rand::PhiloxState* state) {
    if (state->has_spare_normal) {
        state->has_spare_normal = 0;
        return static_cast<float>(state->spare_normal);
    }
    double u1 = double(curand_uniform(state)), u2 = double(curand_uniform(state)), z0, z1;
    cuda_cpu::rand::box_muller(u1, u2, &z0, &z1);
    state->has_spare_normal = 1;
    state->spare_normal = static_cast<float>(z1);
    return static_cast<float>(z0);
}
inline float2 curand_normal2(cuda_cpu::rand::PhiloxState* state) {
    float a = curand_normal(state);
    return make_float2(a, curand_normal(state));
}
inline float4 curand_normal4(cuda_cpu::rand::PhiloxState* state) {
    float a = curand_normal(state), b = curand_normal(state), c = curand_normal(state), d = curand_normal(state);
    return make_float4(a, b, c, d);
}
inline double2 curand_normal2_double(cuda_cpu::rand::PhiloxState* state) {
    double a = curand_normal_double(state);
    return make_double2(a, curand_normal_double(state));
}
inline float curand_log_normal(cuda_cpu::rand::PhiloxState* state, float mean, float stddev) {
    return expf(mean + stddev * curand_normal(state));
}
inline double curand_log_normal_double(cuda_cpu::rand::PhiloxState* state, double mean, double stddev) {
    return exp(mean + stddev * curand_normal_double(state));
}
inline unsigned int curand_poisson(cuda_cpu::rand::PhiloxState* state, double lambda) {
    if (lambda < 64.0) {
        double limit = exp(-lambda), product = 1.0;
        unsigned int count = 0;
        while ((product *= double(curand_uniform(state))) > limit) ++count;
        return count;
    }
    double value = floor(lambda + sqrt(lambda) * curand_normal_double(state) + 0.5);
    return value < 0.0 ? 0u : static_cast<unsigned int>(value);
}
