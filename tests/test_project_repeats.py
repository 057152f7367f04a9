"""Arguments that only repeat a program's kernel launches (tools/project/repeats.py): found from the
uses of what `main` reads from argv, whatever the variable is called; any other use leaves them alone."""

import pytest

from tools.project.repeats import Repetition, fewer_repetitions, repetition_arguments

KERNEL = "__global__ void k(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }\n"


def found(main: str, helpers: str = "") -> list[tuple[int, str]]:
    source = "#include <cstdio>\n#include <cstdlib>\n" + KERNEL + helpers + main
    return [(r.index, r.name) for r in repetition_arguments(source, "main.cu", [], [])]


def test_a_count_that_bounds_the_launch_loop_averages_and_prints_is_a_repetition():
    assert found("""
int main(int argc, char** argv) {
  const int n = atoi(argv[1]);
  const int times = atoi(argv[2]);
  float* d; cudaMalloc(&d, n * sizeof(float));
  double t = 0;
  for (int r = 0; r < times; r++) k<<<(n + 255) / 256, 256>>>(d, n);
  printf("average %f over %d\\n", t / times, times);
}""") == [(2, "times")]


def test_a_count_passed_to_helpers_that_launch_and_to_a_repeated_reference_is_a_repetition():
    helpers = """
template <typename T> void reference(T* h, int n, int iterations) { for (int r = 0; r < iterations; r++) for (int i = 0; i < n; i++) h[i] += 1; }
static void launch(float* d, int n) { k<<<(n + 255) / 256, 256>>>(d, n); }
static void run(float* d, int n, int count) { int c; c = count; while (c-- > 0) launch(d, n); }
"""
    assert found("""
int main(int argc, char** argv) {
  int n = 1 << 20, passes = 10;
  if (argc > 1) sscanf(argv[1], "%d", &passes);
  float* d; cudaMalloc(&d, n * sizeof(float));
  float* h = (float*)malloc(n * sizeof(float));
  run(d, n, passes);
  reference<float>(h, n, passes);
}""", helpers) == [(1, "passes")]


@pytest.mark.parametrize("use", [
    "float* e; cudaMalloc(&e, count * sizeof(float));",  # a size
    "k<<<1, 256>>>(d, count);",  # a kernel's argument
    "if (count > 5) printf(\"many\\n\");",  # a branch
    "for (int i = 0; i < 8; i++) d[i] = count * 2;",  # a value computed with
])
def test_any_other_use_leaves_the_argument_alone(use):
    assert found(f"""
int main(int argc, char** argv) {{
  int count = atoi(argv[1]);
  float* d; cudaMalloc(&d, 256 * sizeof(float));
  for (int r = 0; r < count; r++) k<<<1, 256>>>(d, 256);
  {use}
}}""") == []


def test_a_loop_that_launches_nothing_makes_no_repetition():
    assert found("""
int main(int argc, char** argv) {
  int count = atoi(argv[1]);
  float h[4] = {0};
  for (int r = 0; r < count; r++) h[r % 4] += 1;
}""") == []


def test_the_command_is_rewritten_only_where_it_is_one_program_with_such_an_argument():
    reps = [Repetition(2, "repeat")]
    assert fewer_repetitions("./main 4096 100", "main", reps) == ("./main 4096 1", "argument 2 (`repeat`) 100 -> 1")
    assert fewer_repetitions("cd bin && ./main 4096 100", "main", reps)[0] == "cd bin && ./main 4096 1"
    assert fewer_repetitions("./main 4096 1", "main", reps) is None  # nothing to make fewer
    assert fewer_repetitions("./main 4096", "main", reps) is None
    assert fewer_repetitions("./main 4096 100 | tee log", "main", reps) is None
    assert fewer_repetitions("./other 4096 100", "main", reps) is None
