"""A project's own build and run, read by make itself: per-unit flags, units and included .cu
files, the `run` target as the check; compiler command lines; self-check verdicts."""

import shutil
from pathlib import Path

import pytest

from agent.configuration import Settings
from agent.project import port_repository
from rich.console import Console
from tools.cuda import parse_cuda
from tools.project.capture import standalone_source
from tools.project.check import failure_line
from tools.project.compile_commands import read_build_commands, split_commands
from tools.project.discover import discover
from tools.project.tree import write_makefile

MAKEFILE = """\
CC        = nvcc
LAUNCHER  =
program   = main
source    = main.cu helpers.cpp
obj       = $(source:.cu=.o)
objs      = $(obj:.cpp=.o)
CFLAGS   := $(EXTRA_CFLAGS) -std=c++14 -Xcompiler -Wall,-DFROM_HOST=2 -arch=sm_60 -Ddfloat=float -DSCALE=3 -O3

$(program): $(objs) Makefile
\t$(CC) $(CFLAGS) $(objs) -o $@ -lm

%.o: %.cu Makefile
\t$(CC) $(CFLAGS) -c $< -o $@

%.o: %.cpp Makefile
\t$(CC) $(CFLAGS) -c $< -o $@

run: $(program)
\t#$(LAUNCHER) ./$(program) 1000000 1
\t$(LAUNCHER) ./$(program) 100 7
"""

KERNELS = """\
__global__ void scale(volatile dfloat* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * SCALE;
}
"""

MAIN = """\
#include <cstdio>
#include <cstdlib>
#include "kernels.cu"
int offset();
#if defined(_OPENMP)  // nvcc defines no _OPENMP without -Xcompiler -fopenmp: a branch for builds without CUDA
struct float2 { float x, y; };
#endif
#if defined(__CUDACC__)
#define CHECK(call) if ((call) != cudaSuccess) { printf("FAIL: %s\\n", #call); return 1; }
#endif
int main(int argc, char** argv) {
  if (argc != 3) { printf("Usage: %s <n> <repeat>\\n", argv[0]); return 1; }
  int n = atoi(argv[1]);
  dfloat* d;
  CHECK(cudaMallocManaged(&d, n * sizeof(dfloat)));
  for (int i = 0; i < n; i++) d[i] = i;
  scale<<<(n + 31) / 32, 32>>>(d, n);
  CHECK(cudaDeviceSynchronize());
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= d[i] == 3.0f * i + offset() - FROM_HOST;
  printf("%s\\n", ok ? "Success" : "Fail");
  return 0;
}
"""

HELPERS = "int offset() { return FROM_HOST; }\n"


def write_project(root: Path) -> Path:
    root.mkdir()
    (root / "Makefile").write_text(MAKEFILE)
    (root / "kernels.cu").write_text(KERNELS)
    (root / "main.cu").write_text(MAIN)
    (root / "helpers.cpp").write_text(HELPERS)
    # HeCBench's CMakeLists.txt call a function of the suite's own: no target to read.
    (root / "CMakeLists.txt").write_text("add_hecbench_benchmark(NAME app MODEL cuda SOURCES main.cu)\n")
    return root


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_build_and_run_are_read_by_make(tmp_path):
    project = discover(write_project(tmp_path / "app"))
    assert project.build.kind == "make"
    [target] = project.executables
    assert target.name == "main" and target.sources == ["main.cu", "helpers.cpp"]  # kernels.cu is included
    assert target.libraries == ["m"]
    main_unit = target.units[0]
    assert {"-Ddfloat=float", "-DSCALE=3", "-DFROM_HOST=2", "-std=c++14"} <= set(main_unit.flags)
    assert main_unit.is_cuda and not target.units[1].is_cuda
    assert project.build.check_commands == ["./main 100 7"]  # the commented-out line is no command
    # kernels.cu is no unit: it is parsed with the flags of the first unit, as main.cu includes it.
    assert "-Ddfloat=float" in project.preprocessor_options("kernels.cu")
    # standing alone (a kernel's tuning task), it carries the build's macros and what main.cu has before it
    alone = standalone_source(project, "kernels.cu")
    assert "#define dfloat float" in alone and "#include <cstdlib>" in alone and "int offset();" not in alone
    assert parse_cuda(alone, "kernels.cu").kernel("scale").params[0].name == "x"


MISSING_PREREQUISITES = {
    # a pattern rule with an absent file: make silently skips the rule, then has none for main.o
    "pattern": "main: main.o\n\tnvcc -Ddfloat=double main.o -o main\n"
               "%.o: %.cu adv.cu\n\tnvcc -Ddfloat=double -DSCALE=3 -c $< -o $@\n"
               "run: main\n\t./main 7 15\n",
    # an explicit rule naming absent files, and a run target naming one more
    "explicit": "main: main.o\n\tnvcc main.o -o main\n"
                "main.o: main.cu adv.cu adv.h\n\tnvcc -Ddfloat=double -DSCALE=3 -c main.cu -o main.o\n"
                "run: main input.dat\n\t./main 7 15\n",
}


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("rules", MISSING_PREREQUISITES)
def test_a_prerequisite_the_project_lacks_is_ignored_and_the_build_read_as_intended(tmp_path, rules):
    # Real make stops at the absent file; its flags and run line still say how the program is built and run.
    root = tmp_path / "app"
    root.mkdir()
    (root / "Makefile").write_text(MISSING_PREREQUISITES[rules])
    (root / "main.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n")
    project = discover(root)
    assert project.build.kind == "make"
    [target] = project.executables
    assert target.name == "main" and target.sources == ["main.cu"]
    assert {"-Ddfloat=double", "-DSCALE=3"} <= set(target.units[0].flags)
    assert project.build.check_commands == ["./main 7 15"]
    missing = {"pattern": ["adv.cu"], "explicit": ["adv.cu", "adv.h", "input.dat"]}[rules]
    noted = " ".join(project.build.notes)
    assert all(name in noted for name in missing) and "ignored" in noted


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_a_project_ports_unmodified_with_its_own_run(tmp_path):
    root = write_project(tmp_path / "app")
    out = tmp_path / "out"
    cfg = Settings(sandbox="local", tune=False)
    status = port_repository(root, cfg, out=out, trace=None, check_commands=None, console=Console(quiet=True))
    report = (out / "PORT_REPORT.md").read_text()
    assert status == 0, report
    assert "ran `./main 100 7`: passed" in report
    makefile = (out / "src" / "Makefile.cpu").read_text()
    assert "-D__CUDACC__" in makefile and "-Ddfloat=float" in makefile
    assert "-std=c++14" not in makefile  # the runtime needs C++17: an older standard is not passed on
    # Lowered device code type-puns (float arrays read as float4): no strict aliasing for .cu units.
    [cuda_line] = [line for line in makefile.splitlines() if "-c main.cu" in line]
    [cpp_line] = [line for line in makefile.splitlines() if "-c helpers.cpp" in line]
    assert "-fno-strict-aliasing" in cuda_line.split() and "-fno-strict-aliasing" not in cpp_line.split()


def test_compiler_lines_become_units_and_links():
    lines = ["cd src && nvcc -x cu -O3 -I../inc -DN=4 -Xcompiler -fopenmp,-Wall -c a.cpp -o obj/a.o",
             "nvcc -c src/b.cu -o src/obj/b.o --std=c++17 -gencode arch=compute_80,code=sm_80",
             "ar rcs src/libk.a src/obj/b.o",
             "g++ src/obj/a.o src/libk.a -o bin/app -lpthread -L/opt/x"]
    commands = [c for line in lines for c in split_commands(line, ".")]
    [link] = read_build_commands(commands)
    assert link.output == "bin/app"
    assert [u.source for u in link.units] == ["src/a.cpp", "src/b.cu"]
    a, b = link.units
    assert a.language == "cuda" and a.flags == ["-I", "inc", "-DN=4", "-fopenmp"]  # -fopenmp: _OPENMP in a.cpp
    assert b.language == "cuda" and b.flags == ["-std=c++17"]
    assert link.libraries == ["pthread"] and link.link_flags == ["-L/opt/x"]


@pytest.mark.parametrize("line, fails", [
    ("PASS", False), ("FAIL", True), ("Fail - The result is incorrect for element: [3]", True),
    ("Test failed!", True), ("Test Results: 0 Failures", False), ("Test Results: 3 Failures", True),
    ("max error: 1.5e-07", False), ("Launch kernel to generate assertion failures", False),
    ("Device assert failed as expected", False), ("Mismatch at index 7", True), ("no mismatches", False),
    ("CUDA ERROR: out of memory", True), ("errors: 0", False), ("Success", False),
])
def test_self_check_verdicts_in_any_case(line, fails):
    assert (failure_line(f"some output\n{line}\n") is not None) == fails


HECBENCH = Path(__file__).resolve().parents[2] / "shared" / "hecbench-dev" / "src"


@pytest.mark.parametrize("app", ["adam", "assert"])
def test_real_applications_port_unmodified(app, tmp_path):
    """Two of the development set's applications, as a user runs them: the Makefile's run line
    with its arguments (adam), a device-side assert the program expects to fail (assert)."""
    root = HECBENCH / f"{app}-cuda"
    if not root.is_dir():
        pytest.skip(f"{root} is absent: the HeCBench development set is not beside this checkout")
    out = tmp_path / "out"
    status = port_repository(root, Settings(sandbox="local", tune=False), out=out, trace=None, check_commands=None,
                             console=Console(quiet=True))
    report = (out / "PORT_REPORT.md").read_text()
    assert status == 0, report
    expected = {"adam": "ran `./main 10000 200 100`: passed", "assert": "ran `./main`: passed"}[app]
    assert expected in report


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_a_cpp_unit_with_its_own_macros_includes_a_translated_header(tmp_path):
    # nvcc gives a .cu file cuda_runtime.h before its own code; a C++ unit never includes it. Once
    # the header that both share is translated (it includes the runtime), the C++ unit's `#define
    # T int` must not reach the runtime's templates: the unit gets the runtime first.
    root = tmp_path / "app"
    root.mkdir()
    (root / "partition.h").write_text(
        "#pragma once\n"
        "#ifdef __CUDACC__\n"
        "__device__ inline int block_first(int per_block) { return blockIdx.x * per_block; }\n"
        "#endif\n"
        "inline int host_first(int block, int per_block) { return block * per_block; }\n")
    (root / "helpers.cpp").write_text('#define T int\n#include "partition.h"\nT expected(int b) { return host_first(b, 4); }\n')
    (root / "main.cu").write_text(
        '#include <cstdio>\n#include "partition.h"\nint expected(int b);\n'
        "__global__ void firsts(int* out) { if (threadIdx.x == 0) out[blockIdx.x] = block_first(4); }\n"
        "int main() {\n  int* d; cudaMallocManaged(&d, 8 * sizeof(int));\n  firsts<<<8, 32>>>(d);\n"
        "  cudaDeviceSynchronize();\n  int ok = 1;\n  for (int b = 0; b < 8; b++) ok &= d[b] == expected(b);\n"
        '  printf("%s\\n", ok ? "PASS" : "FAIL");\n  return !ok;\n}\n')
    out = tmp_path / "out"
    status = port_repository(root, Settings(sandbox="local", tune=False), out=out, trace=None, check_commands=None,
                             console=Console(quiet=True))
    assert status == 0, (out / "PORT_REPORT.md").read_text()
    [cpp_line] = [line for line in (out / "src" / "Makefile.cpu").read_text().splitlines() if "-c helpers.cpp" in line]
    assert "-include cuda_runtime.h" in cpp_line


GPU_OUTPUTS = Path(__file__).resolve().parents[1] / "bench" / "results" / "gpu-goldens" / "hecbench-dev"


def test_a_real_application_prints_the_numbers_its_original_printed_on_a_gpu(tmp_path):
    """lfib4's 27 numbers (the generator's outputs and sums), as the original printed them on an
    H200 for the same command, compared by `--expected-output` (timing lines skipped)."""
    root = HECBENCH / "lfib4-cuda"
    if not root.is_dir():
        pytest.skip(f"{root} is absent: the HeCBench development set is not beside this checkout")
    command = next(line.split("\t")[1] for line in (GPU_OUTPUTS / "commands.tsv").read_text().splitlines()
                   if line.startswith("lfib4\t"))
    out = tmp_path / "out"
    status = port_repository(root, Settings(sandbox="local", tune=False), out=out, trace=None, check_commands=[command],
                             console=Console(quiet=True), expected_output=GPU_OUTPUTS / "lfib4.txt")
    report = (out / "PORT_REPORT.md").read_text()
    assert status == 0 and "numbers match the original run" in report, report


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_cuda_libraries_the_runtime_provides_are_not_linked(tmp_path):
    root = tmp_path / "app"
    root.mkdir()
    (root / "main.cu").write_text("int main() { return 0; }\n")
    (root / "Makefile").write_text("main: main.cu\n\tnvcc -O3 main.cu -o main -lcusolver -lcublas -lm\n")
    makefile = write_makefile(tmp_path, discover(root).executables, ["-O3"]).read_text()
    [link] = [line for line in makefile.splitlines() if " -o $@" in line and " -c " not in line]
    assert "-lm" in link.split() and not {"-lcusolver", "-lcublas"} & set(link.split()), link
