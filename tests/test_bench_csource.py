"""bench.csource: TVM C made self-contained; published references repaired. No TVM needed."""

import subprocess

import pytest

from bench.csource import CSourceError, make_self_contained, repair_reference

# The shape of TVM 0.27's C-target output (trimmed: one argument check kept).
TVM_C = r'''// tvm target: {"kind":"c","tag":"","keys":["cpu"]}
#define TVM_EXPORTS
#include "tvm/ffi/extra/c_env_api.h"
#include "tvm/runtime/c_backend_api.h"
#include <math.h>
void* __tvm_ffi__library_ctx = NULL;
#ifdef __cplusplus
extern "C"
#endif
TVM_DLL int32_t __tvm_ffi_scale(void* self_handle, void* args, int32_t num_args, void* result) {
  if (!((num_args == 2))) {
    TVMFFIErrorSetRaisedFromCStrParts("TypeError", __tvm_assert_parts, 6);
    return -1;
  }
  void* x_handle = (((TVMFFIAny*)args)[0].v_ptr);
  void* y_handle = (((TVMFFIAny*)args)[1].v_ptr);
  int32_t dev_id = (((DLTensor*)x_handle)[0].device.device_id);
  float* x = ((float*)((float*)(((DLTensor*)x_handle)[0].data)));
  float* y = ((float*)((float*)(((DLTensor*)y_handle)[0].data)));
  float* tmp = ((float*)((float*)TVMBackendAllocWorkspace(1, dev_id, (uint64_t)64ULL, 2, 32)));
  if (tmp == NULL) {
    return -1;
  }
  for (int32_t i = 0; i < 16; ++i) {
    tmp[i] = x[i] * 2.0f;
    y[i] = expf(tmp[i]);
  }
  if (TVMBackendFreeWorkspace(1, dev_id, tmp) != 0) {
    return -1;
  }
  return 0;
}

// CodegenC: NOTE: Auto-generated entry function
TVM_DLL int32_t __tvm_ffi_main(void* self, void* args,int num_args, void* result) {
  return __tvm_ffi_scale(self, args, num_args, result);
}
'''


def _compiles(tmp_path, code: str, lang: str = "c") -> subprocess.CompletedProcess:
    src = tmp_path / ("ref.c" if lang == "c" else "ref.cpp")
    src.write_text(code)
    cc = "gcc" if lang == "c" else "g++"
    return subprocess.run([cc, "-c", "-Wall", "-Werror=implicit-function-declaration", str(src), "-o", str(tmp_path / "ref.o")],
                          capture_output=True, text=True)


def test_self_contained_has_no_tvm_and_compiles(tmp_path):
    code = make_self_contained(TVM_C, "scale_0", [("x", "float32"), ("y", "float32")])
    assert "TVM" not in code and "DLTensor" not in code
    assert "void scale_0(float* __restrict__ x, float* __restrict__ y)" in code
    assert "malloc(64ULL)" in code and "free(tmp);" in code
    proc = _compiles(tmp_path, code)
    assert proc.returncode == 0, proc.stderr


def test_self_contained_rejects_foreign_code():
    with pytest.raises(CSourceError):
        make_self_contained("int main(void) { return 0; }", "f", [("x", "float32")])
    with pytest.raises(CSourceError, match="never unpacked"):
        make_self_contained(TVM_C, "scale_0", [("x", "float32"), ("z", "float32")])


PUBLISHED = r'''void default_function_kernel(float* data, float* new, float* compute) {
  float big_buffer[2097152];
  for (int i = 0; i < 64; ++i) {
    big_buffer[i] = data[i] + new[i];
  }
  for (int i = 0; i < 64; ++i) {
    compute[i] = max(big_buffer[i], 0.0f) + min(data[i], 1.0f);
  }
}
'''


def test_repair_published_reference(tmp_path):
    assert _compiles(tmp_path, PUBLISHED, "c++").returncode != 0  # as published: does not build as C++
    code, notes = repair_reference(PUBLISHED)
    assert any("max/min" in n for n in notes)
    assert any("big_buffer" in n for n in notes)
    assert any("new" in n for n in notes)
    assert "static float big_buffer[2097152];" in code
    assert "float* new_" in code and "new_[i]" in code
    for lang in ("c", "c++"):
        proc = _compiles(tmp_path, code, lang)
        assert proc.returncode == 0, proc.stderr


def test_repair_leaves_clean_code_alone():
    clean = "#include <stdint.h>\nvoid f(float* a) {\n  float small[16];\n  a[0] = small[0];\n}\n"
    code, notes = repair_reference(clean)
    assert code == clean and notes == []


def test_a_bare_published_reference_gets_its_headers(tmp_path):
    """Published references are bare functions: `int32_t`, `expf` with no include."""
    bare = "void f(float* a, int32_t* b) {\n  for (int32_t i = 0; i < 4; ++i) a[i] = expf(fabsf(a[i])) + b[i];\n}\n"
    code, notes = repair_reference(bare)
    assert code.startswith("#include <math.h>") and any("stdint.h" in n for n in notes)
    for lang in ("c", "c++"):
        proc = _compiles(tmp_path, code, lang)
        assert proc.returncode == 0, proc.stderr


def test_arrays_inside_loops_stay_private():
    # a static array inside a (possibly OpenMP-parallel) loop would be shared between threads
    code = ("void f(float* a) {\n  float top[1048576];\n  #pragma omp parallel for\n  for (int i = 0; i < 4; ++i) {\n"
            "    float inner[1048576];\n    inner[0] = a[i];\n    top[i] = inner[0];\n  }\n}\n")
    fixed, notes = repair_reference(code)
    assert "static float top[1048576];" in fixed
    assert "    float inner[1048576];" in fixed
    assert notes[0] == "moved large stack arrays to static storage: top"
