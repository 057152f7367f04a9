"""The CPU CUDA runtime's atomics under concurrent OpenMP threads: totals are exact, old
values are returned, and atomicInc/atomicDec wrap around as CUDA's do."""

from __future__ import annotations

import pytest

from test_runtime_support import build, parse_lines, run

ATOMICS_PROGRAM = r"""
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <omp.h>
#include <cstdio>
#include <vector>

int main() {
    const int n = 200000;
    int i_sum = 0, i_sub = 0, i_max = -1000000, i_min = 1000000, cas_counter = 0, bits_or = 0, bits_and = -1, bits_xor = 0;
    unsigned int u_sum = 0, inc = 0, dec = 0, u_max = 0;
    unsigned long long ull_sum = 0, ull_max = 0;
    long long ll_min = 0;
    float f_sum = 0.0f;
    double d_sum = 0.0;
    __half h_sum = __float2half(0.0f);
    __nv_bfloat16 b_sum = __float2bfloat16(0.0f);
    std::vector<int> inc_seen(10, 0), dec_seen(8, 0);
    int threads_used = 0;
#pragma omp parallel
    {
#pragma omp single
        threads_used = omp_get_num_threads();
#pragma omp for
        for (int i = 0; i < n; ++i) {
            atomicAdd(&i_sum, 3);
            atomicSub(&i_sub, 2);
            atomicAdd(&u_sum, 1u);
            atomicAdd(&ull_sum, 5ull);
            atomicAdd(&f_sum, 1.0f);
            atomicAdd(&d_sum, 0.5);
            atomicMax(&i_max, (i * 7919) % n - n / 2);
            atomicMin(&i_min, (i * 7919) % n - n / 2);
            atomicMax(&u_max, static_cast<unsigned int>(i));
            atomicMax(&ull_max, static_cast<unsigned long long>(i) << 33);
            atomicMin(&ll_min, -static_cast<long long>(i) * 3);
            atomicOr(&bits_or, 1 << (i % 31));
            atomicAnd(&bits_and, ~(1 << (i % 17)));
            atomicXor(&bits_xor, i);
            unsigned int old_inc = atomicInc(&inc, 9u);  // cycles 0..9
            atomicAdd(&inc_seen[old_inc], 1);
            unsigned int old_dec = atomicDec(&dec, 7u);  // 0 -> 7, then 7..0
            atomicAdd(&dec_seen[old_dec], 1);
            // A lock-free increment by compare-and-swap.
            int expected = cas_counter, seen;
            while ((seen = atomicCAS(&cas_counter, expected, expected + 1)) != expected) expected = seen;
            if (i < 2000) {
                atomicAdd(&h_sum, __float2half(1.0f));
                atomicAdd_block(&b_sum, __float2bfloat16(1.0f));
            }
            atomicAdd_system(&i_sum, 0);
        }
    }
    int xor_expected = 0;
    for (int i = 0; i < n; ++i) xor_expected ^= i;
    printf("threads %d\n", threads_used);
    printf("int_add %d int_sub %d\n", i_sum, i_sub);
    printf("uint_add %u ull_add %llu\n", u_sum, ull_sum);
    printf("float_add %.1f double_add %.1f\n", f_sum, d_sum);
    printf("max_min %d %d %u %llu %lld\n", i_max, i_min, u_max, ull_max, ll_min);
    printf("bits %d %d %d\n", bits_or, bits_and, int(bits_xor == xor_expected));
    printf("inc_final %u dec_final %u\n", inc, dec);
    printf("inc_seen");
    for (int v : inc_seen) printf(" %d", v);
    printf("\ndec_seen");
    for (int v : dec_seen) printf(" %d", v);
    printf("\ncas %d\n", cas_counter);
    printf("half_bf16 %g %g\n", __half2float(h_sum), __bfloat162float(b_sum));

    // Return values: the previous contents.
    int x = 5;
    unsigned int w = 10u, z = 0u;
    float f = 1.5f;
    unsigned short s = 7;
    int old_add = atomicAdd(&x, 2), old_exch = atomicExch(&x, 42), old_cas_hit = atomicCAS(&x, 42, 1), old_cas_miss = atomicCAS(&x, 42, 9);
    float old_fexch = atomicExch(&f, 2.5f);
    unsigned int inc_at_limit = atomicInc(&w, 10u), dec_at_zero = atomicDec(&z, 4u);
    unsigned short old_short = atomicCAS(&s, static_cast<unsigned short>(7), static_cast<unsigned short>(8));
    printf("returns %d %d %d %d %d %g %g %u %u %u %u %u %u\n", old_add, old_exch, old_cas_hit, old_cas_miss, x, old_fexch, f,
           inc_at_limit, w, dec_at_zero, z, static_cast<unsigned int>(old_short), static_cast<unsigned int>(s));
    return 0;
}
"""

N = 200_000


@pytest.fixture(scope="module")
def atomics(tmp_path_factory) -> dict[str, list[str]]:
    exe = build({"atomics.cpp": ATOMICS_PROGRAM}, tmp_path_factory.mktemp("atomics"))
    return parse_lines(run(exe, threads=2))


def test_two_threads_ran(atomics):
    assert atomics["threads"] == ["2"]


def test_integer_and_float_totals_are_exact(atomics):
    assert atomics["int_add"] == [str(3 * N), "int_sub", str(-2 * N)]
    assert atomics["uint_add"] == [str(N), "ull_add", str(5 * N)]
    # Integer-valued sums are exact in float below 2^24 and in double.
    assert atomics["float_add"] == [f"{N}.0", "double_add", f"{N // 2}.0"]
    assert atomics["cas"] == [str(N)]
    assert atomics["half_bf16"] == ["2000", "256"]  # bfloat16 stops at 256: 256 + 1 rounds to 256


def test_min_max_and_bit_operations(atomics):
    values = [(i * 7919) % N - N // 2 for i in range(N)]
    assert atomics["max_min"] == [str(max(values)), str(min(values)), str(N - 1), str((N - 1) << 33), str(-3 * (N - 1))]
    assert atomics["bits"] == [str((1 << 31) - 1), str(-1 & ~((1 << 17) - 1)), "1"]


def test_inc_dec_wrap_around_like_cuda(atomics):
    # atomicInc(limit 9) visits 0..9 cyclically; atomicDec(limit 7) goes 0 -> 7 -> 6 ... -> 0 -> 7.
    assert atomics["inc_final"] == [str(N % 10), "dec_final", str((-N) % 8)]
    assert atomics["inc_seen"] == [str(N // 10)] * 10
    assert atomics["dec_seen"] == [str(N // 8)] * 8


def test_return_values_are_the_old_contents(atomics):
    assert atomics["returns"] == ["5", "7", "42", "1", "1", "1.5", "2.5", "10", "0", "0", "4", "7", "8"]
