"""The CPU cuRAND: host generators give deterministic, well-distributed numbers in cuRAND's
ranges; device states are reproducible per (seed, subsequence, offset)."""

from __future__ import annotations

import numpy as np
import pytest

from test_runtime_support import build, run

CURAND_PROGRAM = r"""
#include <curand.h>
#include <curand_kernel.h>
#include <cstdio>
#include <vector>

static void save(const char* path, const void* data, size_t bytes) {
    FILE* file = std::fopen(path, "wb");
    std::fwrite(data, 1, bytes, file);
    std::fclose(file);
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    unsigned long long seed = std::strtoull(argv[1], nullptr, 10);
    const size_t n = 1 << 18;
    curandGenerator_t gen;
    curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT);
    curandSetPseudoRandomGeneratorSeed(gen, seed);
    std::vector<float> uniform(n), normal(n), second(n);
    std::vector<double> uniform_d(n), normal_d(n);
    std::vector<unsigned int> bits(n), poisson(n);
    curandGenerateUniform(gen, uniform.data(), n);
    curandGenerateUniform(gen, second.data(), n);  // continues the sequence
    curandGenerateNormal(gen, normal.data(), n, 2.0f, 3.0f);
    curandGenerateUniformDouble(gen, uniform_d.data(), n);
    curandGenerateNormalDouble(gen, normal_d.data(), n, -1.0, 0.5);
    curandGenerate(gen, bits.data(), n);
    curandGeneratePoisson(gen, poisson.data(), n, 4.5);
    printf("odd_normal %d\n", curandGenerateNormal(gen, normal.data(), 3, 0.0f, 1.0f));
    curandRngType_t quasi = CURAND_RNG_QUASI_SOBOL32;
    curandGenerator_t unsupported;
    printf("quasi %d\n", curandCreateGenerator(&unsupported, quasi));
    curandDestroyGenerator(gen);
    save("uniform.bin", uniform.data(), n * sizeof(float));
    save("second.bin", second.data(), n * sizeof(float));
    save("normal.bin", normal.data(), n * sizeof(float));
    save("uniform_d.bin", uniform_d.data(), n * sizeof(double));
    save("normal_d.bin", normal_d.data(), n * sizeof(double));
    save("bits.bin", bits.data(), n * sizeof(unsigned int));
    save("poisson.bin", poisson.data(), n * sizeof(unsigned int));

    // Device states: per-thread streams, reproducible, offset skips exactly.
    const int threads = 256, per_thread = 64;
    std::vector<float> device_uniform(threads * per_thread);
#pragma omp parallel for
    for (int t = 0; t < threads; ++t) {
        curandState state;
        curand_init(seed, t, 0, &state);
        for (int i = 0; i < per_thread; ++i) device_uniform[t * per_thread + i] = curand_uniform(&state);
    }
    save("device_uniform.bin", device_uniform.data(), device_uniform.size() * sizeof(float));
    curandState a, b;
    curand_init(seed, 5, 0, &a);
    curand_init(seed, 5, 10, &b);
    for (int i = 0; i < 10; ++i) curand(&a);
    curandStatePhilox4_32_10_t p;
    curand_init(seed, 0, 0, &p);
    float4 four = curand_uniform4(&p);
    printf("offset_skip %d\n", int(curand(&a) == curand(&b)));
    curandState c, d;
    curand_init(seed, 5, 0, &c);
    curand(&c);
    curand(&c);
    skipahead_sequence(1, &c);
    curand_init(seed, 6, 2, &d);
    unsigned int from_skip = curand(&c), from_init = curand(&d);
    printf("sequence_skip %d\n", int(from_skip == from_init));
    printf("normal_pair %d\n", int(curand_normal(&a) != curand_normal(&a)));
    printf("uniform4 %d\n", int(four.x > 0 && four.x <= 1 && four.w > 0 && four.w <= 1));
    return 0;
}
"""


@pytest.fixture(scope="module")
def curand_exe(tmp_path_factory):
    return build({"curand.cpp": CURAND_PROGRAM}, tmp_path_factory.mktemp("curand"))


def load(exe, name, dtype):
    return np.fromfile(exe.parent / f"{name}.bin", dtype=dtype)


def outputs(exe, seed: int, threads: int) -> dict[str, np.ndarray]:
    text = run(exe, str(seed), threads=threads)
    assert "odd_normal 105" in text  # CURAND_STATUS_LENGTH_NOT_MULTIPLE
    assert "quasi 103" in text  # CURAND_STATUS_TYPE_ERROR
    assert "offset_skip 1" in text and "normal_pair 1" in text and "uniform4 1" in text
    assert "sequence_skip 1" in text
    kinds = {"uniform": np.float32, "second": np.float32, "normal": np.float32, "uniform_d": np.float64, "normal_d": np.float64,
             "bits": np.uint32, "poisson": np.uint32, "device_uniform": np.float32}
    return {name: load(exe, name, dtype) for name, dtype in kinds.items()}


def test_host_generator_ranges_and_moments(curand_exe):
    out = outputs(curand_exe, 1234, threads=2)
    for name in ("uniform", "second", "uniform_d", "device_uniform"):
        values = out[name]
        assert values.min() > 0.0 and values.max() <= 1.0, name  # cuRAND: (0, 1]
        assert abs(values.mean() - 0.5) < 0.01 and abs(values.var() - 1 / 12) < 0.005, name
    assert not np.array_equal(out["uniform"], out["second"])
    assert abs(out["normal"].mean() - 2.0) < 0.05 and abs(out["normal"].std() - 3.0) < 0.05
    assert abs(out["normal_d"].mean() + 1.0) < 0.01 and abs(out["normal_d"].std() - 0.5) < 0.01
    assert abs(out["bits"].astype(np.float64).mean() / 2**32 - 0.5) < 0.01
    assert abs(out["poisson"].mean() - 4.5) < 0.05 and abs(out["poisson"].var() - 4.5) < 0.1
    # Uniforms are not correlated with their neighbours.
    u = out["uniform"].astype(np.float64)
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01


def test_same_seed_same_numbers_whatever_the_thread_count(curand_exe):
    first = outputs(curand_exe, 99, threads=1)
    second = outputs(curand_exe, 99, threads=2)
    other_seed = outputs(curand_exe, 100, threads=2)
    for name in first:
        assert np.array_equal(first[name], second[name]), name
    assert not np.array_equal(first["uniform"], other_seed["uniform"])
    # Device subsequences differ from one another.
    per_thread = first["device_uniform"].reshape(256, 64)
    assert len({row.tobytes() for row in per_thread}) == 256
