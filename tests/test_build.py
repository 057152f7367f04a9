"""tools/build.py against the real compilers: g++ and nvcc diagnostics, shared-library builds."""

from __future__ import annotations

import ctypes
import shutil

import pytest

from sandboxes import Limits, LocalSandbox
from tools.build import compile_cpp, compile_cuda, parse_diagnostics


@pytest.fixture(scope="module")
def box():
    sandbox = LocalSandbox(Limits(timeout_s=120))
    yield sandbox
    sandbox.close()


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed on this host")


def test_gcc_error_and_warning(box: LocalSandbox) -> None:
    box.put({"diag/bad.cpp": "int f() {\n  int unused = 1;\n  return missing + 1;\n}\n"})
    build = compile_cpp(box, ["diag/bad.cpp"], "diag/bad.o", flags=["-Wall", "-O1"], extra=["-c"])
    assert not build.ok
    [error] = build.errors
    assert (error.file, error.line, error.column, error.tool) == ("diag/bad.cpp", 3, 10, "g++")
    assert "missing" in error.message and "not declared" in error.message
    [warning] = build.warnings
    assert (warning.file, warning.line, warning.column) == ("diag/bad.cpp", 2, 7)
    assert "unused variable" in warning.message
    assert "diag/bad.cpp:3:10: error:" in build.summary()


def test_gcc_clean_build_has_no_errors(box: LocalSandbox) -> None:
    box.put({"diag/good.cpp": "int main() { return 0; }\n"})
    build = compile_cpp(box, ["diag/good.cpp"], "diag/good")
    assert build.ok, build.summary()
    assert build.diagnostics == [] and build.summary() == "ok"


def test_linker_failure_is_an_error(box: LocalSandbox) -> None:
    box.put({"diag/link.cpp": "int g();\nint main() { return g(); }\n"})
    build = compile_cpp(box, ["diag/link.cpp"], "diag/link")
    assert not build.ok
    assert build.errors, build.output
    assert any(d.tool in ("ld", "collect2") for d in build.errors)


@needs_nvcc
def test_nvcc_error_and_warning(box: LocalSandbox) -> None:
    box.put({"diag/bad.cu": "__global__ void k(float* y) {\n  int unused;\n  y[0] = missing;\n}\n"})
    build = compile_cuda(box, ["diag/bad.cu"], "diag/bad.ptx", ptx_only=True)
    assert not build.ok
    [error] = build.errors
    assert (error.file, error.line, error.tool) == ("diag/bad.cu", 3, "nvcc")
    assert error.message == 'identifier "missing" is undefined'
    [warning] = build.warnings
    assert (warning.file, warning.line) == ("diag/bad.cu", 2)
    assert "declared but never referenced" in warning.message


@needs_nvcc
def test_nvcc_ptx_build(box: LocalSandbox) -> None:
    box.put({"diag/ok.cu": "__global__ void scale(float* y, float a) { y[threadIdx.x] *= a; }\n"})
    build = compile_cuda(box, ["diag/ok.cu"], "diag/ok.ptx", ptx_only=True)
    assert build.ok, build.summary()
    assert b".visible .entry" in box.get("diag/ok.ptx")


def test_parse_recorded_outputs() -> None:
    gcc = "e.cpp: In function 'int f()':\ne.cpp:3:10: error: 'missing' was not declared in this scope\n    3 |   return missing + 1;\n"
    nvcc = 'e.cu(3): error: identifier "missing" is undefined\ne.cu(2): warning #177-D: variable "unused" was declared but never referenced\n'
    [g] = parse_diagnostics(gcc)
    assert (g.file, g.line, g.column, g.severity) == ("e.cpp", 3, 10, "error")
    first, second = parse_diagnostics(nvcc, "nvcc")
    assert (first.severity, second.severity, second.line) == ("error", "warning", 2)


def test_each_error_names_the_function_g_plus_plus_says_it_is_in() -> None:
    """g++ prints the function its next diagnostics are in once; qualified, without its arguments
    or template arguments; none at global scope."""
    gcc = ("m.cu: In function ‘void cudacpu_kernels::bad(dim3, dim3, std::size_t, float*, int)’:\n"
           "m.cu:9:5: error: ‘h’ was not declared in this scope\n"
           "m.cu:10:5: error: ‘g’ was not declared in this scope\n"
           "m.cu: In instantiation of ‘void ns::cudacpu_kernels::t(dim3, T*) [with T = std::pair<int, int>]’:\n"
           "m.cu:30:3:   required from here\n"
           "m.cu:20:7: error: no match for ‘operator*’\n"
           "m.cu: In member function 'int Box<float>::size() const':\n"
           "m.cu:40:1: error: expected ';'\n"
           "m.cu: At global scope:\n"
           "m.cu:50:1: error: expected declaration\n")
    assert [(d.line, d.function) for d in parse_diagnostics(gcc) if d.severity == "error"] == [
        (9, "cudacpu_kernels::bad"), (10, "cudacpu_kernels::bad"), (20, "ns::cudacpu_kernels::t"), (40, "Box::size"),
        (50, None)]


def test_shared_library_builds_and_loads(box: LocalSandbox) -> None:
    source = r"""
    extern "C" double dot(const double* x, const double* y, int n) {
        double sum = 0;
        #pragma omp parallel for reduction(+:sum)
        for (int i = 0; i < n; ++i) sum += x[i] * y[i];
        return sum;
    }
    """
    box.put({"lib/dot.cpp": source})
    build = compile_cpp(box, ["lib/dot.cpp"], "lib/libdot.so", shared=True)
    assert build.ok, build.summary()
    assert "-shared" in build.command and "-fPIC" in build.command and "-fno-semantic-interposition" in build.command
    lib = ctypes.CDLL(str(box.workdir / "lib" / "libdot.so"))
    lib.dot.restype = ctypes.c_double
    lib.dot.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_int]
    n = 1000
    x = (ctypes.c_double * n)(*range(n))
    y = (ctypes.c_double * n)(*([2.0] * n))
    assert lib.dot(x, y, n) == pytest.approx(2.0 * sum(range(n)))
