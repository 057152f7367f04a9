"""CUDA as real applications write it, lowered and run with real g++ and OpenMP: macros in
device code, legacy warp-synchronous code, barriers under thread-dependent conditions,
deduced template arguments, explicit specializations and device-side asserts."""

import json
import os
import subprocess
from pathlib import Path

from tools.cuda import runtime_include_dir, translate_file

from cuda_fixtures.build import build_and_run, include_args


def run_port(source: str, tmp_path: Path, name: str = "prog") -> subprocess.CompletedProcess:
    """translate_file, g++, run with 2 threads: the completed process (stdout and stderr)."""
    cpp = tmp_path / f"{name}.cpp"
    cpp.write_text(translate_file(source, f"{name}.cu").cpp)
    exe = tmp_path / name
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), str(cpp),
                            "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    return subprocess.run([str(exe)], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"))


def build_and_run_port(main: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    """A ported main.cpp (with the port's headers beside it) built with g++ and run with 2 threads."""
    exe = tmp_path / "prog"
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), str(main),
                            "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    return subprocess.run([str(exe)], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"))


def run_routed(routed: str, tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess, Path]:
    """A translation with its launches routed through the capture header, built with g++ and run with 2
    threads capturing into tmp_path/captures: the run and that folder."""
    cpp, exe = tmp_path / f"{name}.cpp", tmp_path / name
    cpp.write_text(routed)
    project = Path(__file__).resolve().parents[1] / "tools" / "project"
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), "-I", str(project),
                            str(cpp), "-o", str(exe)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    captured = tmp_path / "captures"
    captured.mkdir()
    run = subprocess.run([str(exe)], capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="2", CUDACPU_CAPTURE_DIR=str(captured)))
    return run, captured


MACROS = r"""
#include <cstdio>
#define N 64
#define SCORE(i, j) score[(i) * N + (j)]
#define TID threadIdx.x
#define SHFL(v, d) __shfl_down_sync(0xffffffff, v, d)
#define CAT(a, b) a##b
#define STR(x) #x
__global__ void k(const int* in, int* out) {
  __shared__ int score[N * 2];
  int CAT(my, val) = in[TID];
  SCORE(0, TID) = myval;
  __syncthreads();
  int v = SCORE(0, (TID + 1) % N);
  v += SHFL(v, 16);
  out[TID] = v;
  if (TID == 0 && sizeof(STR(hello)) != 6) out[0] = -1;
}
int main() {
  int *in, *out;
  cudaMallocManaged(&in, N * 4); cudaMallocManaged(&out, N * 4);
  for (int i = 0; i < N; i++) in[i] = i;
  k<<<1, N>>>(in, out);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < N; i++) {
    int lane = i % 32, mine = (i + 1) % N, other = lane + 16 < 32 ? (i + 17) % N : mine;
    ok &= out[i] == mine + other;
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_project_macros_in_device_code_are_expanded_for_the_lowering(tmp_path):
    # The shared array is named only inside SCORE and the shuffle only inside SHFL: without the
    # expansion the lowering cannot see either (it crashed on the shuffle).
    assert build_and_run(translate_file(MACROS, "macros.cu").cpp, "", tmp_path).strip() == "PASS"


WARP_SYNCHRONOUS = r"""
#include <cstdio>
template <class T>
__device__ T scanwarp(T val, volatile T* sData) {
  int idx = 2 * threadIdx.x - (threadIdx.x & 31);
  sData[idx] = 0;
  idx += 32;
  T t = sData[idx] = val;
  sData[idx] = t = t + sData[idx - 1];
  sData[idx] = t = t + sData[idx - 2];
  sData[idx] = t = t + sData[idx - 4];
  sData[idx] = t = t + sData[idx - 8];
  sData[idx] = t = t + sData[idx - 16];
  return sData[idx] - val;
}
__global__ void scan(const int* in, int* out) {
  __shared__ int s[128];
  out[threadIdx.x] = scanwarp<int>(in[threadIdx.x], s);
}
__global__ void reduce(const float* in, float* out) {
  __shared__ volatile float s[64];
  int t = threadIdx.x;
  s[t] = in[t]; s[t + 32] = in[t + 32];
  if (t < 32) {
    s[t] += s[t + 32]; s[t] += s[t + 16]; s[t] += s[t + 8]; s[t] += s[t + 4]; s[t] += s[t + 2]; s[t] += s[t + 1];
  }
  if (t == 0) *out = s[0];
}
int main() {
  int *in, *out; float *f, *r;
  cudaMallocManaged(&in, 32 * 4); cudaMallocManaged(&out, 32 * 4);
  cudaMallocManaged(&f, 64 * 4); cudaMallocManaged(&r, 4);
  for (int i = 0; i < 32; i++) in[i] = i + 1;
  for (int i = 0; i < 64; i++) f[i] = i;
  scan<<<1, 32>>>(in, out);
  reduce<<<1, 32>>>(f, r);
  cudaDeviceSynchronize();
  int ok = 1, sum = 0;
  for (int i = 0; i < 32; i++) { ok &= out[i] == sum; sum += in[i]; }
  ok &= *r == 2016.0f;
  printf("%s %d %f\n", ok ? "PASS" : "FAIL", out[5], *r);
}
"""


def test_legacy_warp_synchronous_code_runs_in_lockstep(tmp_path):
    # A lane reads its neighbour's slot before the neighbour stores to it, as lockstep lanes do:
    # one thread after the other, lane 1 would read lane 0's new value.
    out = build_and_run(translate_file(WARP_SYNCHRONOUS, "warp.cu").cpp, "", tmp_path)
    assert out.split()[0] == "PASS", out


UNSYNCHRONIZED_SHARED = r"""
#include <cstdio>
// Each lane writes its row of the tile, then reads its column, with no barrier between: right
// only where a warp's lanes run each statement together, as warps did before Volta.
__global__ void through_tile(const int* in, int* out) {
  __shared__ int tile[32 * 33];
  int* row = &tile[threadIdx.x * 33];
  for (int i = 0; i < 32; i++) row[i] = in[threadIdx.x * 32 + i];
  int* column = tile + threadIdx.x;
  for (int i = 0; i < 32; i++) out[i * 32 + threadIdx.x] = column[i * 33];
}
int main() {
  int *in, *out;
  cudaMallocManaged(&in, 1024 * 4); cudaMallocManaged(&out, 1024 * 4);
  for (int i = 0; i < 1024; i++) in[i] = 7 * i + 1;
  through_tile<<<2, 32>>>(in, out);
  cudaDeviceSynchronize();
  int wrong = 0;
  for (int i = 0; i < 1024; i++) wrong += out[i] != in[i];
  printf("%s %d\n", wrong ? "FAIL" : "PASS", wrong);
}
"""


def test_shared_memory_of_a_kernel_without_barriers_is_run_in_lockstep(tmp_path):
    # One thread after the other, lane 0 would read rows that lanes 1..31 have not written yet.
    out = build_and_run(translate_file(UNSYNCHRONIZED_SHARED, "tile.cu").cpp, "", tmp_path)
    assert out.split()[0] == "PASS", out


NEIGHBOUR_PIPELINE = r"""
#include <cstdio>
#define N 64
#define STEPS 100
// A filter's sections as a pipeline: each step a thread takes its left neighbour's output of the
// step before and writes its own, with no barrier between the read and the write: right where
// the lanes of a warp all read before any of them writes.
__global__ void pipeline(const int* in, int* out, int steps) {
  __shared__ int stage[N];
  const int t = threadIdx.x;
  stage[t] = 0;
  __syncthreads();
  for (int n = 0; n < steps; n++) {
    int x = (t == 0) ? in[n] : stage[t - 1];
    stage[t] = x / 2 + t;
    __syncthreads();
  }
  out[t] = stage[t];
}
// A thread reads a later thread's slot before that thread writes it: the same in any order.
__global__ void tree_sum(const int* in, int* out) {
  __shared__ int s[N];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int stride = N / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) *out = s[0];
}
int main() {
  int *in, *out, *sum;
  cudaMallocManaged(&in, STEPS * 4); cudaMallocManaged(&out, N * 4); cudaMallocManaged(&sum, 4);
  for (int i = 0; i < STEPS; i++) in[i] = 1000 + 37 * i;
  pipeline<<<1, N>>>(in, out, STEPS);
  tree_sum<<<1, N>>>(in, sum);
  cudaDeviceSynchronize();
  int stage[N] = {0}, next[N];
  for (int n = 0; n < STEPS; n++) {
    for (int t = 0; t < N; t++) next[t] = (t == 0 ? in[n] : stage[t - 1]) / 2 + t;
    for (int t = 0; t < N; t++) stage[t] = next[t];
  }
  int wrong = 0, total = 0;
  for (int t = 0; t < N; t++) { wrong += out[t] != stage[t]; total += in[t]; }
  printf("%s %d %d\n", wrong || *sum != total ? "FAIL" : "PASS", wrong, *sum - total);
}
"""


def test_values_passed_to_a_neighbour_between_two_barriers_run_in_lockstep(tmp_path):
    """One thread after the other, thread t would read what thread t-1 wrote in the same step.
    Only the memory that needs it runs in lockstep: the tree reduction keeps its one loop."""
    lowered = translate_file(NEIGHBOUR_PIPELINE, "pipeline.cu").cpp
    kernels = {name: lowered.split(f"void {name}(")[1].split("\n}\n")[0] for name in ("pipeline", "tree_sum")}
    assert "lockstep_value" in kernels["pipeline"] and "lockstep_value" not in kernels["tree_sum"]
    out = build_and_run(lowered, "", tmp_path)
    assert out.split()[0] == "PASS", out


MACRO_LAUNCHES = r"""
#include <cstdio>
__device__ int hits[64];
template <unsigned int B> __device__ void warp_add(volatile int* s, int t) {
  if (B >= 64) s[t] += s[t + 32];
  if (B >= 32) s[t] += s[t + 16];
  if (B >= 16) s[t] += s[t + 8];
  if (B >= 8) s[t] += s[t + 4];
  if (B >= 4) s[t] += s[t + 2];
  if (B >= 2) s[t] += s[t + 1];
}
template <unsigned int B> __device__ void block_sum(const int* in, int* out) {
  __shared__ int s[B];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  if (t < 32) warp_add<B>(s, t);
  if (t == 0) *out = s[0];
}
__global__ void sum64(const int* in, int* out) { block_sum<64>(in, out); }
__global__ void mark(volatile int* flags) {
  int t = threadIdx.x;
  __syncthreads();
  if (flags[t] > 0) { hits[t] = 1; flags[t] = 2; }
}
#define RUN(k, blocks, threads) { k<<<blocks, threads>>>(); }
#define RUN_ARGS(k, blocks, threads, ...) \
  do { k <<< blocks, threads >>> (__VA_ARGS__); cudaDeviceSynchronize(); } while (0)
__global__ void clear() { hits[threadIdx.x] = 0; }
#define RUN_ONE(k) k<<<1, 1>>>()
__global__ void one() { hits[0] = 0; }
int main() {
  cudaFuncSetCacheConfig(clear, cudaFuncCachePreferL1);
  RUN_ONE(one);
  int *in, *out, *flags;
  cudaMallocManaged(&in, 64 * 4); cudaMallocManaged(&out, 4); cudaMallocManaged(&flags, 64 * 4);
  for (int i = 0; i < 64; i++) { in[i] = i; flags[i] = i % 3; }
  RUN(clear, 1, 64);
  RUN_ARGS(sum64, 1, 64, in, out);
  RUN_ARGS(mark, 1, 64, flags);
  int h[64];
  cudaMemcpyFromSymbol(h, hits, sizeof(h));
  int ok = *out == 2016;
  for (int i = 0; i < 64; i++) ok &= h[i] == (i % 3 > 0) && flags[i] == (i % 3 ? 2 : 0);
  printf("%s %d\n", ok ? "PASS" : "FAIL", *out);
}
"""


def test_launches_in_macros_templates_of_templates_and_volatile_conditions(tmp_path):
    # Launches written in macro bodies (the kernel a macro parameter), kernels named outside a
    # launch (`cudaFuncSetCacheConfig(clear, ...)`); `warp_add<B>` inlined from
    # inside the template `block_sum<64>`; a condition reading volatile memory in a kernel with barriers.
    out = build_and_run(translate_file(MACRO_LAUNCHES, "macros.cu").cpp, "", tmp_path)
    assert out.split()[0] == "PASS", out


DIVERGENT_BARRIER = r"""
#include <cstdio>
__global__ void k(const int* in, int* out, int n) {
  __shared__ int s[64];
  int t = threadIdx.x;
  if (t < n) {
    s[t] = in[t];
    __syncthreads();
    out[t] = s[(t + 1) % n];
  }
}
int main() {
  int *in, *out;
  cudaMallocManaged(&in, 64 * 4); cudaMallocManaged(&out, 64 * 4);
  for (int i = 0; i < 64; i++) in[i] = i;
  k<<<1, 64>>>(in, out, 64);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < 64; i++) ok &= out[i] == (i + 1) % 64;
  printf("uniform %s\n", ok ? "PASS" : "FAIL");
  fflush(stdout);
  k<<<1, 64>>>(in, out, 10);
  cudaDeviceSynchronize();
  for (int i = 0; i < 10; i++) ok &= out[i] == (i + 1) % 10;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_barrier_under_a_thread_dependent_condition_is_checked_at_run_time(tmp_path):
    run = run_port(DIVERGENT_BARRIER, tmp_path, "divergent")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["uniform", "PASS", "PASS"]
    # All 64 threads took the branch in the first launch: nothing said; 10 of 64 in the second.
    assert run.stderr.count("__syncthreads()") == 1
    assert "divergent.cu:8: __syncthreads() reached by 10 of the 64 threads" in run.stderr


TEMPLATES_AND_ASSERTS = r"""
#include <cassert>
#include <cstdio>
#include <cstdint>
template <typename T>
__global__ void fill(T* data, uint64_t n, T value) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value + (T)i;
}
template <typename T> __global__ void twice(T* x) { x[threadIdx.x] *= 2; }
template <> __global__ void twice<int>(int* x) { x[threadIdx.x] *= 3; }
__global__ void checked(int n) { assert(threadIdx.x < n); }
int main() {
  float* f; int* k;
  cudaMallocManaged(&f, 100 * sizeof(float)); cudaMallocManaged(&k, 32 * sizeof(int));
  fill<<<4, 32>>>(f, 100, 0.5f);       // T deduced from the arguments
  fill<<<1, 32>>>(k, (uint64_t)32, 1);
  twice<<<1, 32>>>(k);                 // the explicit specialization
  twice<<<1, 32>>>(f);
  cudaError_t before = cudaDeviceSynchronize();
  checked<<<1, 32>>>(16);
  cudaError_t after = cudaDeviceSynchronize();
  int ok = before == cudaSuccess && after == cudaErrorAssert;
  for (int i = 0; i < 100; i++) ok &= f[i] == (i < 32 ? 2 : 1) * (0.5f + i);
  for (int i = 0; i < 32; i++) ok &= k[i] == 3 * (1 + i);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_deduced_template_arguments_specializations_and_device_asserts(tmp_path):
    run = run_port(TEMPLATES_AND_ASSERTS, tmp_path, "templates")
    assert run.returncode == 0, run.stderr  # a failed device assert does not end the process
    assert run.stdout.strip() == "PASS"
    assert "checked: device-side Assertion `threadIdx.x < n` failed" in run.stderr


HOST_TEMPLATE = r"""
#include <cstdio>
template <typename T, typename Stride>
__global__ void gather(T* out, const T* in, int n, Stride stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i * stride];
}
template <typename I>
__global__ void count_to(I* c, const I n) { if (threadIdx.x == 0) *c = n; }
template <int Scale, typename T>
__global__ void scale(T* out, int n) { int i = threadIdx.x; if (i < n) out[i] *= Scale; }
template <typename T, typename I = int>
int run(int n) {
  T *in, *out;
  I* c;
  cudaMallocManaged(&in, 2 * n * sizeof(T)); cudaMallocManaged(&out, n * sizeof(T)); cudaMallocManaged(&c, sizeof(I));
  for (int i = 0; i < 2 * n; i++) in[i] = (T)i;
  gather<<<(n + 63) / 64, 64>>>(out, in, n, 2);  // T and Stride deduced when run<T> is instantiated
  count_to<<<1, 32>>>(c, n);  // I bound twice: the host's I by c, int by n (equal in run<T, int>)
  scale<3><<<1, 32>>>(out, 32);  // Scale written, T deduced
  cudaDeviceSynchronize();
  int ok = *c == n;
  for (int i = 0; i < n; i++) ok &= out[i] == (T)(2 * i * (i < 32 ? 3 : 1));
  return ok;
}
int main() { printf("%s\n", run<float>(100) && run<double>(70) ? "PASS" : "FAIL"); }
"""


def test_a_launch_in_a_host_template_spells_the_arguments_it_deduces(tmp_path):
    """The port routes launches through a pointer to the lowered kernel (cuda_cpu_launch.h), which
    deduces nothing: `gather<<<...>>>(out, in, n, 2)` inside `run<T>` becomes `gather<T, int>`."""
    from tools.project.capture import instrument

    translated = translate_file(HOST_TEMPLATE, "host_template.cu").cpp
    routed, kernels = instrument(translated)
    assert kernels == ["gather", "count_to", "scale"] and "&cudacpu_kernels::gather<T, int>" in routed
    assert "&cudacpu_kernels::count_to<I>" in routed and "&cudacpu_kernels::scale<3, T>" in routed
    run, captured = run_routed(routed, tmp_path, "host_template")
    assert run.stdout.strip() == "PASS", run.stderr
    # The capture names the instantiation's types, not the host template's parameters: a kernel
    # task made of it compiles, and a tuned version is keyed by that specialization. Each
    # specialization is captured once, at its first launch, and its launches are timed.
    from tools.project.capture import read_captures, read_launch_times
    spelled = {c.label: c.template_args for c in read_captures(captured)}
    assert spelled == {"gather": "float, int", "gather__s1": "double, int", "count_to": "int",
                       "scale": "3, float", "scale__s1": "3, double"}
    launches = {key: n for key, (n, _) in read_launch_times(captured).items()}
    assert launches == {("gather", "float, int"): 1, ("gather", "double, int"): 1, ("count_to", "int"): 2,
                        ("scale", "3, float"): 1, ("scale", "3, double"): 1}
    # Past its byte budget the capture writes nothing more and says so; the run itself is unchanged.
    small = tmp_path / "small_captures"
    small.mkdir()
    run = subprocess.run([str(tmp_path / "host_template")], capture_output=True, text=True,
                         env=dict(os.environ, CUDACPU_CAPTURE_DIR=str(small), CUDACPU_CAPTURE_BYTES="1000"))
    assert run.stdout.strip() == "PASS", run.stderr
    problems = {c.label: c.problem() for c in read_captures(small)}
    assert "more than the capture may write" in problems["gather"] and problems["count_to"] is None
    assert (small / "gather.0.arg0.bin").is_file() and not (small / "gather.0.arg1.bin").exists()  # 400 B fit, 800 B not


VECTORS_AND_MODES = r"""
#include <cstdio>
enum Mode { COPY, SUM };
struct Particle { float x; int id; };
struct Twice { __device__ float operator()(float v) const { return 2 * v; } };
template <typename Op>
__global__ void combine(const float4* __restrict__ in, int2* out, Particle* ps, int n, Mode mode, Op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = in[i];
    out[i] = make_int2((int)v.x, mode == SUM ? (int)(v.y + v.z + v.w) : (int)v.y);
    ps[i].x += op(v.w) * ps[i].id;
  }
}
int main() {
  const int n = 1000;
  float4* in;
  int2* out;
  cudaMallocManaged(&in, n * sizeof(float4));
  cudaMallocManaged(&out, n * sizeof(int2));
  Particle* ps;
  cudaMallocManaged(&ps, n * sizeof(Particle));
  for (int i = 0; i < n; i++) { in[i] = make_float4(i, 1, 2, 3); ps[i] = Particle{0.5f, i % 3}; }
  combine<<<(n + 127) / 128, 128>>>(in, out, ps, n, SUM, Twice());
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= out[i].x == i && out[i].y == 6 && ps[i].x == 0.5f + 6 * (i % 3);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_vector_buffers_and_enum_arguments_are_captured_and_make_a_correct_task(tmp_path):
    """A float4 or int2 buffer is captured as its elements, a struct's as its bytes, an enum as its
    integer and a functor (an empty struct) as a placeholder: the kernel task made of the capture
    casts them back, makes the functor anew, and matches its lowered reference. A buffer past the
    process's file size limit is not written (which would kill the run): the capture says so."""
    import resource

    from sandboxes import open_sandbox
    from tools.cuda import lower_task
    from tools.project.capture import capture_to_task, instrument, read_captures, tuned_dispatch_source
    from tools.spec import load_task
    from tools.verify import check

    routed, _ = instrument(translate_file(VECTORS_AND_MODES, "vectors.cu").cpp)
    (tmp_path / "vectors.cpp").write_text(routed)
    project = Path(__file__).resolve().parents[1] / "tools" / "project"
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), "-I", str(project),
                            "vectors.cpp", "-o", "vectors"], cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    captured = tmp_path / "captures"
    captured.mkdir()
    run = subprocess.run(["./vectors"], cwd=tmp_path, capture_output=True, text=True,
                         env=dict(os.environ, OMP_NUM_THREADS="2", CUDACPU_CAPTURE_DIR=str(captured)))
    assert run.stdout.strip() == "PASS", run.stderr
    [capture] = read_captures(captured)
    assert capture.problem() is None
    assert [(a.kind, a.dtype) for a in capture.args] == [("pointer", "float32"), ("pointer", "int32"), ("pointer", "uint8"),
                                                         ("scalar", "int32"), ("scalar", "uint32"), ("scalar", "uint8")]
    assert capture.template_args == "Twice" and capture.args[-1].stateless
    task_path = capture_to_task(capture, VECTORS_AND_MODES, ["in", "out", "ps", "n", "mode", "op"], tmp_path / "task")
    task = load_task(task_path)
    assert [(b.shape, b.role) for b in task.buffers] == [([4000], "input"), ([2000], "inout"), ([8000], "inout")]
    with open_sandbox("local") as sandbox:
        report = check(task, lower_task(task), sandbox, threads=[2])
    assert report.correct, report.summary()
    # the task's code linked back into the program behind its dispatch (as a tuned version is)
    (tmp_path / "tuned.cpp").write_text(tuned_dispatch_source(capture, json.loads(task_path.read_text()), lower_task(task)))
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), "-I", str(project),
                            "vectors.cpp", "tuned.cpp", "-o", "tuned"], cwd=tmp_path, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run(["./tuned"], cwd=tmp_path, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert run.stdout.strip() == "PASS", run.stderr

    limited = tmp_path / "limited"
    limited.mkdir()
    run = subprocess.run(["./vectors"], cwd=tmp_path, capture_output=True, text=True,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (10000, 10000)),
                         env=dict(os.environ, CUDACPU_CAPTURE_DIR=str(limited)))
    assert run.returncode == 0 and run.stdout.strip() == "PASS", run.stderr
    [capture] = read_captures(limited)
    assert "more than the capture may write" in capture.problem()  # 16000 B of float4 past a 10000 B file limit


ASSIGNED_PARAMETERS = r"""
#include <cstdio>
__global__ void shift(const float* in, float* out, int n, int step) {
  in = &in[blockIdx.x * blockDim.x];
  out += blockIdx.x * blockDim.x;
  step++;
  __shared__ float s[64];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % 64] * step;
}
int main() {
  const int n = 256;
  float *in, *out;
  cudaMallocManaged(&in, n * 4); cudaMallocManaged(&out, n * 4);
  for (int i = 0; i < n; i++) in[i] = i;
  shift<<<n / 64, 64>>>(in, out, n, 1);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= out[i] == 2.0f * ((i / 64) * 64 + (i % 64 + 1) % 64);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_kernel_parameters_the_kernel_assigns_are_each_threads_own(tmp_path):
    """`in = &in[blockIdx.x * blockDim.x]`: every CUDA thread moves its own copy of the pointer;
    in the lowered kernel, whose parameters all blocks share, each thread gets a local copy."""
    run = run_port(ASSIGNED_PARAMETERS, tmp_path, "assigned")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "PASS"


HEADER_HELPERS = r"""
#pragma once
template <typename T>
__device__ T lane_swap(T x, int mask) {
  return __shfl_xor_sync(0xffffffff, x, mask);
}
template <int kRows, int kCols>
__device__ void butterfly(float x[kRows][kCols]) {
  for (int step = 1; step < 32; step *= 2)
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c)
        x[r][c] += __shfl_xor_sync(0xffffffff, x[r][c], step);
}
"""

HEADER_CALLER = r"""
#include <cstdio>
#include "helpers.cuh"
template <typename T, int kRows>
__global__ void k(const T* in, T* out) {
  constexpr int kCols = 2;
  T best = in[threadIdx.x];
  for (int m = 1; m < 32; m *= 2) best = max(best, lane_swap(best, m));
  float x[kRows][kCols];
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) x[r][c] = in[threadIdx.x] * (r + 1) + c;
  butterfly<kRows, kCols>(x);
  out[threadIdx.x] = best + x[kRows - 1][kCols - 1];
}
int main() {
  float *in, *out;
  cudaMallocManaged(&in, 64 * 4); cudaMallocManaged(&out, 64 * 4);
  for (int i = 0; i < 64; i++) in[i] = (i * 7) % 64;
  k<float, 3><<<1, 64>>>(in, out);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < 64; i++) {
    float best = 0, sum = 0;
    for (int j = i / 32 * 32; j < i / 32 * 32 + 32; j++) {
      best = in[j] > best ? in[j] : best;
      sum += in[j] * 3 + 1;
    }
    ok &= out[i] == best + sum;
  }
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_warp_functions_of_a_project_header_are_inlined_into_template_kernels(tmp_path):
    # The helpers live in a header whose own translation leaves them out (they synchronize):
    # the kernel that calls them must inline them, with the header's text, its template
    # arguments (deduced or given) and its array parameter as a pointer to the caller's array.
    src = tmp_path / "src"
    src.mkdir()
    (src / "helpers.cuh").write_text(HEADER_HELPERS)
    (src / "main.cu").write_text(HEADER_CALLER)
    port = tmp_path / "port"
    port.mkdir()
    (port / "helpers.cuh").write_text(translate_file(HEADER_HELPERS, str(src / "helpers.cuh")).cpp)
    (port / "main.cpp").write_text(translate_file(HEADER_CALLER, str(src / "main.cu")).cpp)
    run = build_and_run_port(port / "main.cpp", tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


STATIC_MEMBER_HEADER = r"""
#pragma once
#define SHFL_XOR(v, m) __shfl_xor_sync(0xffffffffu, v, m)
__device__ float dot(float a, float b) { return a * b; }  // a namesake: the class's is the one called
template <typename A, typename B> __device__ A convert(B b) { return A(b); }
template <int G, typename V, int N>
__device__ float group_sum(const V (&a)[N]) {
  float s = convert<float, V>(a[0]);
  for (int i = 1; i < N; i++) s += a[i];
  for (int m = G / 2; m >= 1; m /= 2) s += SHFL_XOR(s, m);
  return s;
}
template <typename T, int G>
struct Dot {
  template <typename V, int N>
  static __device__ float dot(const V (&a)[N]) { return group_sum<G>(a); }
};
"""

STATIC_MEMBER_CALLER = r"""
#include <cstdio>
#include "dot.cuh"
template <typename T, int G>
__device__ void body(const T* in, T* out) {
  constexpr int N = G / 2;
  __shared__ T rows[64][N];
  T a[N];
  for (int i = 0; i < N; i++) {
    a[i] = in[threadIdx.x] + i;
    rows[threadIdx.x][i] = in[threadIdx.x] - i;
  }
  __syncthreads();
  float s = Dot<T, G>::dot(a);
  s += Dot<T, G>::dot(rows[threadIdx.x ^ 1]);
  out[threadIdx.x] = s + a[N - 1];
}
template <typename T, int G>
__global__ void k(const T* in, T* out) { body<T, G>(in, out); }
int main() {
  const int n = 32;
  float *in, *out;
  cudaMallocManaged(&in, n * sizeof(float));
  cudaMallocManaged(&out, n * sizeof(float));
  for (int i = 0; i < n; i++) in[i] = i;
  k<float, 4><<<1, n>>>(in, out);
  cudaDeviceSynchronize();
  int wrong = 0;
  for (int i = 0; i < n; i++) {
    float e = in[i] + 1;
    for (int j = i / 4 * 4; j < i / 4 * 4 + 4; j++) e += 4 * in[j];
    wrong += out[i] != e;
  }
  printf("%s\n", wrong ? "FAIL" : "PASS");
}
"""


def test_a_warp_function_that_is_a_static_member_of_a_class_template_in_a_header(tmp_path):
    # `Dot<T, G>::dot(a)`: clang leaves the dependent call unresolved and a free `dot` shares the
    # name; the class's arguments come from the call's qualifier, V and N from the array reference
    # (whose extent is an inlined function's constexpr, in a local and in a shared array), passed on
    # to group_sum's; `convert<float, V>` names V; the header's shuffle macro is expanded.
    src = tmp_path / "src"
    src.mkdir()
    (src / "dot.cuh").write_text(STATIC_MEMBER_HEADER)
    (src / "main.cu").write_text(STATIC_MEMBER_CALLER)
    port = tmp_path / "port"
    port.mkdir()
    (port / "dot.cuh").write_text(translate_file(STATIC_MEMBER_HEADER, str(src / "dot.cuh")).cpp)
    (port / "main.cpp").write_text(translate_file(STATIC_MEMBER_CALLER, str(src / "main.cu")).cpp)
    run = build_and_run_port(port / "main.cpp", tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


BOOL_TEMPLATE_ARGUMENTS = r"""
#include <cstdio>
template <typename T, bool Add, unsigned Big> __global__ void k(T* x) { x[threadIdx.x] = Add ? Big % 7u : 0; }
int main() {
  const bool add = true;
  const unsigned big = 4000000000u;
  if (!add || big == 0) return 1;
  int* x;
  cudaMallocManaged(&x, 4 * sizeof(int));
  k<int, add, big><<<1, 4>>>(x);
  cudaDeviceSynchronize();
  printf("%d %d\n", x[0], x[3]);
}
"""


def test_bool_and_unsigned_template_arguments_are_spelled_as_cpp_does(tmp_path):
    # libclang reads `true` as -1 and 4000000000u as a negative int.
    out = build_and_run(translate_file(BOOL_TEMPLATE_ARGUMENTS, "flags.cu").cpp, "", tmp_path)
    assert out.split() == [str(4000000000 % 7)] * 2, out


UNNAMED_TEMPLATE_PARAMETERS = r"""
#include <cstdio>
#include <type_traits>
template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0,
          typename = void, int = 3, int Scale = 2>
__global__ void scale(T* a) { a[threadIdx.x] *= Scale; }
int main() {
  float* a;
  cudaMallocManaged(&a, 4 * sizeof(float));
  for (int i = 0; i < 4; i++) a[i] = i;
  scale<float><<<1, 4>>>(a);
  scale<float, 0, int, 7, 3><<<1, 4>>>(a);
  cudaDeviceSynchronize();
  printf("%g %g\n", a[1], a[3]);
}
"""


def test_unnamed_template_parameters_of_a_kernel_are_passed_on_by_its_launch(tmp_path):
    # SFINAE's `enable_if<...>::type = 0`, `typename = void`: the host stub names them to pass them on.
    out = build_and_run(translate_file(UNNAMED_TEMPLATE_PARAMETERS, "sfinae.cu").cpp, "", tmp_path)
    assert out.split() == ["6", "18"], out


COORDINATE_HEADER = r"""
#ifdef KERNEL_SIDE
__device__ inline int my_block() { return blockIdx.x * 10 + threadIdx.x; }
#endif
"""

COORDINATE_CALLER = r"""
#include <cstdio>
#define KERNEL_SIDE
#include "coords.h"
__global__ void k(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = my_block(); }
int main() {
  int* out;
  cudaMallocManaged(&out, 8 * sizeof(int));
  k<<<2, 4>>>(out);
  cudaDeviceSynchronize();
  printf("%d %d\n", out[1], out[6]);
}
"""


def test_a_device_function_of_a_header_reads_the_kernels_coordinates(tmp_path):
    # The header's function is compiled as the header writes it, only where the .cu defines
    # KERNEL_SIDE: the .cu's translation declares the coordinates the lowered kernel sets.
    src, port = tmp_path / "src", tmp_path / "port"
    src.mkdir()
    port.mkdir()
    (src / "coords.h").write_text(COORDINATE_HEADER)
    (port / "coords.h").write_text(translate_file(COORDINATE_HEADER, str(src / "coords.h")).cpp)
    (port / "main.cpp").write_text(translate_file(COORDINATE_CALLER, str(src / "main.cu")).cpp)
    run = build_and_run_port(port / "main.cpp", tmp_path)
    assert run.stdout.split() == ["1", "12"], run.stdout + run.stderr


def translated_program_output(translated: str, tmp_path: Path, name: str) -> str:
    """A translated whole program built with g++ against the runtime and run with 2 threads."""
    cpp = tmp_path / f"{name}.cpp"
    cpp.write_text(translated)
    exe = tmp_path / name
    build = subprocess.run(["g++", "-O2", "-fopenmp", "-std=c++17", *include_args(), str(cpp), "-o", str(exe)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="2"))
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


INSTANTIATED = r"""
#include <cstdio>
template <typename T, int BS>
__global__ void __launch_bounds__(BS) scale(const T* __restrict__ in, T* out, int n) {
  __shared__ T tile[BS];
  int i = blockIdx.x * BS + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : T(0);
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] * 3;
}
template __global__ void scale<float, 128>(const float* __restrict__, float*, int);
extern template __global__ void scale<double, 64>(const double* __restrict__ in, double* out, int n);
template __global__ void scale<double, 64>(const double* __restrict__ in, double* out, int n);
int main() {
  const int n = 300;
  float *in, *out;
  cudaMallocManaged(&in, n * sizeof(float)); cudaMallocManaged(&out, n * sizeof(float));
  for (int i = 0; i < n; i++) in[i] = i;
  cudaFuncAttributes attr;
  cudaFuncGetAttributes(&attr, scale<float, 128>);  // a template-id the parser leaves unresolved
  int blocks = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale<float, 128>, 128, 0);
  scale<float, 128><<<(n + 127) / 128, 128>>>(in, out, n);
  cudaDeviceSynchronize();
  int ok = blocks > 0;
  for (int i = 0; i < n; i++) ok &= out[i] == 3.0f * i;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_explicit_instantiations_and_unresolved_kernel_names(tmp_path):
    """`template __global__ void k<float, 128>(...);` instantiates the lowered template (its
    parameters start with the launch configuration); `k<float, 128>` passed to a runtime call
    that fixes no type (the parser leaves it unresolved) names the kernel's host stub."""
    translated = translate_file(INSTANTIATED, "instantiated.cu").cpp
    assert "template void cudacpu_kernels::scale< float , 128 >(dim3, dim3, std::size_t, const float" in translated
    assert "extern template void cudacpu_kernels::scale< double , 64 >" in translated
    assert "cudaFuncGetAttributes(&attr, scale<float, 128>)" in translated  # the kernel's host stub
    assert translated_program_output(translated, tmp_path, "instantiated") == "PASS"


KERNEL_POINTERS = r"""
#include <cstdio>
__global__ void add_one(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }
template <int F> __global__ void times(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= F; }
typedef void (*kernel_fn)(float*, int);
struct Step { kernel_fn run; int blocks; };
int main() {
  kernel_fn table[2] = {add_one, twice};
  Step steps[1] = {{&times<3>, 4}};
  float* d; cudaMallocManaged(&d, 100 * sizeof(float));
  for (int i = 0; i < 100; i++) d[i] = i;
  for (int v = 0; v < 2; v++) table[v]<<<4, 32, 0>>>(d, 100);
  steps[0].run<<<steps[0].blocks, 32>>>(d, 100);
  kernel_fn last = add_one;
  last<<<dim3(4), dim3(32)>>>(d, 100);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < 100; i++) ok &= d[i] == (i + 1) * 6.0f + 1.0f;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_pointers_to_kernels_and_launches_through_them(tmp_path):
    """A kernel's name outside a launch is its host stub, with the kernel's own parameters (as
    nvcc's); a launch through a pointer pushes its configuration and calls the stub."""
    translated = translate_file(KERNEL_POINTERS, "pointers.cu").cpp
    assert "cuda_cpu::push_launch_configuration(dim3(4), dim3(32), 0), (table[v]))(d, 100)" in translated
    assert translated_program_output(translated, tmp_path, "pointers") == "PASS"


VOLATILE_SWITCH = r"""
#include <cstdio>
// A switch on the thread that only sets volatile shared scalars, no barrier in it; the barriers
// come after, in a loop bounded by those scalars.
__global__ void strided_copy(const int* in, int* out) {
  volatile __shared__ int first, last;
  switch (threadIdx.x) {
    case 0: first = 0; break;
    case 1: last = 96; break;
    default: break;
  }
  __syncthreads();
  while (first < last) {
    out[first + threadIdx.x] = 3 * in[first + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) first += 32;
    __syncthreads();
  }
}
int main() {
  int *in, *out;
  cudaMallocManaged(&in, 96 * 4); cudaMallocManaged(&out, 96 * 4);
  for (int i = 0; i < 96; i++) { in[i] = i; out[i] = -1; }
  strided_copy<<<1, 32>>>(in, out);
  cudaDeviceSynchronize();
  int wrong = 0;
  for (int i = 0; i < 96; i++) wrong += out[i] != 3 * i;
  printf("%s %d\n", wrong ? "FAIL" : "PASS", wrong);
}
"""


def test_a_switch_without_barriers_on_volatile_shared_memory_runs_whole(tmp_path):
    # volatile memory makes each statement block-level; a switch cannot be cut, and needs not be
    out = build_and_run(translate_file(VOLATILE_SWITCH, "switch.cu").cpp, "", tmp_path)
    assert out.split()[0] == "PASS", out


RESTRICT_DEDUCTION = r"""
#include <cstdio>
// T of an inlined helper (it has a warp shuffle) deduced from a `const T* __restrict__` argument.
template <typename T>
__device__ T row_total(const T* row) {
  T v = row[threadIdx.x];
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
  return v;
}
template <typename T>
__global__ void totals(const T* __restrict__ rows, T* __restrict__ out) {
  T t = row_total(rows + blockIdx.x * 32);
  if (threadIdx.x == 0) out[blockIdx.x] = t;
}
int main() {
  double *rows, *out;
  cudaMallocManaged(&rows, 64 * 8); cudaMallocManaged(&out, 2 * 8);
  for (int i = 0; i < 64; i++) rows[i] = i;
  totals<<<2, 32>>>(rows, out);
  cudaDeviceSynchronize();
  printf("%s %g %g\n", out[0] == 496 && out[1] == 1520 ? "PASS" : "FAIL", out[0], out[1]);
}
"""


def test_a_template_argument_is_deduced_through_a_restrict_pointer(tmp_path):
    out = build_and_run(translate_file(RESTRICT_DEDUCTION, "restrict.cu").cpp, "", tmp_path)
    assert out.split()[0] == "PASS", out


BRACED_AND_CHOSEN_BARRIERS = r"""
#include <cstdio>
#define WARP 32
__global__ void k(float2* d, int* out, int n) {
  const unsigned Z = 8;
  __shared__ int s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float x = d[i].x + 1.f, y = d[i].y * 2.f;
  d[i] = {x, y};
  s[threadIdx.x] = i;
  (Z > WARP) ? __syncwarp() : __syncthreads();
  out[i] = s[(threadIdx.x + 1) % blockDim.x];
}
int main() {
  const int n = 128;
  float2* d; int* out;
  cudaMallocManaged(&d, n * sizeof(float2)); cudaMallocManaged(&out, n * sizeof(int));
  for (int i = 0; i < n; i++) d[i] = make_float2(i, i);
  k<<<2, 64>>>(d, out, n);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= d[i].x == i + 1.f && d[i].y == 2.f * i && out[i] == (i / 64) * 64 + (i + 1) % 64;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_an_assignment_of_a_braced_list_and_a_barrier_chosen_by_a_conditional_expression(tmp_path):
    """`d[i] = {x, y};` keeps its `;` (it ends in `}` like a block does); `c ? __syncwarp() :
    __syncthreads();` is lowered as the if it means (it was refused as a barrier inside an expression)."""
    run = run_port(BRACED_AND_CHOSEN_BARRIERS, tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


def test_a_launch_in_a_host_template_deduces_the_arguments_of_a_kernel_template_in_a_header(tmp_path):
    """`twice<<<g, b>>>(n, d_in, d_out)` in `run<T>`, `twice` a kernel template of kern.h taking
    `const T* __restrict__`: the routed launch names `twice<T>` (it named `twice` alone, which no
    pointer to a template can be taken of)."""
    from tools.project.capture import instrument

    (tmp_path / "kern.h").write_text(
        "template <typename T>\n__global__ void twice(const int n, const T* __restrict__ in, T* __restrict__ out) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = in[i] * 2;\n}\n")
    main = ('#include "kern.h"\ntemplate <typename T>\nvoid run(int n, T* d_in, T* d_out) {\n'
            "  twice<<<(n + 63) / 64, 64>>>(n, d_in, d_out);\n}\n"
            "int main() { float* f = nullptr; run<float>(0, f, f); }\n")
    routed, kernels = instrument(translate_file(main, str(tmp_path / "main.cu"), [str(tmp_path)]).cpp)
    assert kernels == ["twice"] and "&cudacpu_kernels::twice<T>" in routed


TEMPLATE_ASSIGNS_PARAMETER = r"""
#include <cstdio>
template <typename T>
__global__ void gather_rows(const T* data, int n, int width, T* out) {
  for (long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    data += i * width;  // each thread moves its own copy of the pointer
    out[i] = data[width - 1];
  }
}
int main() {
  const int n = 256, width = 4;
  float *data, *out;
  cudaMallocManaged(&data, n * width * sizeof(float)); cudaMallocManaged(&out, n * sizeof(float));
  for (int i = 0; i < n * width; i++) data[i] = i;
  gather_rows<<<4, 64>>>(data, n, width, out);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= out[i] == i * width + width - 1;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_a_kernel_template_assigning_its_pointer_parameter_gives_each_thread_its_own(tmp_path):
    """`data += i * width` on a `const T*` parameter is, to libclang, a call of an unresolved
    operator: it is an assignment all the same, and the parameter becomes each thread's own copy
    (all threads moved one shared pointer: HeCBench vol2col crashed)."""
    run = run_port(TEMPLATE_ASSIGNS_PARAMETER, tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


SHARED_WINDOW = r"""
#include <cstdio>
#include <cstdint>
__global__ void neighbours(const int* in, int* out) {
  __shared__ int tile[130];
  int* body = tile + 1;  // a pointer into shared memory
  uint32_t t = threadIdx.x;
  body[t] = in[blockIdx.x * 128 + t];
  if (t == 0) { tile[0] = -1; tile[129] = -1; }
  __syncthreads();
  out[blockIdx.x * 128 + t] = body[~t + 1 + t - 1] + body[t - 1];  // ~t wraps: body[-1], and t - 1 at t == 0
}
int main() {
  int *in, *out;
  cudaMallocManaged(&in, 256 * 4); cudaMallocManaged(&out, 256 * 4);
  for (int i = 0; i < 256; i++) in[i] = i;
  neighbours<<<2, 128>>>(in, out);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < 256; i++) ok &= out[i] == -1 + (i % 128 == 0 ? -1 : i - 1);
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_an_unsigned_index_that_wraps_below_zero_in_shared_memory_reaches_back(tmp_path):
    """Shared memory is a 32-bit window on a GPU: `body[~t + ...]` or `body[t - 1]` with an unsigned
    t at 0 reaches the element before `body`, not 4 GiB past it (HeCBench merge crashed)."""
    run = run_port(SHARED_WINDOW, tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


REFERENCES_ACROSS_A_BARRIER = r"""
#include <cstdio>
__global__ void k(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  int& mine = s[t];
  const int& theirs = s[63 - t];
  mine = t;  // through the reference, into shared memory
  __syncthreads();
  out[t] = theirs * 100 + mine;
}
int main() {
  int* out;
  cudaMallocManaged(&out, 64 * sizeof(int));
  k<<<1, 64>>>(out);
  cudaDeviceSynchronize();
  bool ok = true;
  for (int t = 0; t < 64; t++) ok = ok && out[t] == (63 - t) * 100 + t;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_a_reference_that_lives_across_a_barrier_still_names_what_it_bound(tmp_path):
    """A per-thread copy of `int& mine = s[t]` would take writes that never reach shared memory:
    each thread keeps the address it bound instead."""
    run = run_port(REFERENCES_ACROSS_A_BARRIER, tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


LAUNCH_KERNEL_API = r"""
#include <cstdio>
__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
template <int K> __global__ void fill(float* y) { y[threadIdx.x] = K; }
void axpy(float a, float* y, int n) { for (int i = 0; i < n; i++) y[i] += a; }  // a host function of the same name
int main() {
  const int n = 300;
  float *x, *y;
  cudaMallocManaged(&x, n * sizeof(float)); cudaMallocManaged(&y, n * sizeof(float));
  for (int i = 0; i < n; i++) { x[i] = i; y[i] = 1; }
  float a = 2.0f;
  int count = n;
  void* args[] = {&a, &x, &y, &count};
  typedef void (*axpy_kernel)(float, const float*, float*, int);  // the kernel, not the host axpy
  cudaError_t by_address = cudaLaunchKernel((const void*)(axpy_kernel)axpy, dim3((n + 127) / 128), dim3(128), args, 0, 0);
  cudaError_t by_function = cudaLaunchKernel((axpy_kernel)axpy, dim3((n + 127) / 128), dim3(128), args, 0, 0);
  cudaDeviceSynchronize();
  bool ok = by_address == cudaSuccess && by_function == cudaSuccess;
  for (int i = 0; i < n; i++) ok = ok && y[i] == 1 + 4.0f * i;
  void* fill_args[] = {&y};
  ok = ok && cudaLaunchKernel(fill<7>, dim3(1), dim3(4), fill_args) == cudaSuccess;
  cudaDeviceSynchronize();
  ok = ok && y[3] == 7.0f;
  ok = ok && cudaLaunchKernel((const void*)&n, dim3(1), dim3(1), args) == cudaErrorInvalidDeviceFunction;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_cuda_launch_kernel_runs_a_kernel_by_its_address_or_its_function(tmp_path):
    """The host API's launch with the arguments as an array of pointers: by the kernel's address as
    `const void*` (found among the translated kernels), by the function itself (a template's
    specialization too); an address that is no kernel is cudaErrorInvalidDeviceFunction."""
    run = run_port(LAUNCH_KERNEL_API, tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


TWO_RUNS = r"""
#include <cstdio>
#include <cstring>
template <typename T>
__global__ void scale(T* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2; }
template <typename T>
void run(int n) { T* d; cudaMalloc(&d, n * sizeof(T)); cudaMemset(d, 0, n * sizeof(T)); scale<<<(n + 63) / 64, 64>>>(d, n); cudaDeviceSynchronize(); }
int main(int argc, char** argv) {
  if (!std::strcmp(argv[1], "small")) run<float>(64);
  else { run<double>(4096); run<float>(4096); }
  printf("PASS\n");
}
"""


def test_captures_of_several_processes_keep_each_specialization_once(tmp_path):
    """A check of two commands: the second process captures only the specializations the first did
    not (it overwrote the first's files, numbered per process, with other specializations)."""
    from tools.project.capture import instrument, read_captures

    routed, _ = instrument(translate_file(TWO_RUNS, "two_runs.cu").cpp)
    (tmp_path / "two_runs.cpp").write_text(routed)
    project = Path(__file__).resolve().parents[1] / "tools" / "project"
    build = subprocess.run(["g++", "-O1", "-fopenmp", "-std=c++17", "-I", str(runtime_include_dir()), "-I", str(project),
                            str(tmp_path / "two_runs.cpp"), "-o", str(tmp_path / "two_runs")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    captured = tmp_path / "captures"
    captured.mkdir()
    for size in ("small", "large"):
        run = subprocess.run([str(tmp_path / "two_runs"), size], capture_output=True, text=True,
                             env=dict(os.environ, OMP_NUM_THREADS="2", CUDACPU_CAPTURE_DIR=str(captured)))
        assert run.stdout.strip() == "PASS", run.stderr
    found = {c.label: (c.template_args, c.grid[0]) for c in read_captures(captured)}
    assert found == {"scale": ("float", 1), "scale__s1": ("double", 64)}  # float from the first, smaller run


CLASS_READING_COORDINATES = r"""
#include <cstdio>
struct Where {
  unsigned row, lane;
  __device__ Where(int width) : row(blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32), lane(threadIdx.x % 32) { (void)width; }
  __device__ unsigned column() const { return threadIdx.x % 32; }
};
__global__ void rowsum(const float* in, float* out, int width) {
  const Where w(width);
  float v = in[w.row * 32 + w.column()];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  if (w.lane == 0) out[w.row] = v;
}
__device__ unsigned warp_of() { return threadIdx.x / 32; }  // a function that reads coordinates too
__global__ void warps(unsigned* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = warp_of(); }
__global__ void plain(float* out) {
  const Where w(0);
  out[w.row * 32 + w.lane] = w.row;
}
int main() {
  const int rows = 64;
  float h[rows * 32], r[rows], p[rows * 32];
  for (int i = 0; i < rows * 32; i++) h[i] = i % 5;
  float *d, *dr, *dp;
  cudaMalloc(&d, sizeof(h)); cudaMalloc(&dr, sizeof(r)); cudaMalloc(&dp, sizeof(p));
  cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
  unsigned* dw; cudaMalloc(&dw, 256 * sizeof(unsigned));
  warps<<<2, 128>>>(dw);
  rowsum<<<rows / 4, 128>>>(d, dr, 32);
  plain<<<rows / 4, 128>>>(dp);
  cudaMemcpy(r, dr, sizeof(r), cudaMemcpyDeviceToHost);
  cudaMemcpy(p, dp, sizeof(p), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < rows; i++) { float s = 0; for (int j = 0; j < 32; j++) { s += h[i * 32 + j]; ok = ok && p[i * 32 + j] == i; } ok = ok && r[i] == s; }
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_constructors_and_methods_that_read_thread_coordinates_see_the_thread_s(tmp_path):
    """`const Where w(width)` computes a row from blockIdx and threadIdx in its constructor: the
    lowered kernel sets the coordinates that device classes read, in split kernels and plain ones,
    beside a __device__ function that reads them too."""
    run = run_port(CLASS_READING_COORDINATES, tmp_path, "where")
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


FUNCTOR_KERNEL = r"""
#include <cstdio>
struct Fill {
  __device__ void operator()(int* out, int n) const {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 1000 * blockIdx.x + threadIdx.x;
  }
};
template <typename U, typename... Args>
__global__ void apply(U callable, Args... args) { callable(args...); }
int main() {
  const int n = 200;
  int* out;
  cudaMallocManaged(&out, n * sizeof(int));
  apply<<<(n + 63) / 64, 64>>>(Fill(), out, n);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= out[i] == 1000 * (i / 64) + i % 64;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_a_functor_called_by_a_kernel_template_reads_each_thread_s_coordinates(tmp_path):
    """`callable(args...)` with `callable` of a template parameter's type names no definition at
    parse time: the lowered kernel sets the thread-local coordinates that the functor's operator()
    reads, so each thread writes its own block and thread index (not block 0, thread 0's)."""
    run = run_port(FUNCTOR_KERNEL, tmp_path, "functor")
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr


FUNCTOR_WITH_BARRIER = r"""
struct Shift {
  __device__ void operator()(int* out) const {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
  }
};
template <typename U>
__global__ void apply(U callable, int* out) { callable(out); }
int main() { int* out; cudaMalloc(&out, 256); apply<<<1, 64>>>(Shift(), out); }
"""


def test_a_functor_with_barriers_called_by_a_kernel_template_is_reported_unsupported(tmp_path):
    # Its barrier would cut the kernel's thread loop, which a call the lowering cannot inline hides.
    lowered = translate_file(FUNCTOR_WITH_BARRIER, "barrier_functor.cu")
    assert [(u.kernel, u.feature) for u in lowered.unsupported] == [("apply", "barriers in a functor")]


VARIADIC_HOST_TEMPLATE = r"""
#include <cstdio>
struct Meta { int n; };
template <typename T, typename... Args>
__global__ void add_all(T meta, float* out, Args... args) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < meta.n) out[i] = i + (float)(args + ... + 0);
}
template <typename T, typename... Args>
void apply(T meta, float* out, Args... args) {
  add_all<<<(meta.n + 63) / 64, 64>>>(meta, out, args...);
}
int main() {
  const int n = 100;
  float* out;
  cudaMallocManaged(&out, n * sizeof(float));
  apply(Meta{n}, out, 1.0f, 2);
  cudaDeviceSynchronize();
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= out[i] == i + 3.0f;
  apply(Meta{n}, out);
  cudaDeviceSynchronize();
  for (int i = 0; i < n; i++) ok &= out[i] == i;
  printf("%s\n", ok ? "PASS" : "FAIL");
}
"""


def test_a_variadic_kernel_template_launched_from_a_host_template_deduces_its_pack(tmp_path):
    """A pack the host template passes on (`args...`) has no spelling at the launch: the routed
    launch names the kernel's specialization by the arguments' own types, as the compiler deduces them."""
    from tools.project.capture import instrument, read_captures

    routed, kernels = instrument(translate_file(VARIADIC_HOST_TEMPLATE, "variadic.cu").cpp)
    assert kernels == ["add_all"] and "&cudacpu_kernels::add_all<T, std::decay_t<decltype(args)>...>" in routed
    run, captured = run_routed(routed, tmp_path, "variadic")
    assert run.stdout.strip() == "PASS", run.stderr
    assert sorted(c.template_args for c in read_captures(captured)) == ["Meta", "Meta, float, int"]


TEMPLATE_TEMPLATE_REDUCE = r"""
#include <cstdio>
template <typename T> struct SumOp {
  __device__ static T init() { return T(0); }
  __device__ static T op(const T& x, const T& y) { return x + y; }
};
template <typename T> struct MaxOp {
  __device__ static T init() { return T(-1e30); }
  __device__ static T op(const T& x, const T& y) { return x > y ? x : y; }
};
template <template <class> class Func, typename T>
__device__ T block_reduce(const T& val) {
  __shared__ T smem[128];
  smem[threadIdx.x] = Func<T>::op(Func<T>::init(), val);
  __syncthreads();
  T s = Func<T>::init();
  for (int i = 0; i < blockDim.x; i++) s = Func<T>::op(s, smem[i]);
  __syncthreads();
  return s;
}
__global__ void stats(float* out, const float* in) {
  float v = in[threadIdx.x];
  float sum = block_reduce<SumOp, float>(v);
  float most = block_reduce<MaxOp>(v);
  if (threadIdx.x == 0) { out[0] = sum; out[1] = most; }
}
int main() {
  float h[128], o[2];
  for (int i = 0; i < 128; i++) h[i] = (float)((i * 37) % 101);
  stats<<<1, 128>>>(o, h);
  float sum = 0, most = 0;
  for (int i = 0; i < 128; i++) { sum += h[i]; most = h[i] > most ? h[i] : most; }
  printf(o[0] == sum && o[1] == most ? "PASS\n" : "FAIL %f %f\n", o[0], o[1]);
}
"""


def test_an_inlined_function_s_template_template_parameter_is_bound(tmp_path):
    """`block_reduce<SumOp, float>(v)` and `block_reduce<MaxOp>(v)` (T deduced): `Func<T>::op` in the
    inlined body names the functor the call gives."""
    run = run_port(TEMPLATE_TEMPLATE_REDUCE, tmp_path, "templates")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "PASS"


TID_HEADER = r"""
#define WARP_SIZE 32
#define DEVICE __device__ __forceinline__
struct Block1D { static DEVICE int Tid() { return threadIdx.x; } static DEVICE int Warps() { return blockDim.x / WARP_SIZE; } };
template <typename T, typename B = Block1D>
DEVICE T block_sum(T v, T* shared) {
  const int tid = B::Tid();
  const int lid = tid % WARP_SIZE;
  const int wid = tid / WARP_SIZE;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __syncthreads();
  if (lid == 0) shared[wid] = v;
  __syncthreads();
  v = tid < B::Warps() ? shared[lid] : 0;
  if (wid == 0) for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}
"""

TID_CALLER = r"""
#include <cstdio>
#include "utils.h"
__global__ void k(const float* in, float* out) {
  __shared__ float s[32];
  float v = block_sum(in[threadIdx.x], s);
  if (threadIdx.x == 0) out[0] = v;
}
int main() {
  float h[64], r = 0, *d, *o; for (int i = 0; i < 64; i++) h[i] = i;
  cudaMalloc(&d, sizeof h); cudaMalloc(&o, 4); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  k<<<1, 64>>>(d, o); cudaMemcpy(&r, o, 4, cudaMemcpyDeviceToHost);
  printf("%s\n", r == 2016.f ? "PASS" : "FAIL"); return r == 2016.f ? 0 : 1;
}
"""


def test_a_thread_id_read_through_a_template_s_class_in_a_header_is_per_thread(tmp_path):
    # `B::Tid()` in a header's block reduction, B a template parameter defaulting to a class whose
    # static method returns threadIdx.x: the value is each thread's (it was hoisted to the block,
    # after the line that uses it: the port did not build).
    src = tmp_path / "src"
    src.mkdir()
    header = TID_HEADER
    (src / "utils.h").write_text(header)
    (src / "main.cu").write_text(TID_CALLER)
    port = tmp_path / "port"
    port.mkdir()
    (port / "utils.h").write_text(translate_file(header, str(src / "utils.h")).cpp)
    (port / "main.cpp").write_text(translate_file(TID_CALLER, str(src / "main.cu"), [str(src)]).cpp)
    run = build_and_run_port(port / "main.cpp", tmp_path)
    assert run.stdout.strip() == "PASS", run.stdout + run.stderr
