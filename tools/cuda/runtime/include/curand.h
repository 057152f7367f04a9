// CPU CUDA runtime: the cuRAND host API on the CPU.
//
// Every pseudo-random generator type is served by Philox4x32-10 keyed by the seed: the
// numbers are deterministic for a (seed, offset) and well distributed, but they are NOT
// the bits a GPU's XORWOW/MRG/MTGP generator would produce.  Conventions follow cuRAND:
// uniforms are in (0, 1], normal generation needs an even count, each call continues
// where the previous one stopped.  Quasi-random generators are not provided
// (curandCreateGenerator returns CURAND_STATUS_TYPE_ERROR).  Poisson uses Knuth's method
// for lambda < 64 and a rounded normal approximation above.
#pragma once
#define CURAND_H_
#include "cuda_runtime.h"
#include "cuda_cpu/philox.h"

#include <cstdint>

typedef enum curandStatus {
    CURAND_STATUS_SUCCESS = 0,
    CURAND_STATUS_VERSION_MISMATCH = 100,
    CURAND_STATUS_NOT_INITIALIZED = 101,
    CURAND_STATUS_ALLOCATION_FAILED = 102,
    CURAND_STATUS_TYPE_ERROR = 103,
    CURAND_STATUS_OUT_OF_RANGE = 104,
    CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
    CURAND_STATUS_DOUBLE_PRECISION_REQUIRED = 106,
    CURAND_STATUS_LAUNCH_FAILURE = 201,
    CURAND_STATUS_PREEXISTING_FAILURE = 202,
    CURAND_STATUS_INITIALIZATION_FAILED = 203,
    CURAND_STATUS_ARCH_MISMATCH = 204,
    CURAND_STATUS_INTERNAL_ERROR = 999,
} curandStatus_t;

typedef enum curandRngType {
    CURAND_RNG_TEST = 0,
    CURAND_RNG_PSEUDO_DEFAULT = 100,
    CURAND_RNG_PSEUDO_XORWOW = 101,
    CURAND_RNG_PSEUDO_MRG32K3A = 121,
    CURAND_RNG_PSEUDO_MTGP32 = 141,
    CURAND_RNG_PSEUDO_MT19937 = 142,
    CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161,
    CURAND_RNG_QUASI_DEFAULT = 200,
    CURAND_RNG_QUASI_SOBOL32 = 201,
    CURAND_RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
    CURAND_RNG_QUASI_SOBOL64 = 203,
    CURAND_RNG_QUASI_SCRAMBLED_SOBOL64 = 204,
} curandRngType_t;

typedef enum curandOrdering {
    CURAND_ORDERING_PSEUDO_BEST = 100,
    CURAND_ORDERING_PSEUDO_DEFAULT = 101,
    CURAND_ORDERING_PSEUDO_SEEDED = 102,
    CURAND_ORDERING_PSEUDO_LEGACY = 103,
    CURAND_ORDERING_PSEUDO_DYNAMIC = 104,
    CURAND_ORDERING_QUASI_DEFAULT = 201,
} curandOrdering_t;

struct curandGenerator_st {
    curandRngType_t type;
    unsigned long long seed;
    unsigned long long offset;  // 32-bit values consumed so far
    cudaStream_t stream;
};
typedef struct curandGenerator_st* curandGenerator_t;

namespace cuda_cpu {
namespace rand {

constexpr unsigned long long default_seed = 0ULL;

inline bool pseudo_type(curandRngType_t type) {
    return type == CURAND_RNG_PSEUDO_DEFAULT || type == CURAND_RNG_PSEUDO_XORWOW || type == CURAND_RNG_PSEUDO_MRG32K3A ||
           type == CURAND_RNG_PSEUDO_MTGP32 || type == CURAND_RNG_PSEUDO_MT19937 || type == CURAND_RNG_PSEUDO_PHILOX4_32_10;
}

// Fill out[0..n) with make(i, raw) where raw(j) is the generator's j-th next 32-bit value
// and each output consumes `per_output` values; then advance the generator.
template <class T, class Make>
inline curandStatus_t generate(curandGenerator_t generator, T* out, size_t n, unsigned per_output, Make make) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (out == nullptr && n > 0) return CURAND_STATUS_OUT_OF_RANGE;
    const unsigned long long seed = generator->seed, base = generator->offset;
    auto raw = [seed, base](unsigned long long j) { return element(seed, 0, base + j); };
CUDA_CPU_OMP(omp parallel for schedule(static) if (n > 65536))
    for (long long i = 0; i < static_cast<long long>(n); ++i) make(static_cast<size_t>(i), out, raw);
    generator->offset += static_cast<unsigned long long>(n) * per_output;
    return CURAND_STATUS_SUCCESS;
}

// Normals in pairs: outputs 2p and 2p+1 come from uniforms 2p and 2p+1.
template <class T, class Transform>
inline curandStatus_t generate_normal_pairs(curandGenerator_t generator, T* out, size_t n, bool double_uniforms, Transform transform) {
    if (n % 2 != 0) return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
    unsigned per = double_uniforms ? 2u : 1u;
    return generate(generator, out, n, per, [per, double_uniforms, transform](size_t i, T* o, auto raw) {
        size_t pair = i / 2 * 2;
        double u1, u2;
        if (double_uniforms) {
            u1 = to_uniform_double(raw(per * pair), raw(per * pair + 1));
            u2 = to_uniform_double(raw(per * pair + 2), raw(per * pair + 3));
        } else {
            u1 = double(to_uniform_float(raw(pair)));
            u2 = double(to_uniform_float(raw(pair + 1)));
        }
        double z0, z1;
        box_muller(u1, u2, &z0, &z1);
        o[i] = static_cast<T>(transform(i % 2 == 0 ? z0 : z1));
    });
}

inline unsigned int poisson(double lambda, unsigned long long seed, unsigned long long index) {
    // Each output owns stream index + 1 of the key, so it may draw as many uniforms as it needs.
    unsigned long long stream = index + 1;
    if (lambda < 64.0) {
        double limit = std::exp(-lambda), product = 1.0;
        unsigned int count = 0;
        for (unsigned long long j = 0;; ++j) {
            product *= double(to_uniform_float(element(seed, stream, j)));
            if (product <= limit) return count;
            ++count;
        }
    }
    double z0, z1;
    box_muller(double(to_uniform_float(element(seed, stream, 0))), double(to_uniform_float(element(seed, stream, 1))), &z0, &z1);
    double value = std::floor(lambda + std::sqrt(lambda) * z0 + 0.5);
    return value < 0.0 ? 0u : static_cast<unsigned int>(value);
}

}  // namespace rand
}  // namespace cuda_cpu

inline curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t type) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    if (!cuda_cpu::rand::pseudo_type(type)) return CURAND_STATUS_TYPE_ERROR;
    *generator = new curandGenerator_st{type, cuda_cpu::rand::default_seed, 0ULL, nullptr};
    return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandCreateGeneratorHost(curandGenerator_t* generator, curandRngType_t type) {
    return curandCreateGenerator(generator, type);
}
inline curandStatus_t curandDestroyGenerator(curandGenerator_t generator) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    delete generator;
    return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator, unsigned long long seed) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    generator->seed = seed;
    generator->offset = 0;
    return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    generator->offset = offset;
    return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetGeneratorOrdering(curandGenerator_t generator, curandOrdering_t) {
    return generator == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream) {
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    generator->stream = stream;
    return CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandGenerateSeeds(curandGenerator_t generator) {
    return generator == nullptr ? CURAND_STATUS_NOT_INITIALIZED : CURAND_STATUS_SUCCESS;
}
inline curandStatus_t curandGetVersion(int* version) {
    if (version == nullptr) return CURAND_STATUS_OUT_OF_RANGE;
    *version = 10300;
    return CURAND_STATUS_SUCCESS;
}

inline curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int* out, size_t n) {
    return cuda_cpu::rand::generate(generator, out, n, 1, [](size_t i, unsigned int* o, auto raw) { o[i] = raw(i); });
}
inline curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* out, size_t n) {
    return cuda_cpu::rand::generate(generator, out, n, 1,
                                    [](size_t i, float* o, auto raw) { o[i] = cuda_cpu::rand::to_uniform_float(raw(i)); });
}
inline curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double* out, size_t n) {
    return cuda_cpu::rand::generate(generator, out, n, 2, [](size_t i, double* o, auto raw) {
        o[i] = cuda_cpu::rand::to_uniform_double(raw(2 * i), raw(2 * i + 1));
    });
}
inline curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* out, size_t n, float mean, float stddev) {
    return cuda_cpu::rand::generate_normal_pairs(generator, out, n, false, [mean, stddev](double z) { return double(mean) + double(stddev) * z; });
}
inline curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double* out, size_t n, double mean, double stddev) {
    return cuda_cpu::rand::generate_normal_pairs(generator, out, n, true, [mean, stddev](double z) { return double(mean) + double(stddev) * z; });
}
inline curandStatus_t curandGenerateLogNormal(curandGenerator_t generator, float* out, size_t n, float mean, float stddev) {
    return cuda_cpu::rand::generate_normal_pairs(generator, out, n, false,
                                                 [mean, stddev](double z) { return std::exp(double(mean) + double(stddev) * z); });
}
inline curandStatus_t curandGenerateLogNormalDouble(curandGenerator_t generator, double* out, size_t n, double mean, double stddev) {
    return cuda_cpu::rand::generate_normal_pairs(generator, out, n, true,
                                                 [mean, stddev](double z) { return std::exp(double(mean) + double(stddev) * z); });
}
inline curandStatus_t curandGeneratePoisson(curandGenerator_t generator, unsigned int* out, size_t n, double lambda) {
    if (!(lambda > 0.0)) return CURAND_STATUS_OUT_OF_RANGE;
    if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
    // Streams 1.. are keyed per output; mix the offset into the seed so calls differ.
    const unsigned long long key = generator->seed ^ (generator->offset * 0x9E3779B97F4A7C15ULL);
    return cuda_cpu::rand::generate(generator, out, n, 1, [lambda, key](size_t i, unsigned int* o, auto) {
        o[i] = cuda_cpu::rand::poisson(lambda, key, i);
    });
}
