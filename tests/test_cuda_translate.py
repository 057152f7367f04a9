"""Unsupported constructs, lower_task against a numpy reference, translate_file, `agent lower`."""

from pathlib import Path

import pytest

from sandboxes import LocalSandbox
from tools.cuda import LoweringError, lower_source, lower_task, translate_file
from tools.spec import load_task, parse_task
from tools.verify import check

from cuda_fixtures.build import build_and_run

ROOT = Path(__file__).resolve().parents[1]

UNSUPPORTED = r"""
__global__ void uses_asm(int* x) {
    int lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    x[threadIdx.x] = lane;
}

__global__ void uses_texture(cudaTextureObject_t tex, float* out) {
    out[threadIdx.x] = surf2Dread<float>(tex, threadIdx.x * 4, 0);  // surfaces stay unsupported
}

__global__ void barrier_in_switch(float* x, int k) {
    switch (k) {
        case 0: x[threadIdx.x] += 1.0f; __syncthreads(); break;
        default: break;
    }
}

__global__ void fine(float* x) { x[threadIdx.x] *= 2.0f; }
"""


def test_unsupported_constructs_are_reported_with_feature_file_and_line():
    mod = lower_source(UNSUPPORTED, "bad.cu")
    found = {(u.feature, u.file, u.line) for u in mod.unsupported}
    assert found == {("inline PTX asm", "bad.cu", 4), ("surfaces", "bad.cu", 9),
                     ("barrier in switch", "bad.cu", 13)}
    assert [k.name for k in mod.kernels if k.lowered] == ["fine"]
    # The unsupported kernels become stubs that stop with the diagnostic, never wrong code.
    assert 'cudacpu::unsupported("bad.cu:4: unsupported inline PTX asm' in mod.cpp


def test_lower_task_names_the_unsupported_construct():
    task = parse_task({
        "name": "t", "cuda_code": UNSUPPORTED,
        "buffers": [{"name": "x", "dtype": "float32", "shape": [32], "role": "inout"}],
        "scalars": [{"name": "k", "dtype": "int32", "value": 0}],
        "launches": [{"kernel": "barrier_in_switch", "grid": [1], "block": [32], "args": ["x", "k"]}],
        "reference": {"kind": "lowered"},
    })
    with pytest.raises(LoweringError, match=r"t\.cu:13: unsupported barrier in switch"):
        lower_task(task)


@pytest.mark.parametrize("name", ["block_sum", "matmul_tiled"])
def test_lower_task_matches_the_numpy_reference_with_one_and_two_threads(name, tmp_path):
    task_file = next((ROOT / "examples" / "kernels" / name).glob("task.json"))
    task = load_task(task_file)
    cpp = lower_task(task)
    assert f'extern "C" void {task.entry_name}(' in cpp
    with LocalSandbox(root=tmp_path) as sandbox:
        report = check(task, cpp, sandbox, seeds=[task.inputs.seed], threads=[1, 2])
    assert report.status == "correct", report.summary()


PROGRAM = r"""
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdio>

__constant__ float scale[4];

template <typename T, int UNROLL>
__global__ void axpb(const T* x, T* y, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
    for (int u = 0; u < UNROLL; ++u)
        if (i + u < n) y[i + u] = x[i + u] * scale[0] + scale[1];
}

__global__ void to_half(const float* x, __half* h, float* back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        h[i] = __float2half(x[i]);
        back[i] = __half2float(h[i] * __float2half(2.0f));
    }
}

int main() {
    const int n = 1000;
    float hx[n], hy[n], hb[n];
    for (int i = 0; i < n; ++i) hx[i] = i * 0.25f;
    float hs[4] = {3.0f, 0.5f, 0.0f, 0.0f};
    cudaMemcpyToSymbol(scale, hs, sizeof(hs));
    float *dx, *dy, *db;
    __half* dh;
    cudaMalloc(&dx, n * sizeof(float));
    cudaMalloc(&dy, n * sizeof(float));
    cudaMalloc(&db, n * sizeof(float));
    cudaMalloc(&dh, n * sizeof(__half));
    cudaMemcpy(dx, hx, n * sizeof(float), cudaMemcpyHostToDevice);
    axpb<float, 4><<<(n + 255) / 256, 64>>>(dx, dy, n);
    to_half<<<dim3((n + 127) / 128), dim3(128), 0, 0>>>(dx, dh, db, n);
    cudaDeviceSynchronize();
    cudaMemcpy(hy, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(hb, db, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) {
        if (hy[i] != hx[i] * 3.0f + 0.5f) { std::printf("axpb %d: %f\n", i, hy[i]); return 1; }
        float want = 2.0f * hx[i];
        if ((want - hb[i]) > 1e-3f * want + 1e-3f || (hb[i] - want) > 1e-3f * want + 1e-3f) {
            std::printf("half %d: %f vs %f\n", i, hb[i], want); return 1; }
    }
    std::printf("PASS\n");
    return 0;
}
"""


def test_translate_file_keeps_host_code_and_rewrites_launches(tmp_path):
    mod = translate_file(PROGRAM, "prog.cu")
    assert mod.unsupported == []
    assert "cudacpu_kernels::axpb<float, 4>(dim3((n + 255) / 256), dim3(64), 0, dx, dy, n)" in mod.cpp
    assert "cudaMemcpyToSymbol(scale, hs, sizeof(hs));" in mod.cpp  # host code as written
    assert build_and_run(mod.cpp, "", tmp_path).strip() == "PASS"


def test_agent_lower_command(tmp_path):
    from agent.commands import lower

    src = tmp_path / "bad.cu"
    src.write_text(UNSUPPORTED)
    out = tmp_path / "out" / "bad.cpp"
    assert lower.run(src, out=out, kernels=["fine"]) == 0
    assert "void fine(dim3 gridDim, dim3 blockDim, std::size_t /*dynamicSharedBytes*/, float* x)" in out.read_text()
    assert lower.run(src, out=out, kernels=[]) == 1  # unsupported kernels listed, exit status 1
