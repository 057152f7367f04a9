"""Texture objects and CUDA arrays (tools/cuda/runtime/include/cuda_cpu/textures.h): fetches built
with the real g++ and run under two OpenMP threads, compared with a Python model of CUDA's
texture unit (point sampling at floor(coordinate), linear filtering at coordinate - 0.5 with
weights quantized to 1/256, per-dimension address modes, normalizedFloat reads); and a whole .cu
program with a textured kernel translated, built and run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tools.cuda import translate_file
from tools.cuda.frontend import parse_cuda

from test_runtime_support import BINARY_IO, build, run
from cuda_fixtures.build import include_args

WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3
W, H, D = 5, 4, 3

PROGRAM = r"""
#include <cuda_runtime.h>
#include <cstring>
""" + BINARY_IO + r"""

static cudaTextureObject_t make_texture(const cudaResourceDesc& res, int mode, int filter, int read, int normalized) {
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = static_cast<cudaTextureAddressMode>(mode);
    td.filterMode = static_cast<cudaTextureFilterMode>(filter);
    td.readMode = static_cast<cudaTextureReadMode>(read);
    td.normalizedCoords = normalized;
    cudaTextureObject_t t = 0;
    if (cudaCreateTextureObject(&t, &res, &td, nullptr) != cudaSuccess || t == 0) std::abort();
    return t;
}

static void check(bool ok, const char* what) {
    if (!ok) { std::printf("FAILED %s\n", what); std::exit(1); }
}

int main() {
    const int W = 5, H = 4, D = 3;
    std::vector<float> volume = load<float>("volume.bin");  // D slices of H rows of W floats; slice 0 is the image
    std::vector<float> coords = load<float>("coords.bin");  // (x, y, z) unnormalized
    std::vector<float> ncoords = load<float>("ncoords.bin");  // (x, y, z) normalized
    std::vector<unsigned char> rgba = load<unsigned char>("rgba.bin");  // H x W uchar4
    std::vector<int> ints = load<int>("ints.bin");
    std::vector<signed char> bytes = load<signed char>("bytes.bin");
    const int n = static_cast<int>(coords.size() / 3);
    const cudaChannelFormatDesc fdesc = cudaCreateChannelDesc<float>();
    const size_t row = W * sizeof(float);

    // The image as a pitched 2-D buffer and as a 2-D CUDA array.
    float* pitched = nullptr;
    size_t pitch = 0;
    check(cudaMallocPitch(reinterpret_cast<void**>(&pitched), &pitch, row, H) == cudaSuccess && pitch > row, "pitch");
    cudaMemcpy2D(pitched, pitch, volume.data(), row, row, H, cudaMemcpyHostToDevice);
    cudaResourceDesc pres;
    std::memset(&pres, 0, sizeof pres);
    pres.resType = cudaResourceTypePitch2D;
    pres.res.pitch2D.devPtr = pitched;
    pres.res.pitch2D.desc = fdesc;
    pres.res.pitch2D.width = W;
    pres.res.pitch2D.height = H;
    pres.res.pitch2D.pitchInBytes = pitch;

    cudaArray_t array = nullptr;
    check(cudaMallocArray(&array, &fdesc, W, H) == cudaSuccess, "cudaMallocArray");
    check(cudaMemcpy2DToArray(array, 0, 0, volume.data(), row, row, H, cudaMemcpyHostToDevice) == cudaSuccess, "to array");
    std::vector<float> back(W * H, -1.0f);
    check(cudaMemcpy2DFromArray(back.data(), row, array, 0, 0, row, H, cudaMemcpyDeviceToHost) == cudaSuccess, "from array");
    check(std::memcmp(back.data(), volume.data(), row * H) == 0, "array round trip");
    check(cudaMemcpy2DToArray(array, 4, 0, volume.data(), row, row, H, cudaMemcpyHostToDevice) == cudaErrorInvalidValue, "bounds");
    cudaGetLastError();
    cudaResourceDesc ares;
    std::memset(&ares, 0, sizeof ares);
    ares.resType = cudaResourceTypeArray;
    ares.res.array.array = array;

    std::vector<float> out2d;
    for (const cudaResourceDesc* res : {&pres, &ares})
        for (int filter = 0; filter < 2; ++filter)
            for (int mode = 0; mode < 4; ++mode)
                for (int normalized = 0; normalized < 2; ++normalized) {
                    cudaTextureObject_t t = make_texture(*res, mode, filter, cudaReadModeElementType, normalized);
                    const std::vector<float>& c = normalized ? ncoords : coords;
                    const size_t base = out2d.size();
                    out2d.resize(base + static_cast<size_t>(n));
                    #pragma omp parallel for
                    for (int i = 0; i < n; ++i) out2d[base + static_cast<size_t>(i)] = tex2D<float>(t, c[3 * i], c[3 * i + 1]);
                    if (res == &pres && filter == 0 && mode == 0 && normalized == 0) {
                        cudaResourceDesc got;
                        check(cudaGetTextureObjectResourceDesc(&got, t) == cudaSuccess, "resource desc");
                        check(got.resType == cudaResourceTypePitch2D && got.res.pitch2D.devPtr == pitched &&
                              got.res.pitch2D.pitchInBytes == pitch && got.res.pitch2D.desc.x == 32, "resource desc fields");
                    }
                    check(cudaDestroyTextureObject(t) == cudaSuccess, "destroy");
                    check(tex2D<float>(t, 1.0f, 1.0f) == 0.0f, "destroyed texture reads 0");
                }
    save("tex2d.bin", out2d);

    // 1-D array (cudaMemcpyToArray), linear filtering, normalized coordinates, wrap.
    cudaArray_t line = nullptr;
    check(cudaMallocArray(&line, &fdesc, W) == cudaSuccess, "1-D array");
    check(cudaMemcpyToArray(line, 0, 0, volume.data(), row, cudaMemcpyHostToDevice) == cudaSuccess, "cudaMemcpyToArray");
    cudaResourceDesc lres;
    std::memset(&lres, 0, sizeof lres);
    lres.resType = cudaResourceTypeArray;
    lres.res.array.array = line;
    std::vector<float> out1d(static_cast<size_t>(n));
    {
        cudaTextureObject_t t = make_texture(lres, cudaAddressModeWrap, cudaFilterModeLinear, cudaReadModeElementType, 1);
        for (int i = 0; i < n; ++i) out1d[static_cast<size_t>(i)] = tex1D<float>(t, ncoords[3 * i]);
        cudaDestroyTextureObject(t);
    }
    save("tex1d.bin", out1d);

    // 3-D array filled by cudaMemcpy3D: linear + clamp, point + border, unnormalized; mirror normalized.
    cudaArray_t vol = nullptr;
    check(cudaMalloc3DArray(&vol, &fdesc, make_cudaExtent(W, H, D)) == cudaSuccess, "3-D array");
    cudaMemcpy3DParms up;
    std::memset(&up, 0, sizeof up);
    up.srcPtr = make_cudaPitchedPtr(volume.data(), row, W, H);
    up.dstArray = vol;
    up.extent = make_cudaExtent(W, H, D);
    up.kind = cudaMemcpyHostToDevice;
    check(cudaMemcpy3D(&up) == cudaSuccess, "cudaMemcpy3D to array");
    cudaResourceDesc vres;
    std::memset(&vres, 0, sizeof vres);
    vres.resType = cudaResourceTypeArray;
    vres.res.array.array = vol;
    std::vector<float> out3d;
    const int modes3[3][3] = {{cudaAddressModeClamp, cudaFilterModeLinear, 0}, {cudaAddressModeBorder, cudaFilterModePoint, 0},
                              {cudaAddressModeMirror, cudaFilterModeLinear, 1}};
    for (const auto& m : modes3) {
        cudaTextureObject_t t = make_texture(vres, m[0], m[1], cudaReadModeElementType, m[2]);
        const std::vector<float>& c = m[2] ? ncoords : coords;
        for (int i = 0; i < n; ++i) out3d.push_back(tex3D<float>(t, c[3 * i], c[3 * i + 1], c[3 * i + 2]));
        cudaDestroyTextureObject(t);
    }
    save("tex3d.bin", out3d);

    // Layered 2-D array (two layers: slices 0 and 1), linear + clamp.
    cudaArray_t layered = nullptr;
    check(cudaMalloc3DArray(&layered, &fdesc, make_cudaExtent(W, H, 2), cudaArrayLayered) == cudaSuccess, "layered array");
    up.dstArray = layered;
    up.extent = make_cudaExtent(W, H, 2);
    check(cudaMemcpy3D(&up) == cudaSuccess, "cudaMemcpy3D to layered array");
    cudaResourceDesc yres = vres;
    yres.res.array.array = layered;
    std::vector<float> outlayered;
    {
        cudaTextureObject_t t = make_texture(yres, cudaAddressModeClamp, cudaFilterModeLinear, cudaReadModeElementType, 0);
        for (int layer = 0; layer < 2; ++layer)
            for (int i = 0; i < n; ++i) outlayered.push_back(tex2DLayered<float>(t, coords[3 * i], coords[3 * i + 1], layer));
        cudaDestroyTextureObject(t);
    }
    save("layered.bin", outlayered);

    // uchar4 array: normalizedFloat (point and linear) and element-type reads.
    cudaArray_t pixels = nullptr;
    const cudaChannelFormatDesc udesc = cudaCreateChannelDesc<uchar4>();
    check(udesc.x == 8 && udesc.w == 8 && udesc.f == cudaChannelFormatKindUnsigned, "uchar4 desc");
    check(cudaMallocArray(&pixels, &udesc, W, H) == cudaSuccess, "uchar4 array");
    cudaMemcpy2DToArray(pixels, 0, 0, rgba.data(), W * 4, W * 4, H, cudaMemcpyHostToDevice);
    cudaResourceDesc ures = ares;
    ures.res.array.array = pixels;
    std::vector<float> outrgba;
    std::vector<unsigned char> outbytes;
    for (int filter = 0; filter < 2; ++filter) {
        cudaTextureObject_t t = make_texture(ures, cudaAddressModeClamp, filter, cudaReadModeNormalizedFloat, 0);
        for (int i = 0; i < n; ++i) {
            float4 v = tex2D<float4>(t, coords[3 * i], coords[3 * i + 1]);
            outrgba.insert(outrgba.end(), {v.x, v.y, v.z, v.w});
        }
        cudaDestroyTextureObject(t);
    }
    {
        cudaTextureObject_t t = make_texture(ures, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0);
        for (int i = 0; i < n; ++i) {
            uchar4 v = tex2D<uchar4>(t, coords[3 * i], coords[3 * i + 1]);
            outbytes.insert(outbytes.end(), {v.x, v.y, v.z, v.w});
        }
        cudaDestroyTextureObject(t);
    }
    save("rgba_norm.bin", outrgba);
    save("rgba_elem.bin", outbytes);

    // tex1Dfetch over linear memory: int, float2 and normalized signed char; 0 outside.
    int* dints = nullptr;
    cudaMalloc(&dints, ints.size() * sizeof(int));
    cudaMemcpy(dints, ints.data(), ints.size() * sizeof(int), cudaMemcpyHostToDevice);
    cudaResourceDesc ires;
    std::memset(&ires, 0, sizeof ires);
    ires.resType = cudaResourceTypeLinear;
    ires.res.linear.devPtr = dints;
    ires.res.linear.desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindSigned);
    ires.res.linear.sizeInBytes = ints.size() * sizeof(int);
    cudaResourceDesc f2res = ires;
    f2res.res.linear.desc = cudaCreateChannelDesc<float2>();
    cudaResourceDesc bres = ires;
    bres.res.linear.devPtr = bytes.data();
    bres.res.linear.desc = cudaCreateChannelDesc<signed char>();
    bres.res.linear.sizeInBytes = bytes.size();
    cudaTextureObject_t ti = make_texture(ires, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0);
    cudaTextureObject_t tf2 = make_texture(f2res, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeElementType, 0);
    cudaTextureObject_t tb = make_texture(bres, cudaAddressModeClamp, cudaFilterModePoint, cudaReadModeNormalizedFloat, 0);
    const int count = static_cast<int>(ints.size());
    std::vector<int> fetched_ints;
    std::vector<float> fetched_pairs, fetched_bytes;
    for (int i = -2; i < count + 2; ++i) {
        fetched_ints.push_back(tex1Dfetch<int>(ti, i));
        const float2 pair = tex1Dfetch<float2>(tf2, i);
        fetched_pairs.insert(fetched_pairs.end(), {pair.x, pair.y});
    }
    for (int i = -1; i < static_cast<int>(bytes.size()) + 1; ++i) fetched_bytes.push_back(tex1Dfetch<float>(tb, i));
    save("fetch_ints.bin", fetched_ints);
    save("fetch_pairs.bin", fetched_pairs);
    save("fetch_bytes.bin", fetched_bytes);
    check(tex1Dfetch<int>(0, 0) == 0 && tex2D<float>(987654321ull, 0.5f, 0.5f) == 0.0f, "invalid handles read 0");
    cudaDestroyTextureObject(ti);
    cudaDestroyTextureObject(tf2);
    cudaDestroyTextureObject(tb);

    check(cudaFreeArray(array) == cudaSuccess && cudaFreeArray(line) == cudaSuccess && cudaFreeArray(vol) == cudaSuccess &&
          cudaFreeArray(layered) == cudaSuccess && cudaFreeArray(pixels) == cudaSuccess, "cudaFreeArray");
    cudaFree(pitched);
    cudaFree(dints);
    check(cudaGetLastError() == cudaSuccess, "no error left");
    std::printf("OK\n");
    return 0;
}
"""


# ---------------------------------------------------------------- Python model of the texture unit
def address(i: int, n: int, mode: int, normalized: bool) -> tuple[int, bool]:
    if not normalized and mode in (WRAP, MIRROR):
        mode = CLAMP
    if mode == BORDER:
        return i, 0 <= i < n
    if mode == WRAP:
        return i % n, True
    if mode == MIRROR:
        m = i % (2 * n)
        return (m if m < n else 2 * n - 1 - m), True
    return min(max(i, 0), n - 1), True


def texel(data: np.ndarray, index: list[int]) -> np.ndarray:
    """data[z][y][x][channel], index (x, y, z) already addressed."""
    return data[index[2], index[1], index[0]].astype(np.float64)


def sample(data: np.ndarray, coord, dims: int, linear: bool, mode: int, normalized: bool) -> np.ndarray:
    sizes = [data.shape[2], data.shape[1], data.shape[0]]
    base, weight = [0, 0, 0], [0.0, 0.0, 0.0]
    for d in range(dims):
        u = np.float32(coord[d])
        if normalized:
            u = np.float32(u * np.float32(sizes[d]))
        if linear:
            u = np.float32(u - np.float32(0.5))
            base[d] = int(np.floor(u))
            weight[d] = float(np.rint((u - np.floor(u)) * 256.0)) / 256.0  # 9-bit fixed point, 8 fraction bits
        else:
            base[d] = int(np.floor(u))
    total = np.zeros(data.shape[3])
    for corner in range(1 << dims if linear else 1):
        index, inside, w = [0, 0, 0], True, 1.0
        for d in range(dims):
            upper = (corner >> d) & 1
            index[d], ok = address(base[d] + upper, sizes[d], mode, normalized)
            inside = inside and ok
            w *= weight[d] if upper else 1.0 - weight[d]
        value = texel(data, index) if inside else np.zeros(data.shape[3])
        if not linear:
            return value
        total += w * value
    return total


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    """Build and run the program once; return its directory and inputs."""
    work = tmp_path_factory.mktemp("textures")
    rng = np.random.default_rng(7)
    volume = rng.uniform(-4, 4, size=(D, H, W)).astype(np.float32)
    n = 60
    coords = np.stack([rng.uniform(-2.5, W + 2.5, n), rng.uniform(-2.5, H + 2.5, n), rng.uniform(-1.5, D + 1.5, n)], axis=1)
    coords[:12, :2] = [[0, 0], [0.5, 0.5], [1, 2], [4.999, 3.999], [5, 4], [-0.25, 1.75], [2.5, 2.5], [1.25, 0.75],
                       [-1, -1], [6.5, 2], [2.001953125, 1.998046875], [3.5, -0.5]]
    ncoords = np.stack([rng.uniform(-1.5, 2.5, n), rng.uniform(-1.5, 2.5, n), rng.uniform(-1.5, 2.5, n)], axis=1)
    ncoords[:4, :2] = [[0, 0], [0.5, 0.5], [1, 1], [0.1, 0.9]]
    rgba = rng.integers(0, 256, size=(H, W, 4), dtype=np.uint8)
    ints = rng.integers(-(2**31), 2**31 - 1, size=10, dtype=np.int32)  # also float2 pairs: 5 of them
    ints[:2] = [2**31 - 1, -(2**31)]
    raw = np.array([-128, -127, -1, 0, 1, 64, 127], dtype=np.int8)
    volume.tofile(work / "volume.bin")
    coords.astype(np.float32).tofile(work / "coords.bin")
    ncoords.astype(np.float32).tofile(work / "ncoords.bin")
    rgba.tofile(work / "rgba.bin")
    ints.tofile(work / "ints.bin")
    raw.tofile(work / "bytes.bin")
    exe = build({"textures.cpp": PROGRAM}, work, "textures")
    assert run(exe).strip() == "OK"  # runs in its own directory
    inputs = dict(volume=volume, coords=coords.astype(np.float32), ncoords=ncoords.astype(np.float32), rgba=rgba, ints=ints, raw=raw)
    return work, inputs


def test_tex2d_point_and_linear_on_pitched_memory_and_arrays_in_every_address_mode(fetched):
    work, inp = fetched
    image = inp["volume"][:1, :, :, None]
    got = np.fromfile(work / "tex2d.bin", dtype=np.float32)
    expected = []
    for _resource in ("pitch2D", "array"):
        for linear in (False, True):
            for mode in (WRAP, CLAMP, MIRROR, BORDER):
                for normalized in (False, True):
                    coords = inp["ncoords"] if normalized else inp["coords"]
                    expected += [sample(image, c, 2, linear, mode, normalized)[0] for c in coords]
    expected = np.array(expected)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=2e-6)
    # Point sampling is exact; texel i covers [i, i + 1): (0.999.., 1) reads texel 0 in x.
    n = len(inp["coords"])
    np.testing.assert_array_equal(got[:n], expected[:n].astype(np.float32))
    assert got[0] == image[0, 0, 0, 0] and got[2] == image[0, 2, 1, 0]
    # Linear filtering at texel centres returns the texel itself; the 1/256 weights are visible.
    clamp_linear = got[10 * n:11 * n]  # pitch2D, linear, clamp, unnormalized: ((0 * 2 + 1) * 4 + 1) * 2 + 0
    assert clamp_linear[1] == image[0, 0, 0, 0]


def test_linear_weights_are_quantized_to_1_256():
    """The model's quantization matters: a weight of 0.0078125 + tiny is not 1/128 + tiny."""
    data = np.array([0.0, 256.0], dtype=np.float32).reshape(1, 1, 2, 1)
    value = sample(data, (0.5 + 0.00390625 * 1.4, 0, 0), 1, True, CLAMP, False)[0]
    assert value == 1.0  # 1.4/256 rounds to 1/256


def test_tex1d_tex3d_and_layered_fetches(fetched):
    work, inp = fetched
    volume = inp["volume"][:, :, :, None]
    got1 = np.fromfile(work / "tex1d.bin", dtype=np.float32)
    line = inp["volume"][:1, :1, :, None]
    np.testing.assert_allclose(got1, [sample(line, c, 1, True, WRAP, True)[0] for c in inp["ncoords"]], rtol=1e-6, atol=2e-6)
    got3 = np.fromfile(work / "tex3d.bin", dtype=np.float32)
    expected3 = [sample(volume, c, 3, True, CLAMP, False)[0] for c in inp["coords"]]
    expected3 += [sample(volume, c, 3, False, BORDER, False)[0] for c in inp["coords"]]
    expected3 += [sample(volume, c, 3, True, MIRROR, True)[0] for c in inp["ncoords"]]
    np.testing.assert_allclose(got3, expected3, rtol=1e-6, atol=4e-6)
    gotl = np.fromfile(work / "layered.bin", dtype=np.float32)
    expectedl = [sample(volume[layer:layer + 1], c, 2, True, CLAMP, False)[0] for layer in (0, 1) for c in inp["coords"]]
    np.testing.assert_allclose(gotl, expectedl, rtol=1e-6, atol=2e-6)


def test_uchar4_normalized_float_and_element_reads(fetched):
    work, inp = fetched
    rgba = inp["rgba"][None].astype(np.float64)
    got = np.fromfile(work / "rgba_norm.bin", dtype=np.float32).reshape(-1, 4)
    expected = [sample(rgba / 255.0, c, 2, linear, CLAMP, False) for linear in (False, True) for c in inp["coords"]]
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-6, atol=1e-6)
    assert got.min() >= 0.0 and got.max() <= 1.0
    elements = np.fromfile(work / "rgba_elem.bin", dtype=np.uint8).reshape(-1, 4)
    np.testing.assert_array_equal(elements, [sample(rgba, c, 2, False, CLAMP, False) for c in inp["coords"]])


def test_tex1dfetch_over_linear_memory(fetched):
    work, inp = fetched
    ints, raw = inp["ints"], inp["raw"]
    got = np.fromfile(work / "fetch_ints.bin", dtype=np.int32)
    np.testing.assert_array_equal(got, np.concatenate([[0, 0], ints, [0, 0]]))  # exact for every int32
    pairs = np.fromfile(work / "fetch_pairs.bin", dtype=np.float32).reshape(-1, 2)
    as_pairs = ints.view(np.float32).reshape(-1, 2)
    indices = range(-2, len(ints) + 2)
    expected = [as_pairs[i] if 0 <= i < len(as_pairs) else [0, 0] for i in indices]
    np.testing.assert_array_equal(pairs.view(np.uint32), np.array(expected, dtype=np.float32).view(np.uint32))
    got_bytes = np.fromfile(work / "fetch_bytes.bin", dtype=np.float32)
    expected_bytes = np.concatenate([[0], np.maximum(raw / 127.0, -1.0), [0]]).astype(np.float32)
    np.testing.assert_array_equal(got_bytes, expected_bytes)


# ---------------------------------------------------------------- a whole program, translated
WHOLE_PROGRAM = r"""
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__device__ float blur(cudaTextureObject_t tex, float x, float y) {
    return 0.25f * (tex2D<float>(tex, x - 1.0f, y) + tex2D<float>(tex, x + 1.0f, y) +
                    tex2D<float>(tex, x, y - 1.0f) + tex2D<float>(tex, x, y + 1.0f));
}

__global__ void filter(cudaTextureObject_t tex, cudaTextureObject_t offsets, float* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float4 shift = tex1Dfetch<float4>(offsets, y);
    out[y * w + x] = blur(tex, x + 0.5f, y + 0.5f) + shift.x + shift.w;
}

int main() {
    const int w = 13, h = 7;
    float image[w * h];
    for (int i = 0; i < w * h; ++i) image[i] = (float)((i * 37) % 23);
    float4 shifts[h];
    for (int y = 0; y < h; ++y) shifts[y] = make_float4((float)y, 0.0f, 0.0f, 0.5f);

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    cudaMallocArray(&array, &desc, w, h);
    cudaMemcpy2DToArray(array, 0, 0, image, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    struct cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof(td));
    td.addressMode[0] = cudaAddressModeClamp;
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess) { printf("FAIL create\n"); return 1; }

    float4* d_shifts;
    cudaMalloc(&d_shifts, sizeof(shifts));
    cudaMemcpy(d_shifts, shifts, sizeof(shifts), cudaMemcpyHostToDevice);
    cudaResourceDesc lres = {};
    lres.resType = cudaResourceTypeLinear;
    lres.res.linear.devPtr = d_shifts;
    lres.res.linear.desc = cudaCreateChannelDesc<float4>();
    lres.res.linear.sizeInBytes = sizeof(shifts);
    cudaTextureDesc ltd = {};
    cudaTextureObject_t offsets = 0;
    cudaCreateTextureObject(&offsets, &lres, &ltd, NULL);

    float* d_out;
    cudaMalloc(&d_out, w * h * sizeof(float));
    dim3 block(8, 4), grid((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
    filter<<<grid, block>>>(tex, offsets, d_out, w, h);
    cudaDeviceSynchronize();
    float out[w * h];
    cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost);

    int bad = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int xl = x > 0 ? x - 1 : 0, xr = x < w - 1 ? x + 1 : w - 1, yu = y > 0 ? y - 1 : 0, yd = y < h - 1 ? y + 1 : h - 1;
            float expect = 0.25f * (image[y * w + xl] + image[y * w + xr] + image[yu * w + x] + image[yd * w + x]) + y + 0.5f;
            if (out[y * w + x] != expect) ++bad;
        }
    cudaDestroyTextureObject(tex);
    cudaDestroyTextureObject(offsets);
    cudaFreeArray(array);
    cudaFree(d_shifts);
    cudaFree(d_out);
    printf("%s\n", bad == 0 ? "PASS" : "FAIL");
    return bad != 0;
}
"""


def test_textured_kernels_parse_as_supported():
    mod = parse_cuda(WHOLE_PROGRAM, "filter.cu")
    assert mod.diagnostics == []
    assert not [f for f in mod.kernel("filter").features if f.startswith("unsupported:")]
    surf = parse_cuda("__global__ void s(cudaSurfaceObject_t t, float* o) { o[0] = surf2Dread<float>(t, 0, 0); }", "s.cu")
    assert "unsupported:surfaces" in surf.kernel("s").features


def test_a_whole_program_with_texture_objects_is_translated_built_and_run(tmp_path: Path):
    translated = translate_file(WHOLE_PROGRAM, "filter.cu")
    assert translated.unsupported == []
    cpp = tmp_path / "filter.cpp"
    cpp.write_text(translated.cpp)
    exe = tmp_path / "filter"
    result = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), str(cpp), "-o", str(exe)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    ran = subprocess.run([str(exe)], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert ran.returncode == 0 and ran.stdout.strip() == "PASS", ran.stdout + ran.stderr
