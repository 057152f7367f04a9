"""tools.optimize.sync_transforms: each transformation of barrier/shuffle kernels applies to the
shape it knows (the text asserted), gives results the verifier accepts on fresh seeds with 1 and
2 threads, and refuses (None) a near-miss shape where it would be unsafe. Real g++, real sandbox;
no timing (speed: scripts/bench_speed.py --corpus --only-sync)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.cuda import lower_task
from tools.optimize.analysis import code as C
from tools.optimize.base import Context
from tools.optimize.passes.direct_shuffles import direct_shuffles
from tools.optimize.passes.live_lanes import live_lanes
from tools.optimize.passes.own_lane_simd import own_lane_simd
from tools.optimize.passes.sync_transforms import (
    SYNC_TRANSFORMS, lane_arrays, perthread_stack, shared_atomics_plain, sync_together, warp_rounds,
)
from tools.optimize.pipeline import TRANSFORMS
from tools.spec import load_task
from tools.verify import check

KERNELS = Path(__file__).resolve().parent / "kernels"
SEEDS = [1234, 1235]  # not the tasks' own seeds


def _lowered(name: str):
    task = load_task(KERNELS / name / "task.json")
    return task, lower_task(task)


@pytest.fixture(scope="module")
def matvec():
    return _lowered("matvec_warp_per_row")


def test_sync_transforms_are_searched_the_composite_first_and_named():
    names = [t.name for t in TRANSFORMS]
    assert names[:3] == ["matrix_products", "block_scans", "sync_together"]  # whole launches replaced come before their parts
    assert all(t.name in names for t in SYNC_TRANSFORMS)
    assert names.index("warp_rounds") < names.index("lane_arrays")  # rounds first: lane_arrays takes the exchange
    assert all(t.what and t.apply.__doc__ for t in SYNC_TRANSFORMS)


def test_warp_rounds_runs_each_warp_on_a_lane_array_and_is_correct(matvec, box):
    task, faithful = matvec
    new = warp_rounds(Context(task), faithful)
    assert new is not None
    kernel = C.kernel_named(new, "matvec_kernel").text(new)
    assert "for (unsigned int cudaopt_w = 0; cudaopt_w < nthreads; cudaopt_w += 32)" in kernel
    assert "cudaopt_got[cudaopt_l] = cudaopt::lane_shfl_down(cudaopt_in, cudaopt_l, off);" in kernel
    assert "acc[tid] += cudaopt_got[cudaopt_l];" in kernel
    assert "warp.begin(0)" not in kernel and "cudacpu::shfl_down" not in kernel
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_warp_rounds_refuses_rounds_that_write_memory_other_lanes_see(matvec):
    task, faithful = matvec
    read = "acc[tid] += cudacpu::shfl_down<float>(warp, 0, tid, off);"
    assert read in faithful
    # a global store inside the rounds: warp order would decide the last writer
    assert warp_rounds(Context(task), faithful.replace(read, read + " y[0] = acc[tid];")) is None
    # a store through a per-thread pointer: it may lead to shared memory
    decl = "cudacpu::PerThread<float> acc(nthreads);"
    assert decl in faithful
    pointer = faithful.replace(decl, decl + " cudacpu::PerThread<float *> p(nthreads);")
    assert warp_rounds(Context(task), pointer.replace(read, read + " p[tid][0] = acc[tid];")) is None
    # a width that is not a power of two reads across warps in the emulation
    odd = read.replace("tid, off)", "tid, off, 24)")
    assert warp_rounds(Context(task), faithful.replace(read, odd)) is None


def test_lane_arrays_turn_votes_into_plain_arrays_and_stay_correct(box):
    task, faithful = _lowered("warp_vote")  # ballot, any and all (which needs the written flags)
    new = lane_arrays(Context(task), faithful)
    assert new is not None
    kernel = C.kernel_named(new, "vote_kernel").text(new)
    assert "cudacpu::WarpExchange" not in kernel
    assert "cudaopt::Lanes<int> warp_0(nthreads);" in kernel
    assert "cudaopt::Lanes<int, true> warp_2(nthreads);" in kernel
    assert "= cudaopt::participants(warp_2, cudaopt_w, 0xffffffffu);" in kernel  # __all_sync: who took part
    assert "b[tid] = (cudaopt_bits_1[tid / 32u] & (mask[tid]));" in kernel  # one ballot per warp, not per lane
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_lane_arrays_count_a_block_once_and_stay_correct(box):
    task, faithful = _lowered("syncthreads_count_or_and")  # __syncthreads_count, _or and _and
    new = lane_arrays(Context(task), faithful)
    assert new is not None
    kernel = C.kernel_named(new, "sync_reduce_kernel").text(new)
    assert "const int cudaopt_count_1 = cudaopt::block_count(warp_0);" in kernel
    assert "c[tid] = cudaopt_count_1;" in kernel
    assert "block_participants(warp_2)" in kernel and "cudaopt::Lanes<int, true> warp_2(nthreads);" in kernel
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_lane_arrays_refuse_an_exchange_read_by_an_unknown_intrinsic(matvec):
    task, faithful = matvec
    read = "cudacpu::shfl_down<float>(warp, 0, tid, off)"
    unknown = faithful.replace(read, "cudacpu::warp_reduce<float>(warp, 0, tid, 0xffffffffu, std::plus<float>())")
    assert lane_arrays(Context(task), unknown) is None
    # the value read as another type than the one written: a reinterpretation it cannot keep
    assert lane_arrays(Context(task), faithful.replace(read, read.replace("<float>", "<int>"))) is None


def test_perthread_stack_keeps_fill_and_loop_flags_and_is_correct(box):
    task, faithful = _lowered("barrier_while_break")  # in_loop.fill, any_thread, exited
    new = perthread_stack(Context(task), faithful)
    assert new is not None
    kernel = C.kernel_named(new, "collatz_kernel").text(new)
    assert "cudacpu::PerThread" not in kernel
    assert "cudaopt::Flag in_loop[128] = {};" in kernel
    assert "cudaopt::any_thread(in_loop, nthreads" in kernel
    assert 'if (nthreads > 128u) cudacpu::unsupported(' in kernel
    assert "const std::size_t tid = (std::size_t(tz) * blockDim.y + ty) * blockDim.x + tx;" in kernel  # affine index
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_perthread_stack_refuses_copies_used_other_than_by_index(matvec):
    task, faithful = matvec
    assert "acc[tid] = 0.0f;" in faithful
    escaped = faithful.replace("acc[tid] = 0.0f;", "acc[tid] = 0.0f; float& first = *&acc[0]; (void)first; auto& whole = acc;")
    assert perthread_stack(Context(task), escaped) is None
    no_launch = task.model_copy(update={"launches": []})
    assert perthread_stack(Context(no_launch), faithful) is None


def test_shared_atomics_plain_leaves_global_atomics_and_is_correct(box):
    task, faithful = _lowered("histogram_shared_atomics")
    new = shared_atomics_plain(Context(task), faithful)
    assert new is not None
    kernel = C.kernel_named(new, "hist_shared_kernel").text(new)
    assert "cudaopt::plain::atomicAdd(&local[data[i] % NBINS], 1u);" in kernel
    assert "atomicAdd(&bins[b], local[b]);" in kernel and "plain::atomicAdd(&bins" not in kernel  # global: other blocks
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_shared_atomics_plain_refuses_atomics_in_a_simd_thread_loop():
    task, faithful = _lowered("histogram_shared_atomics")
    loop = "for (unsigned int tx = 0; tx < blockDim.x; ++tx) {\n                            const uint3 threadIdx = make_uint3(tx, ty, tz);\n" \
           "                            for (int i = blockIdx.x"
    assert loop in faithful
    assert shared_atomics_plain(Context(task), faithful.replace(loop, "#pragma omp simd\n" + loop)) is None


@pytest.fixture(scope="module")
def two_stage():
    """row_rms_two_stage with lane arrays and stack copies: the shape direct_shuffles reads."""
    task, faithful = _lowered("row_rms_two_stage")
    return task, perthread_stack(Context(task), lane_arrays(Context(task), faithful))


def test_direct_shuffles_read_the_senders_copies_and_stay_correct(two_stage, box):
    task, code = two_stage
    new = direct_shuffles(Context(task), code)
    assert new is not None
    kernel = C.kernel_named(new, "row_rms_kernel").text(new)
    assert "cudaopt::shfl" not in kernel and "cudaopt::Lanes" not in kernel and ".put(tid" not in kernel
    assert "cudaopt::Id<float[1]> lane_sum[160] = {};" in kernel  # 32 zero lanes past the largest block
    assert "t0[tid][0] = static_cast<float>(((tid % 32u) + 16u < 32u ? lane_sum[tid + 16][0] : lane_sum[tid][0]));" in kernel
    assert "warp_sum[tid][0] = static_cast<float>(warp_sum[tid - tid % 32u + 0][0]);" in kernel  # lane 0 broadcast
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()
    together = sync_together(Context(task), _lowered("row_rms_two_stage")[1])
    assert "cudaopt::shfl" not in C.kernel_named(together, "row_rms_kernel").text(together)


def test_direct_shuffles_refuse_reads_the_loop_order_would_change(two_stage):
    task, code = two_stage
    read = "t0[tid][0] = cudaopt::shfl_down(warp_0, tid, 16, 32);"
    assert read in code

    def kept(variant: str, call: str = "cudaopt::shfl_down(warp_0, tid, 16, 32)") -> bool:
        new = direct_shuffles(Context(task), variant)
        return new is not None and call in new

    # the reading loop writes another thread's copy: a later source may already have changed
    assert kept(code.replace(read, read + " lane_sum[tid + 1][0] = 0.0f;"))
    # the thread changes its own copy before reading: an out-of-segment read would see the new value
    assert kept(code.replace(read, "lane_sum[tid][0] = 1.0f; " + read))
    # the read sits in a loop of its own: later iterations would see the loop's writes
    assert kept(code.replace(read, "for (int r = 0; r < 2; ++r) { " + read + " }"))
    # a width that is not a power of two: segments the select does not model
    assert kept(code.replace(read, read.replace("16, 32)", "16, 24)")), "cudaopt::shfl_down(warp_0, tid, 16, 24)")
    # the broadcast's loop writes the copy other than as the assignment of the read
    bcast = "warp_sum[tid][0] = cudaopt::shfl(warp_7, tid, 0, 32);"
    assert bcast in code
    new = direct_shuffles(Context(task), code.replace(bcast, bcast + " warp_sum[tid][0] += 1.0f;"))
    assert "cudaopt::shfl(warp_7, tid, 0, 32)" in new


def test_live_lanes_compute_only_the_lanes_read_later_and_stay_correct(two_stage, box):
    task, code = two_stage
    direct = direct_shuffles(Context(task), code)
    new = live_lanes(Context(task), direct)
    assert new is not None
    kernel = C.kernel_named(new, "row_rms_kernel").text(new)
    # stage one: 16 + 8 + 4 + 2 + 1 lanes per warp; stage two (read through a lane-0 broadcast): 2 + 1
    for lanes in (16, 8, 4, 2, 1):
        assert f"const std::size_t cudaopt_n = nthreads - cudaopt_w < {lanes}u ? nthreads - cudaopt_w : {lanes}u;" in kernel
        assert f"static_cast<float>((cudaopt_l + {lanes}u < 32u ? lane_sum[tid + {lanes}][0]" in kernel
    assert kernel.count("are read later") == 7
    # the lane-0 store that followed the last step keeps its own thread loop
    assert "staging[((int)threadIdx.x) >> 5] = lane_sum[tid][0];" in kernel
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_live_lanes_refuse_where_left_out_lanes_may_be_read(two_stage):
    task, code = two_stage
    direct = direct_shuffles(Context(task), code)
    bcast = "warp_sum[tid][0] = static_cast<float>(warp_sum[tid - tid % 32u + 0][0]);"
    assert bcast in direct
    # every lane of the first stage's sums read afterwards: that chain must stay whole
    read_all = live_lanes(Context(task), direct.replace(bcast, bcast + " y[tid] = lane_sum[tid][0];"))
    assert read_all is not None and "only lanes below 16" not in read_all and "only lanes below 2 " in read_all
    # a lane-0 statement that reads another lane
    store = "staging[((int)threadIdx.x) >> 5] = lane_sum[tid][0];"
    assert store in direct
    other = live_lanes(Context(task), direct.replace(store, store.replace("lane_sum[tid]", "lane_sum[tid + 16]")))
    assert other is None or "only lanes below 16" not in other
    # the steps' temporary used elsewhere
    assert live_lanes(Context(task), direct.replace(bcast, bcast + " y[tid] = t0[tid][0];")) is None
    # rows of threads that do not fill whole warps: threadIdx.x % 32 == 0 is not lane 0 of a warp
    two_d = task.model_copy(update={"launches": [task.launches[0].model_copy(update={"block": [48, 2, 1]})]})
    assert live_lanes(Context(two_d), direct) is None


def _nest(statements: str) -> str:
    return ("    for (unsigned int tz = 0; tz < blockDim.z; ++tz)\n"
            "        for (unsigned int ty = 0; ty < blockDim.y; ++ty)\n"
            "            for (unsigned int tx = 0; tx < blockDim.x; ++tx) {\n"
            "                const uint3 threadIdx = make_uint3(tx, ty, tz);\n"
            "                const std::size_t tid = (std::size_t(tz) * blockDim.y + ty) * blockDim.x + tx;\n"
            f"                {statements}\n"
            "            }\n")


def test_live_lanes_prune_a_chain_only_where_a_later_one_rereads_fresh_values(two_stage):
    task, _ = two_stage
    step = ("t[tid][0] = static_cast<float>(((tid % 32u) + 1u < 32u ? v[tid + 1][0] : v[tid][0])); "
            "v[tid][0] = (v[tid][0] + t[tid][0]); if (((int)threadIdx.x) == 0) { y[0] = v[tid][0]; }")
    full_write = "v[tid][0] = y[tid];"

    def unit(*nests: str) -> str:
        return ("// CUDA kernel k\nvoid k(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, float* y) {\n"
                "    const unsigned int nthreads = blockDim.x * blockDim.y * blockDim.z;\n"
                "    cudaopt::Id<float[1]> v[96] = {};\n    cudaopt::Id<float[1]> t[64] = {};\n"
                + "".join(_nest(n) for n in nests) + "}\n")

    ctx = Context(task.model_copy(update={"launches": [task.launches[0].model_copy(update={"kernel": "k", "block": [64, 1, 1]})]}))
    # the second chain reads every lane the first one would leave stale: only the second is pruned
    stale = live_lanes(ctx, unit(full_write, step, step))
    assert stale is not None and stale.count("only lanes below 1 are read later") == 1
    assert stale.index("only lanes below 1") > stale.index("v[tid][0] = (v[tid][0] + t[tid][0]);")
    # with v written in full between them, both are
    fresh = live_lanes(ctx, unit(full_write, step, full_write, step))
    assert fresh is not None and fresh.count("only lanes below 1 are read later") == 2


# TVM's column sums of graph kernels: a loop around a two-stage block reduction in which the second
# stage reloads only the per-warp sums (`threadIdx.x < 8`) and only thread 0 reads the result.
COLUMN_SUMS = r"""
extern "C" __global__ void __launch_bounds__(256) col_sums_kernel(float* __restrict__ x, float* __restrict__ out) {
  __shared__ float staging[8];
  __shared__ float result[1];
  __shared__ float sums[40];
  float in_thread[1]; float red0[1]; float t0[1]; unsigned mask0[1];
  float red1[1]; float t1[1]; unsigned mask1[1];
  for (int c = 0; c < 40; ++c) {
    in_thread[0] = 0.0f;
    if (((int)threadIdx.x) < 18) {
      in_thread[0] = (in_thread[0] + x[((((int)threadIdx.x) * 40) + c)]);
    }
    red0[0] = in_thread[0];
    mask0[0] = __activemask();
    t0[0] = __shfl_down_sync(mask0[0], red0[0], 16, 32);
    red0[0] = (red0[0] + t0[0]);
    t0[0] = __shfl_down_sync(mask0[0], red0[0], 8, 32);
    red0[0] = (red0[0] + t0[0]);
    t0[0] = __shfl_down_sync(mask0[0], red0[0], 4, 32);
    red0[0] = (red0[0] + t0[0]);
    t0[0] = __shfl_down_sync(mask0[0], red0[0], 2, 32);
    red0[0] = (red0[0] + t0[0]);
    t0[0] = __shfl_down_sync(mask0[0], red0[0], 1, 32);
    red0[0] = (red0[0] + t0[0]);
    if ((((int)threadIdx.x) % 32) == 0) {
      staging[(((int)threadIdx.x) >> 5)] = red0[0];
    }
    __syncthreads();
    if (((int)threadIdx.x) < 8) {
      red1[0] = staging[((int)threadIdx.x)];
    }
    mask1[0] = __activemask();
    t1[0] = __shfl_down_sync(mask1[0], red1[0], 4, 32);
    red1[0] = (red1[0] + t1[0]);
    t1[0] = __shfl_down_sync(mask1[0], red1[0], 2, 32);
    red1[0] = (red1[0] + t1[0]);
    t1[0] = __shfl_down_sync(mask1[0], red1[0], 1, 32);
    red1[0] = (red1[0] + t1[0]);
    if (((int)threadIdx.x) == 0) {
      ((volatile float*)result)[0] = red1[0];
    }
    __syncthreads();
    if (((int)threadIdx.x) == 0) {
      sums[c] = ((volatile float*)result)[0];
    }
  }
  __syncthreads();
  if (((int)threadIdx.x) < 40) {
    out[((((int)blockIdx.x) * 40) + ((int)threadIdx.x))] = (sums[((int)threadIdx.x)] * x[((((int)blockIdx.x) * 40) + ((int)threadIdx.x))]);
  }
}
"""

COLUMN_SUMS_REF = """
import numpy as np

def col_sums(inputs, scalars):
    x = inputs["x"].reshape(18, 40)
    return {"out": (x.sum(axis=0, dtype=np.float32)[None, :] * x).astype(np.float32)}
"""


def _column_sums_task(tmp_path: Path, cuda: str = COLUMN_SUMS):
    (tmp_path / "col_sums.cu").write_text(cuda)
    (tmp_path / "col_sums_ref.py").write_text(COLUMN_SUMS_REF)
    raw = {"name": "col_sums", "cuda": "col_sums.cu",
           "buffers": [{"name": "x", "dtype": "float32", "shape": [18, 40], "role": "input"},
                       {"name": "out", "dtype": "float32", "shape": [18, 40], "role": "output"}],
           "launches": [{"kernel": "col_sums_kernel", "grid": [18], "block": [256], "args": ["x", "out"]}],
           "reference": {"kind": "python", "function": "col_sums_ref:col_sums"},
           "tolerance": {"rtol": 1e-5, "atol": 1e-5}}
    (tmp_path / "col_sums.json").write_text(json.dumps(raw))
    return load_task(tmp_path / "col_sums.json")


def test_live_lanes_prune_a_second_stage_that_reloads_the_low_lanes_each_round(tmp_path, box):
    task = _column_sums_task(tmp_path)
    new = sync_together(Context(task), lower_task(task))
    assert new is not None
    # both stages pruned inside the loop: 16 8 4 2 1 lanes, then 4 2 1 (the reload writes lanes 0..7)
    assert new.count("are read later") == 8
    for lanes in (4, 2, 1):
        assert new.count(f"only lanes below {lanes} are read later") == 2
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


def test_live_lanes_keep_a_second_stage_whose_reload_leaves_read_lanes_stale(tmp_path):
    # the reload writes lanes 0..3 only: the step with offset 4 reads lanes 4..7 of the last round
    task = _column_sums_task(tmp_path, COLUMN_SUMS.replace("threadIdx.x) < 8)", "threadIdx.x) < 4)"))
    new = sync_together(Context(task), lower_task(task))
    assert new is not None and new.count("are read later") == 5
    # thread 0 of every warp reads the result: the other warps' stale lanes would be read
    every_warp = COLUMN_SUMS.replace("if (((int)threadIdx.x) == 0) {\n      ((volatile",
                                     "if ((((int)threadIdx.x) % 32) == 0) {\n      ((volatile")
    task = _column_sums_task(tmp_path, every_warp)
    new = sync_together(Context(task), lower_task(task))
    assert new is not None and new.count("are read later") == 5


def test_own_lane_simd_vectorizes_loops_that_touch_only_their_own_copies(tmp_path, box):
    task = _column_sums_task(tmp_path)
    new = sync_together(Context(task), lower_task(task))
    kernel = C.kernel_named(new, "col_sums_kernel").text(new)
    # the loop that sums each thread's column element into its copy for the first stage
    head = kernel[:kernel.index("in_thread[tid][0] = 0.0f;")]
    assert "#pragma omp simd\n" in head[head.rindex("for (unsigned int ty"):]
    report = check(task, new, box, seeds=SEEDS, threads=[1, 2])
    assert report.correct, report.summary()


@pytest.mark.parametrize("statement", [
    "v[tid][0] = v[tid + 1][0];",            # another thread's copy
    "w[tid - tid % 32u + 0][0] = v[tid][0];",  # a lane-0 broadcast
    "atomicAdd(&y[0], v[tid][0]);",           # an atomic
    "warp_0.put(tid, v[tid][0]);",            # a warp exchange still there
    "v[tid][0] = cudaopt::shfl(warp_0, tid, 0, 32);",
    "if (v[tid][0] > 0.0f) break;",
])
def test_own_lane_simd_leaves_loops_that_reach_other_threads(two_stage, statement):
    task, _ = two_stage
    unit = ("// CUDA kernel k\nvoid k(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, float* y) {\n"
            "    const unsigned int nthreads = blockDim.x * blockDim.y * blockDim.z;\n"
            + _nest("v[tid][0] = y[tid];") + _nest(statement) + "}\n")
    new = own_lane_simd(Context(task), unit)
    assert new is not None and new.count("#pragma omp simd") == 1
    assert new.index("#pragma omp simd") < new.index("v[tid][0] = y[tid];") < new.index(statement)


def test_guarded_range_of_a_scalar_thread_loop_stays_scalar(two_stage):
    from tools.optimize.passes.guarded_ranges import guarded_thread_range
    task, _ = two_stage
    unit = ("// CUDA kernel k\nvoid k(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, float* y) {\n"
            "    const unsigned int nthreads = blockDim.x * blockDim.y * blockDim.z;\n"
            + _nest("if (((int)threadIdx.x) < 8) { v[tid][0] = y[tid]; }") + "}\n")
    new = guarded_thread_range(Context(task), unit)
    assert new is not None and "for (unsigned int tx = tx_lo; tx < tx_hi; ++tx) {" in new
    assert "#pragma omp simd" not in new and "if (((int)threadIdx.x) < 8)" not in new.split("tx < tx_hi")[1]
