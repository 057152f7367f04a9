"""The CUDA front end: what parse_cuda finds in a file, with no CUDA installation."""

import re

import clang.cindex as ci
import pytest
from tools.cuda import parse_cuda, runtime_include_dir
from tools.cuda.frontend import RUN_TIME_DEVICE_VARIABLES, SHIM_DIR, parse_translation

SOURCE = r"""
#include <cuda_runtime.h>
#include <cstdio>
#define BLOCK 128

__constant__ float coeffs[16];
__shared__ float file_scope_tile[32];

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ int lane_id() { return threadIdx.x & 31; }

template <typename T, int TILE>
__global__ void __launch_bounds__(256) scale(const T* __restrict__ in, T* out, int n) {
    __shared__ T tile[TILE];
    extern __shared__ float dyn[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    tile[threadIdx.x % TILE] = in[i] * coeffs[0] + dyn[0];
    __syncthreads();
    out[i] = tile[threadIdx.x % TILE];
}

__global__ void total(const float* x, float* sum, int n) {
    float v = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
    v = warp_sum(v);
    if (lane_id() == 0) atomicAdd(sum, v);
}

__global__ void textured(cudaTextureObject_t t, float* out) { out[threadIdx.x] = surf2Dread<float>(t, threadIdx.x * 4, 0); }

void host(float* h, int n) {
    float *d, *s;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpyToSymbol(coeffs, h, 16 * sizeof(float));
    cudaStream_t st;
    cudaStreamCreate(&st);
    scale<float, 64><<<(n + 255) / 256, 256, 64 * sizeof(float), st>>>(d, d, n);
    total<<<dim3(4), BLOCK>>>(d, s, n);
    cudaDeviceSynchronize();
}
"""


@pytest.fixture(scope="module")
def mod():
    return parse_cuda(SOURCE, "demo.cu")


def test_finds_kernels_with_params_templates_and_launch_bounds(mod):
    assert [k.name for k in mod.kernels] == ["scale", "total", "textured"]
    scale = mod.kernel("scale")
    assert scale.template_params == ["typename T", "int TILE"]
    assert [(p.name, p.type) for p in scale.params] == [("in", "const T *__restrict"), ("out", "T *"), ("n", "int")]
    assert scale.launch_bounds == "256"
    assert scale.file == "demo.cu" and scale.line == 17
    assert mod.diagnostics == []


def test_features_per_kernel(mod):
    scale = set(mod.kernel("scale").features)
    assert {"templates", "shared memory", "dynamic shared memory", "barriers", "constant memory", "early return"} <= scale
    total = set(mod.kernel("total").features)
    assert {"warp intrinsics", "atomics", "device functions", "grid-stride loop"} <= total
    assert "barriers" not in total
    assert "unsupported:surfaces" in mod.kernel("textured").features  # texture objects are supported


def test_device_functions_shared_and_constant_variables(mod):
    fns = {f.name: f for f in mod.device_functions}
    assert fns["warp_sum"].has_sync and not fns["warp_sum"].uses_thread_coordinates
    assert fns["lane_id"].uses_thread_coordinates and not fns["lane_id"].has_sync
    shared = {(s.name, s.kernel, s.extern) for s in mod.shared}
    assert shared == {("file_scope_tile", None, False), ("tile", "scale", False), ("dyn", "scale", True)}
    assert [(c.name, c.type) for c in mod.constants] == [("coeffs", "float[16]")]


RUN_TIME_STATE = r"""
#define W 4
__constant__ float table[4] = {1, 2, 3, 4};   // a table the program never changes
__constant__ float weights[W];                 // set with cudaMemcpyToSymbol below
__constant__ int steps = 2;                    // initialized, then overwritten below
template <typename T> __constant__ T mask[W];  // a variable template, set at run time
__device__ int counter;                        // kernels count into it
__device__ const int primes[3] = {2, 3, 5};    // a table: read only
__device__ float through(int i) { return weights[i]; }
__global__ void reads_table(float* o) { o[threadIdx.x] = table[threadIdx.x]; }
__global__ void reads_weights(float* o) { o[threadIdx.x] = through(threadIdx.x); }
__global__ void reads_steps(float* o) { o[0] = steps; }
template <typename T> __global__ void reads_mask(T* o) { o[threadIdx.x] = mask<T>[threadIdx.x]; }
__global__ void counts(float* o) { atomicAdd(&counter, 1); }
__global__ void reads_primes(float* o) { o[threadIdx.x] = primes[threadIdx.x % 3]; }
int main() {
  float w[W] = {0}; int s = 3;
  cudaMemcpyToSymbol(weights, w, sizeof(w));
  cudaMemcpyToSymbol(steps, &s, sizeof(s));
  cudaMemcpyToSymbol(mask<float>, w, sizeof(w));
}
"""


def test_kernels_using_device_variables_the_program_sets_as_it_runs_are_marked():
    """A capture of a launch records its arguments, not `__device__` or `__constant__` state the
    program wrote before it: kernels using such state say so (directly or through a device
    function); a constant table with an initializer that nothing overwrites is not such state."""
    mod = parse_cuda(RUN_TIME_STATE, "state.cu")
    marked = {k.name for k in mod.kernels if RUN_TIME_DEVICE_VARIABLES in k.features}
    assert marked == {"reads_weights", "reads_steps", "reads_mask", "counts"}


def test_launch_sites_and_runtime_calls(mod):
    first, second = mod.launches
    assert (first.kernel, first.template_args, first.grid, first.block) == ("scale", "float, 64", "(n + 255) / 256", "256")
    assert (first.shared_bytes, first.stream, first.args) == ("64 * sizeof(float)", "st", ["d", "d", "n"])
    assert first.function == "host" and first.line == 42
    assert (second.kernel, second.grid, second.block, second.shared_bytes) == ("total", "dim3(4)", "BLOCK", None)
    names = [c.name for c in mod.runtime_calls]
    assert names == ["cudaMalloc", "cudaMemcpyToSymbol", "cudaStreamCreate", "cudaDeviceSynchronize"]


def test_the_precompiled_shim_parses_alike_and_a_damaged_one_is_replaced(tmp_path, monkeypatch):
    """Parses use cuda_shim.h precompiled in the user's cache; the lowering is the same without it,
    and a precompiled header that no longer loads (damaged, or built for other headers) is
    parsed around, removed and built again."""
    from pathlib import Path

    from tools.cuda import frontend, lower_task
    from tools.spec import load_task

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    frontend._shim_pch.cache_clear()
    # a kernel the lowering parses once (one whose locals it renames is parsed again, which would
    # rebuild the header within the same call)
    task = load_task(Path(__file__).parent / "kernels" / "histogram_shared_atomics" / "task.json")
    with_pch = lower_task(task)
    pch = Path(frontend._shim_pch())
    assert pch.is_relative_to(tmp_path) and pch.stat().st_size > 100_000
    with monkeypatch.context() as m:
        m.setattr(frontend, "_shim_pch", lambda: None)
        assert lower_task(task) == with_pch
    pch.write_bytes(pch.read_bytes()[:5000])
    assert lower_task(task) == with_pch
    assert not pch.exists()
    assert parse_cuda(SOURCE).kernels and pch.stat().st_size > 100_000  # built again
    frontend._shim_pch.cache_clear()


def test_syntax_errors_are_refused_with_file_line_and_column():
    from tools.cuda.frontend import CudaSyntaxError

    bad = "__global__ void k(float* x, int n) {\n    int i = threadIdx.x\n    if (i < n) x[i] = 0;\n}\n}\n"
    with pytest.raises(CudaSyntaxError) as info:
        parse_cuda(bad, "bad.cu")
    assert info.value.errors == ["bad.cu:2:24: expected ';' at end of declaration",
                                 "bad.cu:5:1: extraneous closing brace ('}')"]
    assert str(info.value) == "bad.cu:2:24: expected ';' at end of declaration (and 1 more syntax errors)"


def test_what_nvcc_accepts_is_no_syntax_error():
    """clang refuses an alignas after __shared__ (TVM writes it), and parsing only the host side it
    reports semantic errors in valid CUDA: neither makes a file invalid."""
    source = ("__global__ void k(float* x) {\n    __shared__ alignas(64) float tile[8];\n"
              "    tile[threadIdx.x] = fmaxf(x[threadIdx.x], 0.0f);\n    x[threadIdx.x] = tile[threadIdx.x];\n}\n")
    assert [k.name for k in parse_cuda(source, "ok.cu").kernels] == ["k"]


def test_the_cuda_headers_macros_and_enums_are_known():
    # What nvcc's headers define and real applications use on the host side.
    source = ("typedef struct __align__(16) { float a, b, c, d; } quad;\n"
              "__global__ void k(quad* q) { q[threadIdx.x].a = 1.0f; }\n"
              "int main() {\n  cudaFuncSetCacheConfig(k, cudaFuncCachePreferL1);\n"
              "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"
              "  cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte);\n}\n")
    tr = parse_translation(source, "host.cu")
    assert not [d.spelling for d in tr.tu.diagnostics if d.severity >= ci.Diagnostic.Error]


def test_the_parsing_shim_declares_every_function_of_the_cpu_runtime():
    # Host code that calls a runtime function the shim lacks parses with that call dropped, and
    # with it any kernel it names (`cudaFuncGetAttributes(&a, k)`).
    runtime = (runtime_include_dir() / "cuda_runtime_api.h").read_text()
    shim = (SHIM_DIR / "cuda_shim.h").read_text()
    functions = set(re.findall(r"^inline\s+cudaError_t\s+(cuda\w+)\s*\(", runtime, re.M))
    assert len(functions) > 50
    assert sorted(f for f in functions if f"CUDASHIM_API({f})" not in shim) == []
