"""The CPU CUDA runtime's host API: memory, copies, symbols, errors, streams, events, device
queries; and the header set compiling cleanly into a multi-file program."""

from __future__ import annotations

import pytest

from test_runtime_support import build, build_and_run, parse_lines, run

HOST_API_PROGRAM = r"""
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <vector>

#ifdef __CUDACC__
#error "__CUDACC__ must stay undefined: host code takes its host paths"
#endif
static_assert(CUDART_VERSION >= 11000, "CUDART_VERSION");
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2");
static_assert(sizeof(int4) == 16 && alignof(int4) == 16, "int4");
static_assert(sizeof(char4) == 4 && alignof(char4) == 4, "char4");
static_assert(sizeof(uchar3) == 3 && alignof(uchar3) == 1, "uchar3");
static_assert(sizeof(short2) == 4 && alignof(short2) == 4, "short2");
static_assert(sizeof(longlong2) == 16 && alignof(longlong2) == 16, "longlong2");
static_assert(sizeof(dim3) == 12, "dim3");

__constant__ float coefficients[16];
__device__ int device_counter;

// A global whose destructor frees device memory after main returns (RAII wrappers do this).
struct FreedAtExit {
    float* memory = nullptr;
    ~FreedAtExit() {
        if (cudaFree(memory) != cudaSuccess) std::abort();
    }
} freed_at_exit;

static void CUDART_CB_like(cudaStream_t, cudaError_t status, void* data) { *static_cast<int*>(data) = 100 + status; }

int main() {
    const int n = 1000;
    cudaMalloc(&freed_at_exit.memory, 64);
    std::vector<float> host(n), back(n, -1.0f);
    for (int i = 0; i < n; ++i) host[i] = 0.5f * i;

    float* device = nullptr;
    printf("malloc %d\n", cudaMalloc(&device, n * sizeof(float)));
    printf("aligned %d\n", int(reinterpret_cast<uintptr_t>(device) % 256 == 0));
    cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(back.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost);
    bool same = true;
    for (int i = 0; i < n; ++i) same = same && back[i] == host[i];
    printf("roundtrip %d\n", int(same));
    cudaMemset(device, 0, n * sizeof(float));
    cudaMemcpyAsync(back.data(), device, n * sizeof(float), cudaMemcpyDefault, 0);
    printf("memset_first_last %g %g\n", back[0], back[n - 1]);

    // 2-D copy into a pitched allocation and back.
    size_t pitch = 0;
    float* pitched = nullptr;
    cudaMallocPitch(&pitched, &pitch, 10 * sizeof(float), 5);
    cudaMemcpy2D(pitched, pitch, host.data(), 10 * sizeof(float), 10 * sizeof(float), 5, cudaMemcpyHostToDevice);
    std::vector<float> rows(50, 0.0f);
    cudaMemcpy2D(rows.data(), 10 * sizeof(float), pitched, pitch, 10 * sizeof(float), 5, cudaMemcpyDeviceToHost);
    printf("pitch %zu copy2d %g %g\n", pitch, rows[13], rows[49]);
    printf("bad_pitch %d\n", cudaMemcpy2D(rows.data(), 4, pitched, pitch, 8, 1, cudaMemcpyDeviceToHost));
    cudaGetLastError();

    // 3-D: host volume 5 x 4 x 3 floats -> pitched device volume -> another host volume.
    std::vector<float> volume(60), volume_back(60, -1.0f);
    for (int i = 0; i < 60; ++i) volume[i] = float(i);
    cudaExtent extent = make_cudaExtent(5 * sizeof(float), 4, 3);
    cudaPitchedPtr device_volume;
    cudaMalloc3D(&device_volume, extent);
    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(volume.data(), 5 * sizeof(float), 5, 4);
    up.dstPtr = device_volume;
    up.extent = extent;
    up.kind = cudaMemcpyHostToDevice;
    cudaMemcpy3D(&up);
    cudaMemcpy3DParms down = {};
    down.srcPtr = device_volume;
    down.srcPos = make_cudaPos(sizeof(float), 1, 1);  // the sub-volume from (1, 1, 1)
    down.dstPtr = make_cudaPitchedPtr(volume_back.data(), 5 * sizeof(float), 5, 4);
    down.extent = make_cudaExtent(4 * sizeof(float), 3, 2);
    down.kind = cudaMemcpyDeviceToHost;
    cudaMemcpy3D(&down);
    printf("copy3d %g %g %g %g\n", volume_back[0], volume_back[3], volume_back[5 * 4 + 5 * 2 + 3], volume_back[4]);
    cudaMemset3D(device_volume, 0, extent);
    printf("memset3d %g\n", static_cast<float*>(device_volume.ptr)[device_volume.pitch / sizeof(float) * 4 * 2 + 4]);
    cudaFree(device_volume.ptr);

    // Errors: codes, strings, sticky last error.
    printf("bad_kind %d\n", cudaMemcpy(back.data(), device, 4, static_cast<cudaMemcpyKind>(7)));
    cudaError_t peeked = cudaPeekAtLastError();
    cudaError_t last = cudaGetLastError();
    cudaError_t after = cudaGetLastError();
    printf("peek %d last %d after %d\n", peeked, last, after);
    int not_allocated = 0;
    printf("free_unknown %d\n", cudaFree(&not_allocated));
    cudaGetLastError();
    printf("free_null %d\n", cudaFree(nullptr));
    printf("string %s\n", cudaGetErrorString(cudaErrorInvalidValue));
    printf("name %s\n", cudaGetErrorName(cudaErrorMemoryAllocation));

    // Symbols.
    float values[16];
    for (int i = 0; i < 16; ++i) values[i] = float(i * i);
    cudaMemcpyToSymbol(coefficients, values, sizeof(values));
    cudaMemcpyToSymbol(coefficients, values + 2, 2 * sizeof(float), 8 * sizeof(float));
    float readback[4];
    cudaMemcpyFromSymbol(readback, coefficients, 4 * sizeof(float), 7 * sizeof(float));
    printf("symbol %g %g %g %g\n", coefficients[3], readback[0], readback[1], readback[2]);
    printf("symbol_overflow %d\n", cudaMemcpyToSymbol(coefficients, values, sizeof(values), 4));
    cudaGetLastError();
    int seven = 7;
    cudaMemcpyToSymbol(device_counter, &seven, sizeof(int));
    void* address = nullptr;
    size_t symbol_size = 0;
    cudaGetSymbolAddress(&address, coefficients);
    cudaGetSymbolSize(&symbol_size, coefficients);
    printf("counter %d address %d size %zu\n", device_counter, int(address == coefficients), symbol_size);

    // Events measure real time.
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    volatile double sink = 0;
    for (int i = 0; i < 3000000; ++i) sink = sink + i * 0.5;
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms = -1;
    printf("elapsed_status %d\n", cudaEventElapsedTime(&ms, start, stop));
    printf("elapsed_ms %g\n", ms);
    cudaEvent_t unrecorded;
    cudaEventCreateWithFlags(&unrecorded, cudaEventDisableTiming);
    printf("elapsed_unrecorded %d\n", cudaEventElapsedTime(&ms, start, unrecorded));
    cudaGetLastError();
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaEventDestroy(unrecorded);

    // Streams: work is done when issued; callbacks run.
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    int called = 0;
    cudaStreamAddCallback(stream, CUDART_CB_like, &called, 0);
    cudaError_t synchronized = cudaStreamSynchronize(stream);
    printf("stream %d %d %d\n", synchronized, cudaStreamQuery(stream), called);
    double* attached = nullptr;
    cudaMallocManaged(&attached, 4 * sizeof(double));
    cudaError_t attach_host = cudaStreamAttachMemAsync(stream, attached, 0, cudaMemAttachHost);
    attached[3] = 2.5;
    cudaError_t attach_single = cudaStreamAttachMemAsync(stream, attached);
    printf("attach %d %d %g %d\n", attach_host, attach_single, attached[3], cudaFree(attached));

    // Stream-ordered allocation from pools, whose attributes read back as set.
    int pools_supported = 0;
    cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, 0);
    cudaMemPool_t pool = nullptr, current_pool = nullptr;
    cudaError_t got_pool = cudaDeviceGetDefaultMemPool(&pool, 0);
    cudaDeviceGetMemPool(&current_pool, 0);
    uint64_t threshold = UINT64_MAX, threshold_back = 0, used = 1;
    cudaError_t set_threshold = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold_back);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    cudaError_t set_current = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    cudaGetLastError();
    float* pooled = nullptr;
    cudaError_t from_pool = cudaMallocFromPoolAsync(&pooled, 64 * sizeof(float), pool, stream);
    pooled[63] = 1.5f;
    printf("pool %d %d %d %d %d %d %d %d %d\n", pools_supported, got_pool, int(current_pool == pool), set_threshold,
           int(threshold_back == UINT64_MAX), int(used), set_current, from_pool, cudaFreeAsync(pooled, stream) + cudaMemPoolTrimTo(pool, 0));
    cudaStreamDestroy(stream);

    // Device queries.
    int count = 0, current = -1, warp = 0, sms = 0;
    cudaGetDeviceCount(&count);
    cudaGetDevice(&current);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    printf("devices %d current %d set1 %d\n", count, current, cudaSetDevice(1));
    cudaGetLastError();
    printf("prop_name %s\n", prop.name);
    printf("prop %d %d %d %zu %d %d\n", prop.warpSize, prop.maxThreadsPerBlock, prop.multiProcessorCount,
           prop.sharedMemPerBlock, int(prop.totalGlobalMem > (size_t(1) << 28)), prop.major);
    printf("omp_procs %d attr %d %d\n", omp_get_num_procs(), warp, sms);
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    printf("meminfo %d\n", int(free_bytes > 0 && free_bytes <= total_bytes));
    int min_grid = 0, block = 0;
    cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, CUDART_CB_like, 0, 0);
    printf("occupancy %d %d\n", block, int(min_grid > 0));
    cudaError_t good_launch = cuda_cpu::check_launch(dim3(1000, 2), dim3(32, 32), 1024);
    cudaError_t too_many_threads = cuda_cpu::check_launch(dim3(1), dim3(64, 32), 0);
    cudaError_t recorded = cudaGetLastError();
    cudaError_t empty_grid = cuda_cpu::check_launch(dim3(0), dim3(32), 0);
    cudaError_t deep_block = cuda_cpu::check_launch(dim3(1), dim3(1, 1, 65), 0);
    cudaError_t huge_shared = cuda_cpu::check_launch(dim3(1), dim3(32), size_t(1) << 20);
    cudaGetLastError();
    printf("launch_checks %d %d %d %d %d %d\n", good_launch, too_many_threads, recorded, empty_grid, deep_block, huge_shared);
    printf("func_attr %d\n", cudaFuncSetAttribute(CUDART_CB_like, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));

    // Pointer attributes and other allocators.
    float* pinned = nullptr;
    float* managed = nullptr;
    cudaMallocHost(&pinned, 64);
    cudaMallocManaged(&managed, 64);
    cudaPointerAttributes attributes;
    cudaPointerGetAttributes(&attributes, device + 10);
    int device_type = attributes.type;
    cudaPointerGetAttributes(&attributes, pinned);
    int host_type = attributes.type;
    cudaPointerGetAttributes(&attributes, managed);
    int managed_type = attributes.type;
    cudaPointerGetAttributes(&attributes, &count);
    printf("pointer_types %d %d %d %d\n", device_type, host_type, managed_type, int(attributes.type));
    int frees[4] = {cudaFreeHost(pinned), cudaFree(managed), cudaFree(pitched), cudaFree(device)};
    printf("frees %d %d %d %d\n", frees[0], frees[1], frees[2], frees[3]);
    printf("sync %d\n", cudaDeviceSynchronize() + cudaDeviceReset());
    return 0;
}
"""


@pytest.fixture(scope="module")
def host_api(tmp_path_factory) -> dict[str, list[str]]:
    return parse_lines(build_and_run(HOST_API_PROGRAM, tmp_path_factory.mktemp("host_api")))


def test_memory_round_trip(host_api):
    assert host_api["malloc"] == ["0"]
    assert host_api["aligned"] == ["1"]
    assert host_api["roundtrip"] == ["1"]
    assert host_api["memset_first_last"] == ["0", "0"]
    pitch = int(host_api["pitch"][0])
    assert pitch >= 40 and pitch % 256 == 0
    assert host_api["pitch"][2:] == ["6.5", "24.5"]  # rows[13] = host[13], rows[49] = host[49]


def test_3d_copies_between_pitched_volumes(host_api):
    # back[0] = v[1][1][1] = 20 + 5 + 1; back[3] = v[1][1][4]; back[(1, 2, 3)] = v[2][3][4]; back[4] untouched.
    assert host_api["copy3d"] == ["26", "29", "59", "-1"]
    assert host_api["memset3d"] == ["0"]


def test_errors_are_reported_and_sticky(host_api):
    assert host_api["bad_pitch"] == ["12"]  # cudaErrorInvalidPitchValue
    assert host_api["bad_kind"] == ["21"]  # cudaErrorInvalidMemcpyDirection
    assert host_api["peek"] == ["21", "last", "21", "after", "0"]
    assert host_api["free_unknown"] == ["1"]
    assert host_api["free_null"] == ["0"]
    assert host_api["string"] == ["invalid", "argument"]
    assert host_api["name"] == ["cudaErrorMemoryAllocation"]


def test_symbols(host_api):
    # coefficients = i*i, then elements 8, 9 overwritten by values[2], values[3] = 4, 9.
    assert host_api["symbol"] == ["9", "49", "4", "9"]
    assert host_api["symbol_overflow"] == ["1"]
    assert host_api["counter"] == ["7", "address", "1", "size", "64"]


def test_events_measure_real_time(host_api):
    assert host_api["elapsed_status"] == ["0"]
    assert float(host_api["elapsed_ms"][0]) > 0.0
    assert host_api["elapsed_unrecorded"] == ["400"]  # cudaErrorInvalidResourceHandle


def test_streams_and_device_queries(host_api):
    assert host_api["stream"] == ["0", "0", "100"]
    assert host_api["attach"] == ["0", "0", "2.5", "0"]
    assert host_api["pool"] == ["1", "0", "1", "0", "1", "0", "1", "0", "0"]  # UsedMemCurrent: read only
    assert host_api["devices"] == ["1", "current", "0", "set1", "101"]
    assert host_api["prop_name"] == ["CPU", "(OpenMP)"]
    warp, max_threads, sms, shared, big_memory, major = host_api["prop"]
    assert (warp, max_threads, shared, big_memory, major) == ("32", "1024", "49152", "1", "8")
    procs = host_api["omp_procs"][0]
    assert sms == procs and host_api["omp_procs"][1:] == ["attr", "32", procs]
    assert host_api["meminfo"] == ["1"]
    assert host_api["occupancy"] == ["256", "1"]
    assert host_api["func_attr"] == ["0"]
    assert host_api["launch_checks"] == ["0", "9", "9", "9", "9", "9"]  # cudaErrorInvalidConfiguration


def test_pointer_attributes_and_frees(host_api):
    assert host_api["pointer_types"] == ["2", "1", "3", "0"]
    assert host_api["frees"] == ["0", "0", "0", "0"]
    assert host_api["sync"] == ["0"]


# Every header in one program of two translation units: inline definitions must link.
ALL_HEADERS = """
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <cuda.h>
#include <device_launch_parameters.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <math_constants.h>
#include <cublas_v2.h>
#include <curand.h>
#include <curand_kernel.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/transform.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/fill.h>
#include <thrust/copy.h>
#include <thrust/sequence.h>
#include <thrust/scan.h>
#include <thrust/count.h>
#include <thrust/transform_reduce.h>
#include <thrust/functional.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>
#include <thrust/random.h>
#include <cuComplex.h>
#include <library_types.h>
#include <thrust/partition.h>
#include <thrust/merge.h>
#include <cub/cub.cuh>
#include <nvToolsExt.h>
#include <algorithm>
#include <vector>
using namespace std;
"""


def test_all_headers_link_in_two_translation_units(tmp_path):
    first = ALL_HEADERS + """
float scale_in_other_unit(float x);
int main() {
    float* d = nullptr;
    cudaMalloc(&d, 16);
    __half h = __float2half(scale_in_other_unit(1.5f));
    printf("%g %d %d\\n", __half2float(h), min(3, 4), std::max(1, 2));
    return cudaFree(d);
}
"""
    second = ALL_HEADERS + """
float scale_in_other_unit(float x) {
    cuFloatComplex i = make_cuFloatComplex(0.0f, 1.0f);
    float minus_one = cuCrealf(cuCmulf(i, i));
    return __fmul_rn(rsqrtf(4.0f), x) + __expf(0.0f) + max(1.0f, 0.0f) + minus_one;
}
"""
    # -O0: this checks declarations and linkage only, so spare the optimiser's time.
    exe = build({"first.cpp": first, "second.cpp": second}, tmp_path, extra_flags=("-O0",))
    assert run(exe).split() == ["1.75", "3", "2"]


def test_headers_compile_cleanly_without_openmp(tmp_path):
    source = ALL_HEADERS + """
int main() {
    thrust::device_vector<float> v(100000, 0.5f);
    float* d = nullptr;
    cudaMalloc(&d, 4);
    printf("%g %d\\n", thrust::reduce(v.begin(), v.end(), 0.0f), cudaFree(d));
    return 0;
}
"""
    # No "unknown pragma" warnings from the headers' OpenMP loops when OpenMP is off.
    exe = build({"serial.cpp": source}, tmp_path, extra_flags=("-fno-openmp", "-O0"))
    assert run(exe).split() == ["50000", "0"]


def test_standard_headers_that_spell_noinline_as_an_attribute_still_compile(tmp_path):
    """libstdc++ 13 writes __attribute__((__noinline__)) in <string> (12 already in <memory>); our
    __noinline__ macro would nest it. A stand-in <string> that does so, found first on the include
    path, compiles when included after cuda_runtime.h: the runtime includes it before the macro."""
    (tmp_path / "shadow").mkdir()
    for header in ("string", "memory"):
        (tmp_path / "shadow" / header).write_text(
            f"#pragma once\n#include_next <{header}>\n__attribute__((__noinline__, __cold__)) inline void spelled_like_libstdcxx_{header}() {{}}\n")
    source = '#include <cuda_runtime.h>\n#include <string>\n#include <memory>\nint main() { return std::string("ok").size() == 2 ? 0 : 1; }\n'
    run(build({"prog.cpp": source}, tmp_path, extra_flags=("-isystem", str(tmp_path / "shadow"))))


def test_managed_memory_prefetch_and_advice_to_a_memory_location(tmp_path):
    # CUDA 12.2's cudaMemPrefetchAsync_v2 / CUDA 13's cudaMemPrefetchAsync take a cudaMemLocation.
    source = r"""
#include <cuda_runtime.h>
#include <cstdio>
__global__ void unused() {}
int main() {
  float* a;
  cudaMallocManaged(&a, 64 * sizeof(float));
  cudaMemLocation device;
  device.type = cudaMemLocationTypeDevice;
  device.id = 0;
  cudaMemLocation host = {cudaMemLocationTypeHost, 0};
  cudaMemLocation other = {cudaMemLocationTypeDevice, 3};
  printf("device %d\n", (int)cudaMemPrefetchAsync(a, 64 * sizeof(float), device, 0));
  printf("host %d\n", (int)cudaMemPrefetchAsync_v2(a, 64 * sizeof(float), host, 0, 0));
  printf("advise %d\n", (int)cudaMemAdvise(a, 64 * sizeof(float), cudaMemAdviseSetPreferredLocation, device));
  printf("other %d\n", (int)cudaMemPrefetchAsync(a, 64 * sizeof(float), other, 0));
  printf("last %d\n", (int)cudaGetLastError());
  printf("old %d\n", (int)cudaMemPrefetchAsync(a, 64 * sizeof(float), 0));
  cudaFree(a);
}
"""
    out = parse_lines(build_and_run(source, tmp_path))
    assert out["device"] == ["0"] and out["host"] == ["0"] and out["advise"] == ["0"]
    assert out["other"] == ["101"] and out["last"] == ["101"] and out["old"] == ["0"]
