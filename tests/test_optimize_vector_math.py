"""tools/optimize/vector_math.py: calls of expf, logf, ... in vectorized loops made to glibc's vector
math library, only where the task's tolerance allows its few ulp; and that those few ulp are what
this machine's libmvec gives. Real g++, real glibc, real sandbox; no timing (speed:
scripts/bench_speed.py --corpus --only-sync; softmax_rows 1.65x -> 2.34x the faithful lowering
with specialize_parallel and stride_loops, measured in one process)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tools.build import DEFAULT_CXXFLAGS
from tools.cuda import lower_task, runtime_include_dir
from tools.optimize.base import Context
from tools.optimize.passes.specialize import SPECIALIZE_MEMBERS as SPECIALIZE, specialize, specialize_parallel
from tools.optimize.passes.stride_loops import stride_loops
from tools.optimize.passes.vector_math import MIN_RTOL, vector_math
from tools.spec import load_task
from tools.verify import check

CORPUS = Path(__file__).parent / "kernels"
SEEDS = [8642, 8643]


def _softmax(rtol=None):
    task = load_task(CORPUS / "softmax_rows" / "task.json")
    if rtol is not None:
        task = task.model_copy(update={"tolerance": task.tolerance.model_copy(update={"rtol": rtol})})
    return task


def test_softmax_calls_the_vector_expf_and_stays_correct(box, tmp_path):
    task = _softmax()
    ctx = Context(task)
    members = tuple(m for m in SPECIALIZE if m not in ("serial_small_grids", "vector_math"))  # its loops vectorized
    variant = vector_math(ctx, stride_loops(ctx, specialize(ctx, lower_task(task), members)))
    assert variant is not None and "#pragma omp declare simd notinbranch\nfloat expf(float) noexcept;" in variant
    report = check(task, variant, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()
    source = tmp_path / "k.cpp"
    source.write_text(variant)
    subprocess.run(["g++", *DEFAULT_CXXFLAGS, "-fPIC", "-fno-semantic-interposition", "-c", f"-I{runtime_include_dir()}",
                    str(source), "-o", str(tmp_path / "k.o")], check=True)
    symbols = subprocess.run(["nm", str(tmp_path / "k.o")], capture_output=True, text=True, check=True).stdout
    assert re.search(r"_ZGV[bcde]N\d+v_expf", symbols), symbols  # a vectorized loop calls libmvec's expf


@pytest.mark.parametrize("rtol, applies", [(1e-4, True), (MIN_RTOL, True), (1e-6, False), (0.0, False)])
def test_only_where_the_tolerance_allows_a_few_ulp(rtol, applies):
    task = _softmax(rtol)
    assert (vector_math(Context(task), lower_task(task)) is not None) == applies


def test_specialize_brings_it_along_and_it_is_not_applied_twice():
    task = _softmax()
    ctx = Context(task)
    variant = specialize_parallel(ctx, lower_task(task))
    assert "float expf(float) noexcept;" in variant and vector_math(ctx, variant) is None


def test_kernels_without_math_calls_are_left_alone():
    task = load_task(CORPUS / "reduce_tree_shared" / "task.json")
    assert vector_math(Context(task), lower_task(task)) is None


ULP = r"""
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
extern "C" {
#pragma omp declare simd notinbranch
float expf(float) noexcept;
#pragma omp declare simd notinbranch
float logf(float) noexcept;
}
__attribute__((noinline)) void vexp(float* __restrict a, const float* __restrict b, int n) {
  for (int i = 0; i < n; ++i) a[i] = expf(b[i]);
}
__attribute__((noinline)) void vlog(float* __restrict a, const float* __restrict b, int n) {
  for (int i = 0; i < n; ++i) a[i] = logf(b[i]);
}
static int ulps(float a, float b) { int32_t x, y; memcpy(&x, &a, 4); memcpy(&y, &b, 4); return std::abs(x - y); }
int main() {
  const int n = 1 << 20;
  static float x[n], e[n], l[n];
  for (int i = 0; i < n; ++i) x[i] = -80.0f + 160.0f * (float)i / n;
  vexp(e, x, n);
  for (int i = 0; i < n; ++i) x[i] = std::fabs(x[i]) + 1e-30f;
  vlog(l, x, n);
  int worst = 0;
  for (int i = 0; i < n; ++i) {
    worst = std::max(worst, ulps(l[i], std::log(x[i])));
    float xe = -80.0f + 160.0f * (float)i / n;
    worst = std::max(worst, ulps(e[i], std::exp(xe)));
  }
  float special[8] = {NAN, INFINITY, -INFINITY, 89.0f, -104.0f, 0.0f, -0.0f, 1.0f}, out[8];
  vexp(out, special, 8);
  bool same = std::isnan(out[0]) && out[1] == INFINITY && out[2] == 0.0f && out[3] == INFINITY && out[4] == 0.0f
              && out[5] == 1.0f && out[6] == 1.0f;
  printf("%d %d\n", worst, same ? 1 : 0);
}
"""


def test_this_machines_vector_functions_are_a_few_ulp_from_the_scalar_ones(tmp_path):
    # MIN_RTOL is some 80 ulp of a float: 20 times what libmvec's expf and logf differ by here
    (tmp_path / "ulp.cpp").write_text(ULP)
    subprocess.run(["g++", *DEFAULT_CXXFLAGS, str(tmp_path / "ulp.cpp"), "-o", str(tmp_path / "ulp")], check=True)
    run = subprocess.run([str(tmp_path / "ulp")], capture_output=True, text=True, check=True)
    worst, same = map(int, run.stdout.split())
    assert 0 < worst <= 4 and same  # 0 would mean the vector versions were not called at all
    assert worst * 2.0 ** -23 * 20 <= MIN_RTOL * 1.2
