"""The CPU CUDA runtime's device math: CUDA-only functions against Python's math, conversions
with CUDA's rounding and saturation, integer intrinsics against bit-level models, and the
min/max overload set."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from test_runtime_support import build, parse_lines, run

MATH_PROGRAM = r"""
#include <cuda_runtime.h>
#include <cstdio>
#include <algorithm>
using namespace std;  // CUDA's ::min/::max must win over std::min/max without ambiguity

static void show(const char* name, double value) { printf("%s %a\n", name, value); }

int main() {
    // Fast intrinsics and CUDA-only functions (printed exactly, compared with tolerance).
    show("expf", __expf(1.3f));
    show("exp10f", __exp10f(1.7f));
    show("logf", __logf(7.5f));
    show("log2f", __log2f(7.5f));
    show("log10f", __log10f(7.5f));
    show("powf", __powf(2.5f, 1.7f));
    show("sinf", __sinf(0.7f));
    show("cosf", __cosf(0.7f));
    show("tanf", __tanf(0.7f));
    float s = 0, c = 0;
    __sincosf(0.3f, &s, &c);
    show("sincos_s", s);
    show("sincos_c", c);
    sincosf(0.4f, &s, &c);
    show("sincosf_s", s);
    show("fdividef", __fdividef(7.0f, 3.0f));
    show("rsqrtf", rsqrtf(2.0f));
    show("rsqrt", rsqrt(2.0));
    show("rcbrtf", rcbrtf(27.0f));
    show("exp10f_plain", exp10f(2.0f));
    show("normcdff", normcdff(1.0f));
    show("normcdf", normcdf(-2.0));
    show("normcdfinvf", normcdfinvf(0.975f));
    show("normcdfinv", normcdfinv(1e-10));
    show("erfinvf", erfinvf(0.5f));
    show("erfinv", erfinv(-0.999));
    show("erfcinv", erfcinv(1e-30));
    show("erfcxf", erfcxf(3.0f));
    show("erfcx_big", erfcx(40.0));
    show("sinpif", sinpif(0.25f));
    show("cospi", cospi(1.0 / 3.0));
    show("norm3df", norm3df(1.0f, 2.0f, 2.0f));
    show("rhypotf", rhypotf(3.0f, 4.0f));
    show("saturate_lo", __saturatef(-0.5f));
    show("saturate_hi", __saturatef(1.5f));
    show("saturate_nan", __saturatef(NAN));
    show("saturate_mid", __saturatef(0.25f));
    show("fmaf_rn", __fmaf_rn(1.0f + 1.0f / 4096, 1.0f - 1.0f / 4096, -1.0f));
    show("frcp_rn", __frcp_rn(3.0f));
    show("fsqrt_rn", __fsqrt_rn(2.0f));

    // Conversions.
    printf("f2i_rn %d %d %d %d\n", __float2int_rn(2.5f), __float2int_rn(3.5f), __float2int_rn(-2.5f), __float2int_rn(-0.7f));
    printf("f2i_dirs %d %d %d %d %d %d\n", __float2int_rz(-2.7f), __float2int_rd(-2.2f), __float2int_ru(2.2f),
           __float2int_rz(2.7f), __float2int_rd(2.7f), __float2int_ru(-2.7f));
    printf("f2i_sat %d %d %d %u %u\n", __float2int_rn(1e10f), __float2int_rn(-1e10f), __float2int_rn(NAN),
           __float2uint_rn(-5.0f), __float2uint_rn(1e12f));
    printf("d2ll %lld %lld %llu\n", __double2ll_rn(-1e30), __double2ll_rn(12345678901.5), __double2ull_rn(1e30));
    printf("bits %d %a %u %a %lld %a\n", __float_as_int(1.0f), __int_as_float(0x40490fdb), __float_as_uint(-2.0f),
           __uint_as_float(0x3f800001u), __double_as_longlong(1.0), __longlong_as_double(0x4000000000000000LL));
    printf("hilo %d %d %a\n", __double2hiint(2.0), __double2loint(2.0), __hiloint2double(0x3ff00000, 1));
    printf("d2f %a %a %a %a\n", __double2float_rn(0.1), __double2float_rz(0.1), __double2float_rd(-0.1), __double2float_ru(0.1));
    printf("i2f %a %a %a\n", __int2float_rn(16777217), __int2float_rz(16777219), __int2float_ru(16777217));

    // Integer intrinsics.
    printf("popc %d %d %d %d\n", __popc(0xF0F0F0F0u), __popcll(0xFFFFFFFFFFFFFFFFull), __clz(0), __clz(1));
    printf("clzll %d %d ffs %d %d %d\n", __clzll(0), __clzll(1LL << 40), __ffs(0), __ffs(0x80), __ffsll(1LL << 50));
    printf("brev %u %llu\n", __brev(0x12345678u), __brevll(0x0123456789ABCDEFull));
    printf("mul %d %u %d %u %lld %llu\n", __mul24(-3, 0x7FFFFF), __umul24(0x1FFFFFFu, 3u), __mulhi(-2000000000, 2000000000),
           __umulhi(4000000000u, 4000000000u), __mul64hi(-(1LL << 62), 12345), __umul64hi(~0ull, ~0ull));
    printf("sad %u %u\n", __sad(-5, 7, 100u), __usad(3u, 10u, 1u));
    printf("byte_perm %u %u %u\n", __byte_perm(0x33221100u, 0x77665544u, 0x5410u), __byte_perm(0x33221100u, 0x77665544u, 0x0123u),
           __byte_perm(0x11223344u, 0xAABBCCDDu, 0x7777u));
    printf("funnel %u %u %u %u\n", __funnelshift_l(0x80000000u, 0x1u, 1u), __funnelshift_r(0x1u, 0x3u, 1u),
           __funnelshift_lc(0xFFu, 0x1u, 40u), __funnelshift_r(0x1u, 0x3u, 33u));
    printf("halving %d %d %d %u\n", __hadd(2147483647, 1), __rhadd(-3, 0), __hadd(-3, 0), __urhadd(4294967295u, 4294967295u));
    printf("dp4a %d\n", __dp4a(0x01FF0203, 0x04030201, 10));

    // min / max: CUDA's overloads, including the signed/unsigned mixes.
    printf("minmax %d %u %u %lld %llu %g %g\n", min(-1, 2), min(-1, 2u), max(-1, 2u), max(-5LL, 3LL),
           min(18446744073709551615ull, 7LL), min(1.5f, 2.0f), max(1.5f, 2.0));
    printf("minmax_size_t %zu %ld\n", max(size_t(3), size_t(9)), min(4L, -2L));
    printf("ldg %g\n", __ldg(&s) - s);
    return 0;
}
"""


@pytest.fixture(scope="module")
def math_results(tmp_path_factory) -> dict[str, list[str]]:
    exe = build({"math.cpp": MATH_PROGRAM}, tmp_path_factory.mktemp("math"))
    return parse_lines(run(exe, threads=1))


def value(results, name) -> float:
    return float.fromhex(results[name][0])


def f32(x: float) -> float:
    return float(np.float32(x))


def erfcx_asymptotic(x: float, terms: int = 12) -> float:
    """exp(x^2) erfc(x) for large x: 1/(x sqrt(pi)) sum (-1)^n (2n-1)!! / (2x^2)^n."""
    total, term = 0.0, 1.0
    for n in range(terms):
        total += term
        term *= -(2 * n + 1) / (2 * x * x)
    return total / (x * math.sqrt(math.pi))


APPROX = {
    "expf": math.exp(f32(1.3)),
    "exp10f": 10 ** f32(1.7),
    "logf": math.log(7.5),
    "log2f": math.log2(7.5),
    "log10f": math.log10(7.5),
    "powf": f32(2.5) ** f32(1.7),
    "sinf": math.sin(f32(0.7)),
    "cosf": math.cos(f32(0.7)),
    "tanf": math.tan(f32(0.7)),
    "sincos_s": math.sin(f32(0.3)),
    "sincos_c": math.cos(f32(0.3)),
    "sincosf_s": math.sin(f32(0.4)),
    "fdividef": 7 / 3,
    "rsqrtf": 1 / math.sqrt(2),
    "rsqrt": 1 / math.sqrt(2),
    "rcbrtf": 1 / 3,
    "exp10f_plain": 100.0,
    "normcdff": 0.5 * math.erfc(-1 / math.sqrt(2)),
    "normcdf": 0.5 * math.erfc(2 / math.sqrt(2)),
    "normcdfinvf": 1.959963984540054,
    "normcdfinv": -6.361340902404056,
    "erfinvf": 0.4769362762044699,
    "erfinv": -2.326753765513525,
    "erfcxf": math.exp(9) * math.erfc(3),
    "erfcx_big": erfcx_asymptotic(40.0),
    "sinpif": math.sqrt(0.5),
    "cospi": 0.5,
    "norm3df": 3.0,
    "rhypotf": 0.2,
    "frcp_rn": f32(1 / 3),
    "fsqrt_rn": f32(math.sqrt(2)),
}


@pytest.mark.parametrize("name", sorted(APPROX))
def test_math_functions_match_reference(math_results, name):
    expected = APPROX[name]
    assert value(math_results, name) == pytest.approx(expected, rel=2e-6, abs=1e-12), name


def test_erfcinv_keeps_precision_in_the_tail(math_results):
    x = value(math_results, "erfcinv")
    assert math.erfc(x) == pytest.approx(1e-30, rel=1e-9)


def test_saturate_and_fused_multiply_add(math_results):
    assert [value(math_results, k) for k in ("saturate_lo", "saturate_hi", "saturate_nan", "saturate_mid")] == [0.0, 1.0, 0.0, 0.25]
    # (1 + 2^-12)(1 - 2^-12) - 1 = -2^-24 exactly only when fused (unfused rounds the product to 1).
    assert value(math_results, "fmaf_rn") == -(2.0**-24)


def test_float_to_int_conversions_round_and_saturate_like_cuda(math_results):
    assert math_results["f2i_rn"] == ["2", "4", "-2", "-1"]
    assert math_results["f2i_dirs"] == ["-2", "-3", "3", "2", "2", "-2"]
    assert math_results["f2i_sat"] == ["2147483647", "-2147483648", "0", "0", "4294967295"]
    assert math_results["d2ll"] == ["-9223372036854775808", "12345678902", "18446744073709551615"]


def bits_of_float(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_bit_casts_and_directed_float_rounding(math_results):
    bits = math_results["bits"]
    assert int(bits[0]) == bits_of_float(1.0)
    assert float.fromhex(bits[1]) == f32(3.1415927410125732)
    assert int(bits[2]) == bits_of_float(-2.0)
    assert float.fromhex(bits[3]) == struct.unpack("<f", struct.pack("<I", 0x3F800001))[0]
    assert int(bits[4]) == struct.unpack("<q", struct.pack("<d", 1.0))[0]
    assert float.fromhex(bits[5]) == 2.0
    assert math_results["hilo"][:2] == ["1073741824", "0"]
    assert float.fromhex(math_results["hilo"][2]) == 1.0 + 2.0**-52
    rn, rz, rd, ru = (float.fromhex(v) for v in math_results["d2f"])
    tenth = np.float32(0.1)  # nearest float to 0.1, which is above 0.1
    assert rn == float(tenth) and ru == float(tenth)
    assert rz == float(np.nextafter(tenth, np.float32(0)))
    assert rd == -float(tenth)
    rn_int, rz_int, ru_int = (float.fromhex(v) for v in math_results["i2f"])
    assert (rn_int, rz_int, ru_int) == (16777216.0, 16777218.0, 16777218.0)


def brev32(x: int) -> int:
    return int(f"{x:032b}"[::-1], 2)


def byte_perm(x: int, y: int, s: int) -> int:
    data = (y << 32 | x).to_bytes(8, "little")
    return int.from_bytes(bytes(data[(s >> (4 * i)) & 7] for i in range(4)), "little")


def test_integer_intrinsics_match_bit_models(math_results):
    assert math_results["popc"] == ["16", "64", "32", "31"]
    assert math_results["clzll"] == ["64", "23", "ffs", "0", "8", "51"]
    assert math_results["brev"] == [str(brev32(0x12345678)), str(int(f"{0x0123456789ABCDEF:064b}"[::-1], 2))]
    mul24 = ((-3) * 0x7FFFFF) & 0xFFFFFFFF
    mul24 = mul24 - (1 << 32) if mul24 >= 1 << 31 else mul24
    assert math_results["mul"] == [
        str(mul24),
        str((0xFFFFFF * 3) & 0xFFFFFFFF),
        str((-2000000000 * 2000000000) >> 32),
        str((4000000000 * 4000000000) >> 32),
        str((-(1 << 62) * 12345) >> 64),
        str(((2**64 - 1) ** 2) >> 64),
    ]
    assert math_results["sad"] == ["112", "8"]
    assert math_results["byte_perm"] == [
        str(byte_perm(0x33221100, 0x77665544, 0x5410)),
        str(byte_perm(0x33221100, 0x77665544, 0x0123)),
        str(byte_perm(0x11223344, 0xAABBCCDD, 0x7777)),
    ]
    assert math_results["funnel"] == [str(0x3), str(0x80000000), str(0xFF), str(0x80000000)]
    assert math_results["halving"] == ["1073741824", "-1", "-2", "4294967295"]
    # bytes of a, low first: 3, 2, -1, 1; of b: 1, 2, 3, 4
    assert math_results["dp4a"] == [str(10 + 3 * 1 + 2 * 2 + (-1) * 3 + 1 * 4)]


def test_min_max_overloads_follow_cuda(math_results):
    assert math_results["minmax"] == ["-1", "2", "4294967295", "3", "7", "1.5", "2"]
    assert math_results["minmax_size_t"] == ["9", "-2"]
    assert math_results["ldg"] == ["0"]


HOST_FALLBACKS_PROGRAM = r"""
#include <cuda_runtime.h>
#include <cstdio>
// What helper_math.h (CUDA samples) defines for the host when __CUDACC__ is undefined.
#ifndef __CUDACC__
inline float fminf(float a, float b) { return a < b ? a : b; }
inline float fmaxf(float a, float b) { return a > b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(int a, int b) { return a < b ? a : b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
#endif
template <class T>
T clamp(T v, T lo, T hi) { return max(lo, min(v, hi)); }
// helper_math.h's vector overloads call min on unsigned components: CUDA's unsigned min.
inline uint2 min(uint2 a, uint2 b) { return make_uint2(min(a.x, b.x), min(a.y, b.y)); }
int main() {
    uint2 low = min(make_uint2(4000000000u, 1u), make_uint2(3u, 2u));
    printf("%d %d %g %u %g %u %u\n", clamp(7, 0, 5), max(-3, 2), rsqrtf(4.0f), min(-1, 3u), max(1.0f, 2.5), low.x, low.y);
    return 0;
}
"""


def test_host_fallback_definitions_of_cuda_functions_coexist(tmp_path):
    exe = build({"fallbacks.cpp": HOST_FALLBACKS_PROGRAM}, tmp_path)
    assert run(exe).split() == ["5", "2", "0.5", "3", "2.5", "3", "1"]
