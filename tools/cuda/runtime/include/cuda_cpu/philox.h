// CPU CUDA runtime: the Philox4x32-10 counter-based generator (Salmon et al., SC'11) that
// backs both cuRAND's host generators and its per-thread device states here.  Counter
// based means any element of any stream is computed directly, so generation is parallel
// and its result independent of the thread count.
#pragma once
#include <cmath>
#include <cstdint>

namespace cuda_cpu {
namespace rand {

struct Block {
    uint32_t v[4];
};

inline Block philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3, uint32_t k0, uint32_t k1) {
    const uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u, w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
    for (int round = 0; round < 10; ++round) {
        uint64_t p0 = static_cast<uint64_t>(m0) * c0;
        uint64_t p1 = static_cast<uint64_t>(m1) * c2;
        uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
        c0 = n0;
        c1 = static_cast<uint32_t>(p1);
        c2 = n2;
        c3 = static_cast<uint32_t>(p0);
        k0 += w0;
        k1 += w1;
    }
    return Block{{c0, c1, c2, c3}};
}

// Element `index` of stream `stream` for key `seed`.
inline uint32_t element(uint64_t seed, uint64_t stream, uint64_t index) {
    uint64_t block = index / 4;
    return philox4x32_10(static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), static_cast<uint32_t>(stream),
                         static_cast<uint32_t>(stream >> 32), static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32))
        .v[index % 4];
}

// cuRAND's conversions: uniform floats in (0, 1], never 0.
inline float to_uniform_float(uint32_t x) { return static_cast<float>(x) * 2.3283064365386963e-10f + 1.1641532182693481e-10f; }
inline double to_uniform_double(uint32_t hi, uint32_t lo) {
    uint64_t bits53 = (static_cast<uint64_t>(hi) << 21) ^ lo;  // 53 random bits
    bits53 &= (uint64_t(1) << 53) - 1;
    return static_cast<double>(bits53) * 1.1102230246251565e-16 + 5.551115123125783e-17;  // (k + 1/2) 2^-53
}

// Box-Muller: two uniforms in (0, 1] -> two standard normals.
inline void box_muller(double u1, double u2, double* z0, double* z1) {
    double radius = std::sqrt(-2.0 * std::log(u1));
    double angle = 6.283185307179586 * u2;
    *z0 = radius * std::cos(angle);
    *z1 = radius * std::sin(angle);
}

}  // namespace rand
}  // namespace cuda_cpu
