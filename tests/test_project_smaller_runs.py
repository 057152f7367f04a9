"""Smaller runs of a program that times out (tools/project/smaller_runs.py): the arguments that only repeat
its kernel launches, and those that size its data, found from the uses of what `main` reads from argv,
whatever the variable is called."""

import pytest

from tools.project.smaller_runs import Elsewhere, ProblemArgument, file_facts, problem_arguments, smaller_runs

KERNEL = "__global__ void k(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }\n"


def found(main: str, helpers: str = "", role: str = "repeats") -> list[tuple[int, str]]:
    source = "#include <cstdio>\n#include <cstdlib>\n#include <vector>\n" + KERNEL + helpers + main
    return [(a.index, a.name) for a in problem_arguments(source, "main.cu", [], []) if a.role == role]


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
static void check(float* h, int n, int count) { h[0] = n; }  // takes the count, and ignores it
"""
    assert found("""
int main(int argc, char** argv) {
  int n = 1 << 20, passes = 10;
  if (argc > 1) sscanf(argv[1], "%d", &passes);
  float* d; cudaMalloc(&d, n * sizeof(float));
  float* h = (float*)malloc(n * sizeof(float));
  run(d, n, passes);
  reference<float>(h, n, passes);
  check(h, n, passes);
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


@pytest.mark.parametrize("allocation", [
    "float* d; cudaMalloc(&d, bytes);",
    "float* h = (float*)malloc(bytes);",
    "std::vector<float> h(elements);",
    "float* h = new float[elements];",
])
def test_an_argument_that_sizes_an_allocation_through_variables_and_helpers_is_a_size(allocation):
    helpers = f"static void work(int elements) {{ size_t bytes; bytes = elements * sizeof(float); {allocation} }}\n"
    assert found("""
int main(int argc, char** argv) {
  const int width = atoi(argv[1]);
  const int mask = atoi(argv[2]);
  int total = width * 2;
  if (mask > 3) work(total);
}""", helpers, role="size") == [(1, "width")]


def test_an_argument_that_divides_what_sizes_an_allocation_is_made_larger():
    """`threads = length / per_thread`: the larger the argument, the smaller the problem."""
    helpers = ("template <typename T> void cost(int length, int size) { int threads = length / size;\n"
               "  T* d; cudaMalloc(&d, sizeof(T) * threads); }\n")
    main = """
int main(int argc, char** argv) {
  const int per_thread = atoi(argv[1]);
  size_t blocks = 1UL << 40;
  blocks >>= atoi(argv[2]);
  float* h = (float*)malloc(blocks);
  cost<double>(922521600, per_thread);
}"""
    assert found(main, helpers, role="inverse size") == [(1, "per_thread")]
    assert found(main, helpers, role="size") == []
    args = [ProblemArgument(1, "per_thread", "inverse size"), ProblemArgument(2, "repeat", "repeats")]
    assert smaller_runs("./main 1 10", "main", args)[-1] == (
        "./main 16 1", "a smaller problem (argument 2 (`repeat`) 10 -> 1; argument 1 (`per_thread`) 1 -> 16)", True)


def test_the_command_is_rewritten_only_where_it_is_one_program_with_such_an_argument():
    args = [ProblemArgument(2, "repeat", "repeats")]
    assert smaller_runs("./main 4096 100", "main", args) == [
        ("./main 4096 1", "the same problem repeated fewer times (argument 2 (`repeat`) 100 -> 1)", False)]
    assert smaller_runs("cd bin && ./main 4096 100", "main", args)[0][0] == "cd bin && ./main 4096 1"
    assert smaller_runs("./main 4096 1", "main", args) == []  # nothing to make fewer
    assert smaller_runs("./main 4096", "main", args) == []
    assert smaller_runs("./main 4096 100 | tee log", "main", args) == []
    assert smaller_runs("./other 4096 100", "main", args) == []


def test_sizes_are_cut_after_the_repetitions_by_a_power_of_two_that_divides_them():
    args = [ProblemArgument(1, "n", "size"), ProblemArgument(2, "repeat", "repeats"), ProblemArgument(3, "m", "size")]
    assert smaller_runs("./main 134217728 100 1000", "main", args) == [
        ("./main 134217728 1 1000", "the same problem repeated fewer times (argument 2 (`repeat`) 100 -> 1)", False),
        ("./main 8388608 1 125", "a smaller problem (argument 2 (`repeat`) 100 -> 1; argument 1 (`n`) 134217728 -> "
                                 "8388608; argument 3 (`m`) 1000 -> 125)", True)]
    assert smaller_runs("./main 4096 1 999", "main", args) == [("./main 256 1 999", "a smaller problem (argument 1 (`n`) "
                                                                "4096 -> 256)", True)]  # 999: no power of two divides it
    assert smaller_runs("./main 224 1 100", "main", args) == [("./main 28 1 25", "a smaller problem (argument 1 (`n`) "
                                                               "224 -> 28; argument 3 (`m`) 100 -> 25)", True)]
    assert smaller_runs("./main 24 1 20", "main", args) == []  # cut, they would fall under 16


def test_option_values_read_by_getopt_or_by_comparing_argv_are_found_under_their_option():
    source = """#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
""" + KERNEL + """
int main(int argc, char** argv) {
  int n = 1024, iterations = 10, verbose = 0;
  int c;
  while ((c = getopt(argc, argv, "n:i:v")) != -1) {
    switch (c) {
      case 'n': n = atoi(optarg); break;
      case 'i': iterations = atoi(optarg); break;
      case 'v': verbose = 1; break;
    }
  }
  int blocks = 0;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--blocks") == 0 && a + 1 < argc) blocks = atoi(argv[++a]);
    else if (strcmp(argv[a], "--tag") == 0) printf("%s\\n", argv[++a]);
  }
  float* d; cudaMalloc(&d, n * sizeof(float) + blocks);
  for (int r = 0; r < iterations; r++) k<<<(n + 255) / 256, 256>>>(d, n);
  if (verbose) printf("%d\\n", iterations);
}"""
    assert {(a.option, a.name, a.role) for a in problem_arguments(source, "main.cu", [], [])} == {
        ("-n", "n", "size"), ("-i", "iterations", "repeats"), ("--blocks", "blocks", "size")}


def test_an_option_value_is_rewritten_where_the_command_gives_the_option():
    args = [ProblemArgument(0, "n", "size", "-n"), ProblemArgument(0, "iterations", "repeats", "-i")]
    assert smaller_runs("./main -i 100 -n 20000 -v", "main", args) == [
        ("./main -i 1 -n 20000 -v", "the same problem repeated fewer times (option -i (`iterations`) 100 -> 1)", False),
        ("./main -i 1 -n 1250 -v", "a smaller problem (option -i (`iterations`) 100 -> 1; option -n (`n`) 20000 -> 1250)",
         True)]
    assert smaller_runs("./main -v 100", "main", args) == []  # `-v` is no option of theirs
    assert smaller_runs("./main -n", "main", args) == []


def test_a_loop_calling_a_function_that_launches_in_another_file_repeats():
    wrappers = "#include <cstdio>\n" + KERNEL + """
static void step(float* d, int n) { k<<<(n + 255) / 256, 256>>>(d, n); }
extern "C" void dilate(float* d, int n) { step(d, n); }
void reference(float* h, int n) { for (int i = 0; i < n; i++) h[i] += 1; }
"""
    assert file_facts(wrappers, "filters.cu", [], []).launching == {"step", "dilate"}
    main = """#include <cstdlib>
extern "C" void dilate(float* d, int n);
void reference(float* h, int n);
int main(int argc, char** argv) {
  int repeat = atoi(argv[1]), checks = atoi(argv[2]);
  float* d; cudaMalloc(&d, 1024 * sizeof(float));
  float h[1024];
  for (int r = 0; r < repeat; r++) dilate(d, 1024);
  for (int r = 0; r < checks; r++) reference(h, 1024);
}"""
    assert problem_arguments(main, "main.cu", [], []) == []  # nothing here says dilate launches
    assert problem_arguments(main, "main.cu", [], [], elsewhere=Elsewhere(frozenset({"step", "dilate"}))) == [
        ProblemArgument(1, "repeat", "repeats")]


def test_counts_and_sizes_stored_in_a_struct_s_fields_are_found():
    helpers = """
struct Params { int n; unsigned repeat; float scale; };
static void run(const Params& p, float* d) { for (unsigned r = 0; r < p.repeat; r++) k<<<(p.n + 255) / 256, 256>>>(d, p.n); }
"""
    main = """
int main(int argc, char** argv) {
  Params p;
  p.n = atoi(argv[1]);
  p.repeat = (unsigned)atoi(argv[2]);
  p.scale = atof(argv[3]);
  float* d; cudaMalloc(&d, p.n * sizeof(float));
  run(p, d);
  printf("scale %f\\n", p.scale);
}"""
    assert found(main, helpers) == [(2, "repeat")]
    assert found(main, helpers, role="size") == [(1, "n")]


def test_a_size_put_in_a_shape_container_and_multiplied_out_by_a_helper_is_found():
    helpers = "static size_t product(const std::vector<int>& dims) { size_t r = 1; for (int d : dims) r *= d; return r; }\n"
    assert found("""
int main(int argc, char** argv) {
  const int dim = atoi(argv[1]);
  std::vector<int> shape;
  for (int i = 0; i < 3; i++) shape.push_back(dim);
  size_t n = product(shape);
  float* h = (float*)malloc(n * sizeof(float));
  float* d; cudaMalloc(&d, n * sizeof(float));
  k<<<(n + 255) / 256, 256>>>(d, n);
}""", helpers, role="size") == [(1, "dim")]


def test_a_count_stored_in_a_field_and_used_in_another_file_is_found_there():
    header = "struct Params { int n; unsigned repeat; };\nvoid run(const Params& p, float* d);\n"
    kernels = "#include <cstdio>\n" + header + KERNEL + """
void run(const Params& p, float* d) { for (unsigned r = 0; r < p.repeat; r++) k<<<(p.n + 255) / 256, 256>>>(d, p.n); }
"""
    main = "#include <cstdlib>\n" + header + """
int main(int argc, char** argv) {
  Params p;
  p.n = 1 << 20;
  p.repeat = atoi(argv[1]);
  float* d; cudaMalloc(&d, p.n * sizeof(float));
  run(p, d);
}"""
    facts = file_facts(kernels, "kernels.cu", [], [])
    assert facts.launching == {"run"} and facts.fields["Params.repeat"] == ("repeats", False)
    assert problem_arguments(main, "main.cu", [], []) == []  # nothing here says what run does with it
    assert problem_arguments(main, "main.cu", [], [], elsewhere=facts) == [ProblemArgument(1, "repeat", "repeats")]


@pytest.mark.parametrize("declared, stored", [
    ("static int repeat = 1;", "repeat = atoi(argv[2]);"),  # a file-scope variable, assigned in main
    ("namespace cfg { int repeat; }", "cfg::repeat = atoi(argv[2]);"),  # a namespace's
    ("", "int repeat; if (argc > 2) repeat = atoi(argv[2]); else repeat = 100;"),  # a local, assigned
])
def test_a_count_assigned_to_a_variable_read_by_other_functions_is_a_repetition(declared, stored):
    """What argv is read into by assignment is followed as what it initialises: a file-scope variable
    wherever the file's functions read it."""
    name = "cfg::repeat" if "namespace" in declared else "repeat"
    helpers = f"""{declared}
static void run(float* d, int n{", int repeat" if not declared else ""}) {{ for (int i = 0; i < {name}; i++) k<<<(n + 255) / 256, 256>>>(d, n); }}
"""
    assert found(f"""
int main(int argc, char** argv) {{
  int n;
  n = atoi(argv[1]);
  {stored}
  float* d; cudaMalloc(&d, n * sizeof(float));
  run(d, n{", repeat" if not declared else ""});
  printf("%d launches\\n", {name});
}}""", helpers) == [(2, "repeat")]


def test_a_file_scope_variable_used_as_a_kernel_argument_is_no_repetition():
    assert found("""
static int repeat;
static void check(float* d) { k<<<1, 256>>>(d, repeat); }
int main(int argc, char** argv) {
  repeat = atoi(argv[1]);
  float* d; cudaMalloc(&d, 256 * sizeof(float));
  for (int i = 0; i < repeat; i++) k<<<1, 256>>>(d, 256);
  check(d);
}""") == []


def test_a_count_stored_in_a_program_variable_and_used_in_another_file_is_found_there():
    kernels = "#include <cstdio>\n" + KERNEL + """
extern int repeat;
void run(float* d, int n) { for (int r = 0; r < repeat; r++) k<<<(n + 255) / 256, 256>>>(d, n); }
"""
    main = """#include <cstdlib>
int repeat = 1;
void run(float* d, int n);
int main(int argc, char** argv) {
  repeat = atoi(argv[1]);
  float* d; cudaMalloc(&d, 1024 * sizeof(float));
  run(d, 1024);
}"""
    facts = file_facts(kernels, "kernels.cu", [], [])
    assert facts.launching == {"run"} and facts.fields["::repeat"] == ("repeats", False)
    assert problem_arguments(main, "main.cu", [], [], elsewhere=facts) == [ProblemArgument(1, "repeat", "repeats")]


BENCHMARK_HELPERS = """#include <chrono>
#include <functional>
#include <utility>
static void forward(int version, float* d, int n) { if (version == 0) k<<<(n + 255) / 256, 256>>>(d, n); else k<<<(n + 127) / 128, 128>>>(d, n); }
static void reference(int version, float* d, int n) { for (int i = 0; i < n; i++) d[i] += version; }
template <class Kernel, class... Args>
float benchmark(int repeats, Kernel kernel, Args&&... args) {
  float elapsed = 0.f;
  for (int i = 0; i < repeats; i++) {
    auto start = std::chrono::high_resolution_clock::now();
    kernel(std::forward<Args>(args)...);
    std::chrono::duration<float, std::milli> took = std::chrono::high_resolution_clock::now() - start;
    elapsed += took.count();
  }
  return elapsed / repeats;
}
template <class Kernel> void benchmark_all(int times, Kernel kernel, float* d, int n) { benchmark(times, kernel, 1, d, n); }
static void timed(void (*f)(int, float*, int), float* d, int n, int times) { for (int t = 0; t < times; t++) (*f)(0, d, n); }
static void each(const std::function<void()>& body, int times) { for (int t = 0; t < times; t++) body(); }
template <class F> void each_of(int times, F&& body) { for (int t = 0; t < times; t++) body(); }
"""


@pytest.mark.parametrize("call", [
    'printf("%f ms\\\\n", benchmark(repeat, forward, 0, d, n));',  # a template taking the function to time
    "benchmark_all(repeat, forward, d, n);",  # passed on through another helper's parameter
    "timed(forward, d, n, repeat);",  # a function pointer
    "timed(&forward, d, n, repeat);",
    "each([&] { k<<<1, 256>>>(d, n); }, repeat);",  # a lambda, as a std::function
    "each_of(repeat, [=] { forward(1, d, n); });",  # a lambda, as a template's callable
    "auto step = [&] { k<<<1, 256>>>(d, n); }; each_of(repeat, step);",  # a lambda, named
])
def test_a_count_bounding_a_helper_s_loop_that_calls_a_function_passed_to_it_is_a_repetition(call):
    """The loop around the launches is in a helper, which calls what it was given: a function of the
    program's that launches, or a lambda that does."""
    main = f"""
int main(int argc, char** argv) {{
  const int n = atoi(argv[1]);
  const int repeat = atoi(argv[2]);
  float* d; cudaMalloc(&d, n * sizeof(float));
  {call}
}}"""
    assert found(main, BENCHMARK_HELPERS) == [(2, "repeat")]
    # the same helper given a function that launches nothing repeats no launch
    assert found(main.replace("forward", "reference").replace("k<<<1, 256>>>(d, n)", "d[0] = n"), BENCHMARK_HELPERS) == []


SCALE = "__global__ void scale(float* x, float p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += p; }\n"


@pytest.mark.parametrize("loop", [
    "for (int p = 1; p <= repeat; p++) { float pa = (float)p / repeat; scale<<<1, 256>>>(d, pa, 256); }",
    "for (int i = 0; i < repeat; i++) scale<<<1, 256>>>(d, 1.0f / repeat, 256);",  # the count itself, divided
    "for (int i = 0; i < repeat; i++) k<<<1, 256>>>(d, i);",  # the loop's variable, a kernel's argument
    "for (int i = 0; i < repeat; i++) scale<<<1, 256>>>(d, i * 0.5f, 256);",
    "int r = repeat; while (r-- > 0) scale<<<1, 256>>>(d, (float)r, 256);",
])
def test_a_count_that_changes_what_the_repeated_kernels_compute_is_no_repetition(loop):
    """Each pass computes something else (a fraction of the count, the pass's number): at 1 the program
    computes other data than the command's, so the count is not cut."""
    assert found(f"""
int main(int argc, char** argv) {{
  const int repeat = atoi(argv[1]);
  float* d; cudaMalloc(&d, 256 * sizeof(float));
  {loop}
}}""", SCALE) == []


@pytest.mark.parametrize("timing", [
    'printf("%f us\\\\n", (time * 1e-3f) / repeat);',
    'double average = time / repeat; printf("%f\\\\n", average * 1e-3);',
    'time /= repeat; printf("%f\\\\n", time);',
    'printf("%f GB/s\\\\n", 2.0 * 256 * 4 / (time / repeat) / 1e9);',
    # the average stored back into the time it divides
    'time = time / repeat; printf("%f\\\\n", time);',
    # a bandwidth computed through a chain of arithmetic from a copy of the average
    'float average = time / repeat; float bandwidth = 2 * 256 * 4 / average / 1e6 * 8; printf("%f\\\\n", bandwidth);',
    # both, as a benchmark's summary line does
    'float elapsed = time; elapsed = elapsed / repeat; size_t bytes = (2 * 256 + 4) * 4;'
    ' float bandwidth = bytes / elapsed / 1e6; printf("%f ms %.2f GB/s\\\\n", elapsed, bandwidth);',
])
def test_a_count_that_averages_the_timed_launches_is_a_repetition(timing):
    """Divided by the count, a time is only printed; and the loop's variable only printed changes nothing."""
    assert found(f"""
int main(int argc, char** argv) {{
  const int repeat = atoi(argv[1]);
  float* d; cudaMalloc(&d, 256 * sizeof(float));
  double time = 0;
  for (int i = 0; i < repeat; i++) {{ scale<<<1, 256>>>(d, 1.0f, 256); time += 1.5; printf("pass %d\\\\n", i); }}
  {timing}
}}""", SCALE) == [(1, "repeat")]


# a repetition count checked by `check` before the launches it repeats
CHECKED_COUNT = """
#define LIMIT 4
int main(int argc, char** argv) {{
  const int repeat = atoi(argv[1]);
  {check}
  float* d; cudaMalloc(&d, 256 * sizeof(float));
  for (int r = 0; r < repeat; r++) k<<<1, 256>>>(d, 256);
}}"""


@pytest.mark.parametrize("check", [
    "if (repeat < 1) { printf(\"Iterations cannot be 0 or negative\\n\"); return -1; }",
    "if (repeat <= 0) return 1;",
    "if (0 >= repeat) exit(1);",
    "if (repeat == 0) return 0;",
    "if (repeat > 0) printf(\"timing %d runs\\n\", repeat);",
])
def test_a_count_checked_against_a_bound_every_count_from_1_passes_is_a_repetition(check):
    """`if (iterations < 1) return -1;` before the timed launches: the count at 1 passes the check as the
    count given did (the check made it no repetition: a program timing 1000 launches had no smaller run)."""
    assert found(CHECKED_COUNT.format(check=check)) == [(1, "repeat")]


@pytest.mark.parametrize("check", [
    "if (repeat < 2) return 1;",  # 1 fails a check the count given passed
    "if (repeat <= 1) return 1;",
    "if (repeat == 1) return 1;",
    "if (repeat != 1) printf(\"several\\n\");",
    "if (repeat < LIMIT) return 1;",  # a bound the analysis does not read
])
def test_a_count_checked_against_a_bound_that_1_may_not_pass_is_no_repetition(check):
    assert found(CHECKED_COUNT.format(check=check)) == []


EXTENT_KERNEL = """
__global__ void count(const unsigned char* data, int cols, int first, int second, int* out) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols) return;
  int m, n, hits = 0;
  for (m = 0; m < first; m++) hits += data[(size_t)m * cols + col] == '1';
  for (n = first; n < first + second; n++) hits -= data[(size_t)n * cols + col] == '1';
  out[col] = hits;
}
"""


def test_an_argument_bounding_a_kernel_s_loop_that_indexes_the_data_is_an_extent():
    # rows sizes the data; `first` and `second` (first + second == rows) say how many of its rows the kernel reads
    main = """
int main(int argc, char** argv) {
  int rows = atoi(argv[1]), cols = atoi(argv[2]), first = atoi(argv[3]), second = atoi(argv[4]);
  unsigned char* d; cudaMalloc(&d, (size_t)rows * cols);
  int* out; cudaMalloc(&out, cols * sizeof(int));
  int height = atoi(argv[5]);
  int clamped = height < rows ? height : rows;  // a clamp: no loop's bound
  if (clamped > 2) printf("tall\\n");
  count<<<(cols + 255) / 256, 256>>>(d, cols, first, second, out);
}"""
    assert found(main, EXTENT_KERNEL, role="extent") == [(3, "first"), (4, "second")]
    assert found(main, EXTENT_KERNEL, role="size") == [(1, "rows"), (2, "cols")]


def test_extents_are_cut_with_the_sizes_and_by_no_more_than_them():
    args = [ProblemArgument(1, "rows", "size"), ProblemArgument(2, "cols", "size"), ProblemArgument(3, "first", "extent"),
            ProblemArgument(4, "second", "extent"), ProblemArgument(5, "repeat", "repeats")]
    assert smaller_runs("./main 4000 400000 2000 2000 1000", "main", args)[-1] == (
        "./main 250 25000 125 125 1", "a smaller problem (argument 5 (`repeat`) 1000 -> 1; argument 1 (`rows`) "
        "4000 -> 250; argument 2 (`cols`) 400000 -> 25000; argument 3 (`first`) 2000 -> 125; argument 4 (`second`) "
        "2000 -> 125)", True)
    # the rows cut by 4 only: the extents by no more; an odd extent stays
    assert smaller_runs("./main 100 4096 48 51 1", "main", args) == [
        ("./main 25 256 12 51 1", "a smaller problem (argument 1 (`rows`) 100 -> 25; argument 2 (`cols`) 4096 -> 256; "
                                  "argument 3 (`first`) 48 -> 12)", True)]
    # with no size cut, an extent alone is left as it is
    only = [ProblemArgument(1, "first", "extent"), ProblemArgument(2, "repeat", "repeats")]
    assert smaller_runs("./main 2000 100", "main", only) == [
        ("./main 2000 1", "the same problem repeated fewer times (argument 2 (`repeat`) 100 -> 1)", False)]


def test_a_block_size_that_also_splits_the_work_among_threads_is_no_extent():
    # `threads` bounds each thread's loop over the data it fills, as `first` does in the test above, but it is
    # the launch's block size too: it says how the work is split, not how much there is
    helpers = """
__global__ void fill(int* data, int per_thread) {
  int start = (blockIdx.x * blockDim.x + threadIdx.x) * per_thread;
  for (int i = 0; i < per_thread; i++) data[start + i] = i;
}
"""
    main = """
int main(int argc, char** argv) {
  int n = atoi(argv[1]), threads = atoi(argv[2]);
  int* d; cudaMalloc(&d, n * sizeof(int));
  int work = threads;
  fill<<<n / (threads * threads), threads>>>(d, work);
}"""
    assert found(main, helpers, role="extent") == []
    assert found(main, helpers, role="size") == [(1, "n")]


def test_a_count_that_repeats_library_device_work_is_a_repetition():
    # No `<<<...>>>` of its own: the timed loop runs Thrust algorithms (or cuBLAS computations).
    source = r"""
#include <cstdio>
#include <cstdlib>
#include <thrust/device_vector.h>
#include <thrust/sequence.h>
#include <thrust/reduce.h>
#include <cublas_v2.h>
int main(int argc, char** argv) {
  const int n = atoi(argv[1]);
  const int repeat = atoi(argv[2]);
  const int handles = atoi(argv[3]);
  thrust::device_vector<float> v(n);
  double sum = 0;
  for (int r = 0; r < repeat; r++) {
    thrust::sequence(v.begin(), v.end());
    sum = thrust::reduce(v.begin(), v.end());
  }
  cublasHandle_t h;
  for (int r = 0; r < handles; r++) { cublasCreate(&h); cublasDestroy(h); }
  float result;
  for (int r = 0; r < repeat; r++) cublasSasum(h, n, thrust::raw_pointer_cast(v.data()), 1, &result);
  printf("average %f %f\n", 1.0 / repeat, 1.0 / handles);
  printf("%s\n", sum == 0.5 * n * (n - 1) ? "PASS" : "FAIL");
}
"""
    roles = {(a.index, a.name): a.role for a in problem_arguments(source, "main.cu", [], [])}
    assert roles.get((2, "repeat")) == "repeats"
    assert roles.get((3, "handles")) != "repeats"  # creating and destroying a handle computes nothing
