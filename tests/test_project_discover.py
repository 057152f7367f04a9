"""Discovery of whole CUDA projects: sources, kernels, build systems, checks, library calls."""

from pathlib import Path

import pytest

from tools.project.buildsys import read_build_system
from tools.project.check import compare_numbers
from tools.project.discover import DiscoveryError, discover
from tools.project.tree import defined_identifiers

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "projects"


def test_every_example_is_discovered_with_kernels_and_an_executable():
    names = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    assert len(names) >= 8
    for name in names:
        project = discover(EXAMPLES / name)
        assert project.kernels, name
        assert project.executables, name
        assert project.self_checks, name


def test_kernels_found_with_file_and_line():
    project = discover(EXAMPLES / "reduction")
    sites = {(k.name, k.file) for k in project.kernels}
    assert sites == {("block_partials", "reduce.cu"), ("final_sum", "reduce.cu"), ("max_kernel", "reduce.cu")}
    line = next(k.line for k in project.kernels if k.name == "final_sum")
    text = (EXAMPLES / "reduction" / "reduce.cu").read_text().splitlines()
    assert "final_sum" in text[line - 1]


def test_cmake_and_make_targets():
    cmake = read_build_system(EXAMPLES / "heat2d")
    assert cmake.kind == "cmake" and cmake.targets[0].name == "heat2d"
    assert sorted(cmake.targets[0].sources) == ["heat.cu", "main.cu"]
    make = read_build_system(EXAMPLES / "cublas_axpy_gemm")
    assert make.kind == "make" and make.targets[0].libraries == ["cublas"]
    assert make.check_commands == ["./cublas_demo"]


def test_library_calls_are_listed():
    calls = {c.name for c in discover(EXAMPLES / "cublas_axpy_gemm").library_calls}
    assert {"cublasSgemm", "cublasSaxpy", "cublasSdot", "cublasCreate"} <= calls


def test_the_project_s_own_names_that_start_like_a_library_s_are_no_library_calls(tmp_path):
    (tmp_path / "main.cu").write_text(
        "#include <cublas_v2.h>\n#include <cublasLt.h>\n"
        "void cublasCheck(cublasStatus_t status, const char* file, int line) { if (status) exit(1); }\n"
        "#define cublasCheckLine(s) cublasCheck((s), __FILE__, __LINE__)\n"
        "cublasHandle_t cublas_handle;\nstatic size_t cublaslt_workspace_size = 32;\n"
        "__global__ void k(int* a) { a[0] = 1; }\n"
        "int main() { cublasCheckLine(cublasCreate(&cublas_handle)); thrust::sort(v.begin(), v.end()); }\n")
    calls = [(c.name, c.line) for c in discover(tmp_path).library_calls]
    assert calls == [("cublasCreate", 8), ("thrust::sort", 8)]


def test_a_kernel_declared_before_its_definition_is_one_kernel(tmp_path):
    (tmp_path / "main.cu").write_text(
        "__global__ void step(float* a, int n);\n__global__ void only_declared(float* a);\n"
        "int main() { return 0; }\n__global__ void step(float* a, int n)\n{ a[threadIdx.x] = n; }\n")
    assert [(k.name, k.line) for k in discover(tmp_path).kernels] == [("only_declared", 2), ("step", 4)]


def test_no_build_file_gives_one_executable_per_main(tmp_path):
    (tmp_path / "app.cu").write_text("__global__ void k(int* a) { a[0] = 1; }\nint main() { return 0; }\n")
    (tmp_path / "lib.cu").write_text("__global__ void j(int* a) { a[0] = 2; }\n")
    project = discover(tmp_path)
    assert project.build.kind == "none"
    assert [(t.name, sorted(t.sources)) for t in project.executables] == [("app", ["app.cu", "lib.cu"])]


def test_empty_and_cuda_free_directories_are_refused(tmp_path):
    with pytest.raises(DiscoveryError, match="no C, C\\+\\+ or CUDA sources"):
        discover(tmp_path)
    (tmp_path / "main.cpp").write_text("int main() { return 0; }\n")
    with pytest.raises(DiscoveryError, match="no CUDA found"):
        discover(tmp_path)


def test_numbers_compared_with_tolerance_not_text():
    assert compare_numbers("sum 1.0000 max 7\n", "sum   1.00001 max 7\n") is None
    assert "original 7, port 8" in compare_numbers("max 7\n", "max 8\n")
    assert compare_numbers("time 3.2 ms\nv 1\n", "time 0.1 ms\nv 1\n") is None
    assert "printed 2 numbers" in compare_numbers("a 1 b 2", "a 1")


def test_a_binary_file_named_like_a_source_is_left_out_with_a_warning(tmp_path, caplog):
    from tools.cuda import runtime_include_dir
    from tools.project.tree import FileTranslation, build_port_tree

    (tmp_path / "app.cu").write_text("__global__ void k(int* a) { a[0] = 1; }\nint main() { return 0; }\n")
    blob = bytes(range(256)) * 4  # NUL bytes and every other byte value
    (tmp_path / "data.cu").write_bytes(blob)
    (tmp_path / "legacy.cpp").write_bytes("// caf\xe9 (Latin-1)\nint helper() { return 1; }\n".encode("latin-1"))
    with caplog.at_level("WARNING"):
        project = discover(tmp_path)
    assert [s.path for s in project.sources] == ["app.cu", "legacy.cpp"]  # an 8-bit encoded source stays
    note = "data.cu: not a text file (it holds NUL bytes); left out of the port, its copy untouched"
    assert project.build.notes == [note] and [r.getMessage() for r in caplog.records] == [note]
    assert [sorted(t.sources) for t in project.executables] == [["app.cu", "legacy.cpp"]]

    translated = []
    tree = build_port_tree(project, tmp_path.parent / "port", lambda text, path: translated.append(path) or
                           FileTranslation(path, text, []), runtime_include_dir(), [])
    assert translated == ["app.cu"] and (tree.root / "data.cu").read_bytes() == blob


def test_numbers_about_the_machine_are_not_compared_and_printed_precision_is_tolerated():
    """What a GPU's and a CPU's run print differently by nature: rates, microseconds, clock times, the
    device's name; and a value rounded to the digits printed. A result that differs still fails."""
    gpu = ("Running on:: NVIDIA H200\nCopy 64 bytes takes 2.26 us\nBandWidth = 1964.06 (GB / s)\n"
           "04 December 2026 04:58:31 PM\ndphi:6.17\nchecksum = 158\n")
    cpu = ("Running on:: CPU (OpenMP)\nCopy 64 bytes takes 0.0017 us\nBandWidth = 1.80 (GB / s)\n"
           "04 December 2026 05:24:47 PM\ndphi:6.18\nchecksum = 158\n")
    assert compare_numbers(gpu, cpu) is None
    assert "line 6: original 158, port 152" in compare_numbers(gpu, cpu.replace("158", "152"))
    assert "original 6.17, port 6.19" in compare_numbers(gpu, cpu.replace("6.18", "6.19"))  # two units off


def test_a_library_call_is_mapped_only_where_the_runtime_defines_it_in_code(tmp_path):
    """A runtime header's comment that names what it does not provide maps nothing."""
    (tmp_path / "lib.h").write_text('// BlockShuffle is device code: not provided here\n/* nor WarpExchange */\n'
                                    'void DeviceSum(); const char* name = "BlockStore";\n')
    names = defined_identifiers(tmp_path)
    assert "DeviceSum" in names
    assert not {"BlockShuffle", "WarpExchange", "BlockStore"} & names


def test_a_library_call_a_runtime_macro_pastes_together_is_mapped(tmp_path):
    """`cublas##P##gemv` expanded by `FOR_TYPE(D, d, double)` defines cublasDgemv and cublasIdamax."""
    (tmp_path / "blas.h").write_text(
        "#define FOR_TYPE(P, p, T) \\\n"
        "    inline int cublas##P##gemv(T x) { return 0; } \\\n"
        "    inline int cublasI ## p ## amax(T x) { return 1; }\n"
        "FOR_TYPE(S, s, float)\nFOR_TYPE(D, d, double)\n#undef FOR_TYPE\n")
    names = defined_identifiers(tmp_path)
    assert {"cublasSgemv", "cublasDgemv", "cublasIsamax", "cublasIdamax"} <= names
    assert "cublasCgemv" not in names
