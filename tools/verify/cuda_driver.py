"""A CUDA driver for the `cuda` reference: the original kernels run on a GPU with the task's launches.

The generated `driver.cu` includes the task's CUDA source (its own `main`, if any, renamed away),
reads each input/inout buffer from `INDIR/<name>.bin`, copies it to the device, fills outputs
with 0xFF bytes (NaN) for floats, 0xA5 bytes for integers, or zeros (`init: zeros`), runs the
launches in order with error checks after each, and writes every output/inout buffer to
`OUTDIR/<name>.bin`.
Usage: ./driver INDIR OUTDIR
"""

from __future__ import annotations

import numpy as np

from tools.spec import Task, c_type, is_float, numpy_dtype

_PRELUDE = r"""
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <vector>

#define main original_cuda_main
#include "@SOURCE@"
#undef main

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s: %s\n", #x, cudaGetErrorString(e_)); exit(7); } } while (0)

// Converts to whatever pointer type the kernel's parameter has (float*, const float4*, ...);
// + and - step in the buffer's own elements, as in a launch argument `a + 1`.
struct AnyPtr {
  void* p;
  long long elem;
  template <class T> operator T*() const { return static_cast<T*>(p); }
  AnyPtr operator+(long long k) const { return {static_cast<char*>(p) + k * elem, elem}; }
  AnyPtr operator-(long long k) const { return *this + (-k); }
  friend AnyPtr operator+(long long k, AnyPtr a) { return a + k; }
};

static std::vector<unsigned char> read_file(const std::string& path, size_t bytes) {
  std::vector<unsigned char> data(bytes);
  FILE* f = fopen(path.c_str(), "rb");
  if (!f || fread(data.data(), 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path.c_str()); exit(5); }
  fclose(f);
  return data;
}

static void write_file(const std::string& path, const std::vector<unsigned char>& data) {
  FILE* f = fopen(path.c_str(), "wb");
  if (!f || fwrite(data.data(), 1, data.size(), f) != data.size()) { fprintf(stderr, "cannot write %s\n", path.c_str()); exit(5); }
  fclose(f);
}
"""


def _scalar_decl(dtype: str, name: str, value) -> str:
    if dtype == "bool":
        return f"  const bool {name} = {'true' if value else 'false'};"
    if dtype == "float16":
        return f"  const __half {name} = __float2half({float(value)!r}f);"
    if dtype == "bfloat16":
        return f"  const __nv_bfloat16 {name} = __float2bfloat16({float(value)!r}f);"
    if is_float(dtype):
        return f"  const {c_type(dtype)} {name} = ({c_type(dtype)}){float(value)!r};"
    suffix = "ULL" if dtype.startswith("uint") else "LL"
    return f"  const {c_type(dtype)} {name} = ({c_type(dtype)}){int(value)}{suffix};"


def cuda_driver_source(task: Task, source_file: str) -> str:
    """driver.cu for the task (raises ValueError when the task has no launches)."""
    if not task.launches:
        raise ValueError(f"task {task.name}: the cuda reference needs 'launches' to run the original")
    body = ["int main(int argc, char** argv) {",
            '  if (argc < 3) { fprintf(stderr, "usage: driver INDIR OUTDIR\\n"); return 2; }',
            "  std::string indir = argv[1], outdir = argv[2];"]
    body += [_scalar_decl(s.dtype, s.name, s.value) for s in task.scalars]
    for b in task.buffers:
        body.append(f"  const size_t bytes_{b.name} = {b.nbytes}u;")
        allocated = (b.size + b.padding) * np.dtype(numpy_dtype(b.dtype)).itemsize
        body.append(f"  void* dev_{b.name} = nullptr; CK(cudaMalloc(&dev_{b.name}, {max(allocated, 1)}u));")
        body.append(f"  AnyPtr {b.name}{{dev_{b.name}, {np.dtype(numpy_dtype(b.dtype)).itemsize}}};")
        if b.role in ("input", "inout"):  # with its padding repeating its first elements, as the CPU harness's
            body.append(f'  {{ auto h = read_file(indir + "/{b.name}.bin", bytes_{b.name}); '
                        f"for (size_t i = bytes_{b.name}; bytes_{b.name} && i < {allocated}u; i++) h.push_back(h[i - bytes_{b.name}]); "
                        f"CK(cudaMemcpy(dev_{b.name}, h.data(), h.size(), cudaMemcpyHostToDevice)); }}")
        else:
            # the CPU harness's poison (NaN for floats, 0xA5 bytes for integers), so that elements
            # the original leaves unwritten compare equal to a candidate that leaves them too
            fill = "0" if b.init == "zeros" else ("0xFF" if is_float(b.dtype) else "0xA5")
            body.append(f"  CK(cudaMemset(dev_{b.name}, {fill}, bytes_{b.name}));")
    for i, launch in enumerate(task.launches):
        (gx, gy, gz), (bx, by, bz) = launch.dims()
        targs = f"<{', '.join(launch.template_args)}>" if launch.template_args else ""
        args = ", ".join(str(a) for a in launch.args)
        body.append(f"  {launch.kernel}{targs}<<<dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}), {launch.shared_bytes}>>>({args});")
        body.append(f'  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());  // launch {i}')
    for b in task.buffers:
        if b.role in ("output", "inout"):
            body.append(f"  {{ std::vector<unsigned char> h(bytes_{b.name}); "
                        f"CK(cudaMemcpy(h.data(), dev_{b.name}, bytes_{b.name}, cudaMemcpyDeviceToHost)); "
                        f'write_file(outdir + "/{b.name}.bin", h); }}')
    body += [f"  CK(cudaFree(dev_{b.name}));" for b in task.buffers]
    body += ['  printf("DONE\\n");', "  return 0;", "}"]
    return _PRELUDE.replace("@SOURCE@", source_file) + "\n" + "\n".join(body) + "\n"
