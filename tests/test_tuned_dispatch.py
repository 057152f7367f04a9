"""Where a tuned kernel version runs in a port (tools/project/capture.py, cuda_cpu_launch.h): the
captured launch shape always; pointer arguments in allocations of their own, as in the capture
it was verified on; the captured scalar values only where the version was verified for them
alone. Built with the real g++ against the CPU runtime; the faithful and tuned versions say
which of them ran."""

import subprocess
from pathlib import Path

import pytest

from tools.optimize import exact_for_any_arguments
from tools.project.capture import HEADER, Capture, CapturedArg, tuned_dispatch_source

RUNTIME = Path(__file__).resolve().parent.parent / "tools" / "cuda" / "runtime" / "include"

TASK = {"entry": "step_captured",
        "buffers": [{"name": "a", "dtype": "float32", "shape": [64], "role": "inout"},
                    {"name": "b", "dtype": "float32", "shape": [64], "role": "input"}],
        "scalars": [{"name": "pass", "dtype": "int32", "value": 0}],
        "launches": [{"kernel": "step", "args": ["a", "b", "pass"]}]}
CAPTURE = Capture("step", "", [2, 1, 1], [32, 1, 1], 0, [CapturedArg("pointer"), CapturedArg("pointer"),
                                                          CapturedArg("scalar")])
TUNED = """// tools.optimize: serial_launches, launch_constants
#include <cstdio>
extern "C" void step_captured(float* a, float* b, int pass) { std::printf("tuned %d\\n", pass); }
"""
PROGRAM = r"""
#include <cstdio>
#include "cuda_cpu_launch.h"
namespace cudacpu_kernels {
void step(dim3, dim3, std::size_t, float* a, float* b, int pass) { std::printf("faithful %d\n", pass); }
}
int main() {
    float *a, *b;
    cudaMalloc(&a, 64 * sizeof(float));
    cudaMalloc(&b, 64 * sizeof(float));
    float host[64];
    for (int pass = 0; pass < 2; ++pass)  // the captured value, then another
        cudacpu_launch::cudacpu_kernel_launch("step", "", &cudacpu_kernels::step, dim3(2), dim3(32), 0, a, b, pass);
    cudacpu_launch::cudacpu_kernel_launch("step", "", &cudacpu_kernels::step, dim3(4), dim3(32), 0, a, b, 2);  // another shape
    cudacpu_launch::cudacpu_kernel_launch("step", "", &cudacpu_kernels::step, dim3(2), dim3(32), 0, a, a + 8, 3);  // overlapping
    cudacpu_launch::cudacpu_kernel_launch("step", "", &cudacpu_kernels::step, dim3(2), dim3(32), 0, a, host, 4);  // not allocated
    return 0;
}
"""


def _run(tmp_path: Path, pin_scalars: bool, tuned: str = TUNED) -> list[str]:
    (tmp_path / "tuned.cpp").write_text(tuned_dispatch_source(CAPTURE, TASK, tuned, pin_scalars=pin_scalars))
    (tmp_path / "main.cpp").write_text(PROGRAM)
    binary = tmp_path / "main"
    built = subprocess.run(["g++", "-std=c++17", "-fopenmp", f"-I{RUNTIME}", f"-I{HEADER.parent}", "main.cpp", "tuned.cpp",
                            "-o", str(binary)], cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split("\n")[:-1]


def test_a_version_exact_for_any_arguments_runs_for_every_scalar_value_of_its_shape(tmp_path):
    assert _run(tmp_path, pin_scalars=False) == ["tuned 0", "tuned 1", "faithful 2", "faithful 3", "faithful 4"]


def test_a_version_verified_on_the_captured_values_runs_for_those_only(tmp_path):
    assert _run(tmp_path, pin_scalars=True) == ["tuned 0", "faithful 1", "faithful 2", "faithful 3", "faithful 4"]


def test_the_kernels_macros_leave_the_dispatch_alone(tmp_path):
    """A kernel's text keeps its program's macros (asta: `#define T float` from its common.h);
    neither the launch header's templates nor the dispatch's own names may meet them."""
    macros = "#define T float\n#define grid 1\n#define args 2\n#define shared 3\n"
    tuned = TUNED.replace("#include <cstdio>\n", "#include <cstdio>\n" + macros)
    assert _run(tmp_path, pin_scalars=True, tuned=tuned)[:2] == ["tuned 0", "faithful 1"]


@pytest.mark.parametrize("marker,exact", [
    ("// tools.optimize: serial_launches, launch_constants", True),
    ("// tools.optimize: searched, input kept", True),
    ("// tools.optimize: specialize, block_scans", False),  # chosen by testing on the captured data
    ("// tools.optimize: launch_constants, reassociate", False),  # rounding the data decides
    ("// tools.optimize: a_transformation_this_version_does_not_know", False),
    ("// written by hand or by an LLM", False),
])
def test_which_optimized_versions_hold_for_any_argument_values(marker, exact):
    assert exact_for_any_arguments(marker + "\nint x;\n") is exact


SPECIALIZED = r"""
#include <cstdio>
#include "cuda_cpu_launch.h"
namespace cudacpu_kernels {
template <typename T>
void scale(dim3, dim3, std::size_t, T* x) { std::printf("faithful %s\n", cudacpu_launch::dtype_name<T>()); }
}
int main() {
    float* f;
    double* d;
    int* i;
    cudaMalloc(&f, 64 * sizeof(float));
    cudaMalloc(&d, 64 * sizeof(double));
    cudaMalloc(&i, 64 * sizeof(int));
    cudacpu_launch::cudacpu_kernel_launch("scale", "float", &cudacpu_kernels::scale<float>, dim3(2), dim3(32), 0, f);
    cudacpu_launch::cudacpu_kernel_launch("scale", "double", &cudacpu_kernels::scale<double>, dim3(2), dim3(32), 0, d);
    cudacpu_launch::cudacpu_kernel_launch("scale", "int", &cudacpu_kernels::scale<int>, dim3(2), dim3(32), 0, i);
    return 0;
}
"""


def test_each_specialization_of_a_template_kernel_runs_its_own_tuned_version(tmp_path):
    """k<float> and k<double> are captured and tuned apart (labels scale, scale__s1): both tuned
    versions link into one program, each runs for its own specialization, k<int> stays faithful."""
    sources = []
    for index, (args, dtype, ctype) in enumerate([("float", "float32", "float"), ("double", "float64", "double")]):
        capture = Capture("scale", args, [2, 1, 1], [32, 1, 1], 0, [CapturedArg("pointer")], index)
        task = {"entry": f"{capture.label}_captured", "scalars": [], "launches": [{"kernel": "scale", "args": ["x"]}],
                "buffers": [{"name": "x", "dtype": dtype, "shape": [64], "role": "inout"}]}
        tuned = (f'// tools.optimize: launch_constants\n#include <cstdio>\n'
                 f'extern "C" void {capture.label}_captured({ctype}* x) {{ std::printf("tuned {args}\\n"); }}\n')
        sources.append(f"tuned_{capture.label}.cpp")
        (tmp_path / sources[-1]).write_text(tuned_dispatch_source(capture, task, tuned, pin_scalars=False))
    (tmp_path / "main.cpp").write_text(SPECIALIZED)
    built = subprocess.run(["g++", "-std=c++17", "-fopenmp", f"-I{RUNTIME}", f"-I{HEADER.parent}", "main.cpp", *sources,
                            "-o", "main"], cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    ran = subprocess.run([str(tmp_path / "main")], capture_output=True, text=True, timeout=60)
    assert ran.stdout.split("\n")[:-1] == ["tuned float", "tuned double", "faithful int32"], ran.stderr


def test_a_launch_without_buffers_is_not_a_task():
    """assert's kernels take only scalars: a task of theirs would have no results to check a tuned
    version on, so the capture names why it is not tuned instead of the check failing on it."""
    capture = Capture("count", "", [1, 1, 1], [32, 1, 1], 0, [CapturedArg("scalar", "int32", 5)])
    assert "takes no buffer" in capture.problem()
    with_buffer = Capture("count", "", [1, 1, 1], [32, 1, 1], 0, [CapturedArg("scalar", "int32", 5),
                                                                  CapturedArg("pointer", "int32", allocation="0x10")])
    assert with_buffer.problem() is None
