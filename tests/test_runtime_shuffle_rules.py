"""The warp shuffles of the lowered kernels' support code (cudacpu::shfl, shfl_up, shfl_down,
shfl_xor) for every width, offset and lane, in a block whose last warp is partial and where some
lanes did not take part: the same values as the general rules (segments by remainder, a source
that did not write reads zero, one outside the segment keeps the caller's value), which the
power-of-two widths CUDA allows now compute with masks instead of divisions."""

from test_runtime_support import build_and_run

PROGRAM = r"""
#include "cuda_runtime.h"
#include "cuda_cpu/lowering_support.h"
#include <cstdio>

using cudacpu::WarpExchange;

// The general rules, spelled with remainders for any width.
static unsigned source(unsigned tid, int in_segment, int w) {
    unsigned lane = tid % 32u;
    return tid - lane + (lane - lane % static_cast<unsigned>(w)) + static_cast<unsigned>(in_segment);
}
static long long lane_value(const WarpExchange& x, unsigned src) {
    return x.written(0, src) ? x.get<long long>(0, src) : 0;
}
static long long ref_shfl(const WarpExchange& x, unsigned tid, int src_lane, int width) {
    int w = width > 0 && width <= 32 ? width : 32;
    return lane_value(x, source(tid, ((src_lane % w) + w) % w, w));
}
static long long ref_up(const WarpExchange& x, unsigned tid, unsigned delta, int width) {
    int w = width > 0 && width <= 32 ? width : 32;
    int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
    if (lane - static_cast<int>(delta) < 0) return x.get<long long>(0, tid);
    return lane_value(x, source(tid, lane - static_cast<int>(delta), w));
}
static long long ref_down(const WarpExchange& x, unsigned tid, unsigned delta, int width) {
    int w = width > 0 && width <= 32 ? width : 32;
    int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
    if (lane + static_cast<int>(delta) >= w) return x.get<long long>(0, tid);
    return lane_value(x, source(tid, lane + static_cast<int>(delta), w));
}
static long long ref_xor(const WarpExchange& x, unsigned tid, int mask, int width) {
    int w = width > 0 && width <= 32 ? width : 32;
    int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
    int src = lane ^ mask;
    if (src < 0 || src >= w) return x.get<long long>(0, tid);
    return lane_value(x, source(tid, src, w));
}

int main() {
    const unsigned n = 80;  // two full warps and a partial one
    WarpExchange x(1, n);
    x.begin(0);
    for (unsigned t = 0; t < n; ++t)
        if (t % 7 != 3) x.put<long long>(0, t, 1000 + t);  // lanes 3, 10, ... did not take part
    const int widths[] = {-4, 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 33, 64};
    const int offsets[] = {-70, -33, -32, -31, -17, -16, -1, 0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 31, 32, 33, 40, 64, 1000};
    long long checked = 0, wrong = 0;
    for (int w : widths)
        for (int o : offsets)
            for (unsigned t = 0; t < n; ++t) {
                if (t % 7 == 3) continue;  // a lane that takes part asks
                unsigned u = static_cast<unsigned>(o);
                bool up_ok = o >= 0 || o <= -64;  // (lane - delta) overflows nowhere
                long long got[4] = {cudacpu::shfl<long long>(x, 0, t, o, w),
                                    up_ok ? cudacpu::shfl_up<long long>(x, 0, t, u, w) : 0,
                                    cudacpu::shfl_down<long long>(x, 0, t, u, w),
                                    cudacpu::shfl_xor<long long>(x, 0, t, o, w)};
                long long want[4] = {ref_shfl(x, t, o, w), up_ok ? ref_up(x, t, u, w) : 0,
                                     ref_down(x, t, u, w), ref_xor(x, t, o, w)};
                for (int k = 0; k < 4; ++k) {
                    ++checked;
                    if (got[k] != want[k] && wrong++ < 10)
                        std::printf("mismatch op %d width %d offset %d tid %u: %lld, want %lld\n", k, w, o, t, got[k], want[k]);
                }
            }
    std::printf("checked %lld wrong %lld\n", checked, wrong);
}
"""


def test_shuffles_follow_the_general_rules_for_every_width_and_offset(tmp_path):
    out = build_and_run(PROGRAM, tmp_path)
    assert " wrong 0" in out, out
    assert int(out.split("checked ")[1].split()[0]) > 10000
