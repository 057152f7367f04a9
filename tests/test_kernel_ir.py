"""tools/cuda/kernel_ir.py and printer.py: the lowering builds a typed IR of each kernel (regions
between barriers, per-thread copies, shared buffers, warp exchanges as nodes and symbols) and one
printer emits it as the C++ the lowering outputs."""

from pathlib import Path

import pytest

from tools.cuda import kernel_ir as ir
from tools.cuda import lower_source, lower_task
from tools.cuda.printer import print_kernel
from tools.cuda.translate import _unroll_pragmas, kernel_irs
from tools.spec import load_task

KERNELS = Path(__file__).parent / "kernels"

BARRIER = r"""
__global__ void shift_left(const float* in, float* out, int n) {
    __shared__ float tile[128][4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float mine = i < n ? in[i] : 0.0f;
    tile[threadIdx.x][0] = mine;
    __syncthreads();
    if (i < n) out[i] = tile[(threadIdx.x + 1) % blockDim.x][0] + mine;
}
"""

SHUFFLE = r"""
__global__ void warp_sums(const int* in, int* out) {
    int v = in[threadIdx.x];
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0) out[threadIdx.x / 32] = v;
}
"""

DYNAMIC = r"""
__global__ void staged(const double* in, double* out) {
    extern __shared__ double stage[];
    stage[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = stage[blockDim.x - 1 - threadIdx.x];
}
"""


def _one(source: str) -> ir.Kernel:
    (kernel,) = kernel_irs(source, "snippet.cu")
    return kernel


def _nodes(nodes, kind):
    """Every node of `kind` in block-level nodes, at any depth (regions' items included)."""
    found = []
    for node in nodes:
        if isinstance(node, kind):
            found.append(node)
        if isinstance(node, ir.Region):
            found += [x for x in node.items if isinstance(x, kind)]
        for child in (getattr(node, "items", None), getattr(node, "then", None), getattr(node, "orelse", None),
                      getattr(node, "body", None)):
            if isinstance(child, list) and not isinstance(node, ir.Region):
                found += _nodes(child, kind)
    return found


def test_a_barrier_cuts_the_kernel_into_two_regions():
    kernel = _one(BARRIER)
    regions = [node for node in kernel.body if isinstance(node, ir.Region)]
    assert len(regions) == 2 and regions == kernel.regions()
    assert all(region.items for region in regions)
    assert [p.name for p in kernel.parameters] == ["in", "out", "n"]
    assert kernel.parameters[0].type == "const float *"


def test_a_shared_array_is_a_buffer_symbol_with_its_extents():
    kernel = _one(BARRIER)
    (tile,) = kernel.shared
    assert tile.symbol.name == "tile" and tile.element_type == "float" and tile.extents == ["128", "4"]
    assert not tile.dynamic


def test_a_variable_live_across_the_barrier_is_a_per_thread_node():
    kernel = _one(BARRIER)
    assert [(p.symbol.name, p.element_type) for p in kernel.per_thread] == [("mine", "float")]
    assert kernel.per_thread[0].symbol.per_thread
    # `i` is recomputed from the coordinates where it is read, not kept per thread
    assert "i" not in {p.symbol.name for p in kernel.per_thread}


def test_extern_shared_memory_is_a_dynamic_buffer():
    kernel = _one(DYNAMIC)
    (stage,) = kernel.shared
    assert stage.dynamic and stage.element_type == "double" and stage.symbol.name == "stage"
    assert kernel.dynamic_shared is not None
    assert "// extern __shared__" in print_kernel(kernel)


def test_a_warp_shuffle_is_an_exchange_node():
    kernel = _one(SHUFFLE)
    (put,) = _nodes(kernel.body, ir.ExchangePut)
    assert put.intrinsic == "__shfl_down_sync" and put.value_type == "int" and put.site == 0
    assert kernel.warp_exchange is not None and kernel.warp_exchange.sites == 1
    (loop,) = _nodes(kernel.body, ir.Loop)  # the loop around the shuffle runs at block level
    assert loop.kind == "for" and loop.condition == "offset > 0"
    opened = [r for r in kernel.regions() if r.exchange_begins]
    assert [r.exchange_begins for r in opened] == [[0]] and put in opened[0].items


GRID_SYNC = r"""
#include <cooperative_groups.h>
__global__ void two_phases(int* partial, int* out) {
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    if (threadIdx.x == 0) partial[blockIdx.x] = blockIdx.x;
    grid.sync();
    for (int round = 0; round < 2; ++round) {
        out[grid.thread_rank()] += partial[(blockIdx.x + 1) % gridDim.x];
        grid.sync();
    }
}
"""


def test_a_grid_sync_is_a_grid_barrier_between_regions():
    kernel = _one(GRID_SYNC)
    assert kernel.grid_sync and len(_nodes(kernel.body, ir.GridBarrier)) == 2
    (loop,) = _nodes(kernel.body, ir.Loop)  # the loop around a grid barrier runs at block level
    assert [type(node) for node in loop.body] == [ir.Region, ir.GridBarrier]
    assert not _one(BARRIER).grid_sync


def test_an_ir_built_by_hand_prints_the_expected_cpp():
    flag = ir.Symbol("keep", "bool", per_thread=True)
    ref = ir.Symbol("r", "float &", per_thread=True, reference=True)
    kernel = ir.Kernel(
        name="k", parameters=[ir.Symbol("x", "float *")], parameters_as_written="float* x",
        per_thread=[ir.PerThread(flag, "bool"), ir.PerThread(ref, "float *")],
        shared=[ir.SharedBuffer(ir.Symbol("s", "float[32]"), "float", ["32"], declaration="float s[32]")],
        body=[ir.Region(0, items=[ir.Declare(ref, "x[threadIdx.x]"), ir.SetFlag(flag, "s[0] > 0")]),
              ir.If("x[0] > 0", [ir.Region(1, items=[ir.Statement("x[threadIdx.x] = r;")],
                                            guards=[ir.Mask(flag, True)])])])
    expected = """\
void k(dim3 gridDim, dim3 blockDim, std::size_t /*dynamicSharedBytes*/, float* x) {
    const unsigned int nthreads = blockDim.x * blockDim.y * blockDim.z;
    #pragma omp parallel
    {
        cudacpu::PerThread<bool> keep(nthreads);
        cudacpu::PerThread<float *> r(nthreads);
        #pragma omp for collapse(3) schedule(static)
        for (unsigned int bz = 0; bz < gridDim.z; ++bz)
            for (unsigned int by = 0; by < gridDim.y; ++by)
                for (unsigned int bx = 0; bx < gridDim.x; ++bx) {
                    float s[32];  // __shared__: one per block
                    for (unsigned int tz = 0; tz < blockDim.z; ++tz)
                        for (unsigned int ty = 0; ty < blockDim.y; ++ty)
                            #pragma omp simd
                            for (unsigned int tx = 0; tx < blockDim.x; ++tx) {
                                const uint3 threadIdx = make_uint3(tx, ty, tz);
                                const unsigned int tid = (tz * blockDim.y + ty) * blockDim.x + tx;
                                r[tid] = &(x[threadIdx.x]);
                                keep[tid] = s[0] > 0;
                            }
                    if (x[0] > 0) {
                        for (unsigned int tz = 0; tz < blockDim.z; ++tz)
                            for (unsigned int ty = 0; ty < blockDim.y; ++ty)
                                #pragma omp simd
                                for (unsigned int tx = 0; tx < blockDim.x; ++tx) {
                                    const uint3 threadIdx = make_uint3(tx, ty, tz);
                                    const unsigned int tid = (tz * blockDim.y + ty) * blockDim.x + tx;
                                    if (!keep[tid]) continue;
                                    x[threadIdx.x] = r;
                                }
                    }
                }
    }
}"""
    assert print_kernel(kernel) == expected


def test_the_printed_ir_is_the_lowering_output():
    source = BARRIER + SHUFFLE + DYNAMIC
    lowered = lower_source(source, "snippet.cu").cpp
    for kernel in kernel_irs(source, "snippet.cu"):
        assert print_kernel(kernel) in lowered


@pytest.mark.parametrize("task_file", sorted(KERNELS.glob("*/task.json")), ids=lambda p: p.parent.name)
def test_printing_the_ir_of_every_corpus_kernel_is_the_lowering(task_file):
    task = load_task(task_file)
    lowered = lower_task(task)
    kernels = kernel_irs(task.source(), str(task.source_path()), kernels=sorted({x.kernel for x in task.launches}))
    assert kernels
    for kernel in kernels:  # the file's `#pragma unroll`s are rewritten for g++ in the whole output
        assert _unroll_pragmas(print_kernel(kernel)) in lowered
