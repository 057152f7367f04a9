"""`agent port REPO` end to end: every example project ports, builds with g++ and passes its
own check on the CPU with the default translator; a second run redoes nothing; bad input."""

import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from agent.configuration import Settings
from agent.project import port_repository
from agent.port_graph import tuning_summary
from agent.port_report import CheckReport
from tools.optimize import applied

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (ROOT / "examples" / "projects").iterdir() if p.is_dir())
AGENT = [sys.executable, "-m", "agent"]


def port_app(tmp_path: Path, main_cu: str, settings: Settings, commands: list[str] | None,
             console: Console | None = None) -> tuple[int, dict]:
    """A project of one file, `main_cu`, ported from tmp_path/app into tmp_path/out: (exit status, its port_report.json)."""
    root = tmp_path / "app"
    root.mkdir()
    (root / "main.cu").write_text(main_cu)
    code = port_repository(root, settings, out=tmp_path / "out", trace=None, check_commands=commands,
                           console=console or Console(width=200))
    return code, json.loads((tmp_path / "out" / "port_report.json").read_text())


def port(path: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*AGENT, "port", str(path), "-o", str(out), "--sandbox", "local", *extra],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_ports_builds_and_passes_its_check(name, tmp_path):
    result = port(ROOT / "examples" / "projects" / name, tmp_path / name, "--no-tune")
    report = json.loads((tmp_path / name / "port_report.json").read_text())
    assert report["build_ok"], report["build_errors"]
    assert report["check"]["passed"], report["check"]["detail"]
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert report["kernels"] and all(k["status"] == "correct" for k in report["kernels"])
    assert (tmp_path / name / "PORT_REPORT.md").is_file()
    assert not list((ROOT / "examples" / "projects" / name).glob("Makefile.cpu")), "the user's repository was written"


def test_second_run_redoes_nothing(tmp_path):
    src = ROOT / "examples" / "projects" / "histogram"
    first = port(src, tmp_path / "h", "--no-tune")
    assert first.returncode == 0, first.stderr[-2000:]
    second = port(src, tmp_path / "h", "--no-tune")
    assert second.returncode == 0, second.stderr[-2000:]
    events = [json.loads(line) for line in (tmp_path / "h" / "trace.jsonl").read_text().splitlines()[1:]]
    reused = [e for e in events if e["type"] == "decision" and e["data"].get("reused")]
    assert {e["node"] for e in reused} >= {"translate", "build", "check"}


def test_unsupported_kernel_is_reported_and_the_rest_ported(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.cu").write_text(
        "#include <cstdio>\n"
        "__global__ void ok_kernel(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 2.0f * i; }\n"
        "__global__ void child(float* a) { a[0] = 1.0f; }\n"
        "__global__ void parent(float* a) { child<<<1, 1>>>(a); }\n"
        "int main() { float* d; cudaMalloc(&d, 64 * sizeof(float)); ok_kernel<<<1, 64>>>(d, 64);\n"
        "  float h[64]; cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
        "  std::printf(h[63] == 126.0f ? \"PASS\\n\" : \"FAIL\\n\"); return h[63] == 126.0f ? 0 : 1; }\n")
    result = port(repo, tmp_path / "out", "--no-tune")
    assert result.returncode != 0
    report = json.loads((tmp_path / "out" / "port_report.json").read_text())
    status = {k["name"]: k for k in report["kernels"]}
    assert status["parent"]["status"] == "unsupported"
    assert any("main.cu:4" in reason for reason in status["parent"]["unsupported"]), status["parent"]
    assert status["ok_kernel"]["status"] in ("correct", "compile_error", "incorrect")


@pytest.mark.parametrize("setup,message", [
    (lambda d: None, "no C, C++ or CUDA sources"),
    (lambda d: (d / "main.cpp").write_text("int main() { return 0; }\n"), "no CUDA found"),
])
def test_bad_repositories_give_one_clear_line(tmp_path, setup, message):
    repo = tmp_path / "repo"
    repo.mkdir()
    setup(repo)
    result = port(repo, tmp_path / "out")
    assert result.returncode == 1
    assert message in result.stderr and "Traceback" not in result.stderr


def test_kernels_are_tuned_on_captured_launches(tmp_path):
    """The port runs once with capture on; each kernel's first launch becomes a task on the real
    data, goes through the per-kernel graph, and the result is reported per kernel."""
    result = port(ROOT / "examples" / "projects" / "heat2d", tmp_path / "heat", "--tune-budget", "15")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    out = tmp_path / "heat"
    task = json.loads((out / "kernels" / "heat_step" / "task.json").read_text())
    assert task["launches"][0]["grid"] == [5, 13, 1] and task["launches"][0]["block"] == [32, 8, 1]
    assert {b["name"] for b in task["buffers"]} == {"u", "v"}
    assert {s["name"]: s["value"] for s in task["scalars"]} == {"nx": 130, "ny": 97, "alpha": pytest.approx(0.2)}
    result_json = json.loads((out / "kernels" / "heat_step" / "result.json").read_text())
    assert result_json["status"] == "correct" and result_json["reference_kind"] == "lowered"
    report = json.loads((out / "port_report.json").read_text())
    kernel = report["kernels"][0]
    assert kernel["tuning"] and kernel["status"] == "correct"
    assert report["check"]["passed"]
    # The check's own run captured the launches: the project ran once before tuning, not twice.
    events = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
    assert any(e.get("node") == "capture" and e.get("type") == "decision" and e.get("data", {}).get("reused")
               for e in events), [e for e in events if e.get("node") == "capture"]


def test_output_is_compared_with_a_recorded_run_of_the_original(tmp_path):
    """Numbers the port prints are compared with a recorded original run, with tolerance."""
    src = ROOT / "examples" / "projects" / "matmul"
    first = port(src, tmp_path / "ok", "--no-tune")
    assert first.returncode == 0, first.stderr[-2000:]
    printed = (tmp_path / "ok" / "port_output.txt").read_text()
    recorded = tmp_path / "gpu_run.txt"
    recorded.write_text(printed.replace("total ", "total 1"))  # a different first number
    second = port(src, tmp_path / "bad", "--no-tune", "--expected-output", str(recorded))
    report = json.loads((tmp_path / "bad" / "port_report.json").read_text())
    assert second.returncode == 1 and not report["check"]["passed"]
    assert "differs from the original run" in report["check"]["detail"]
    recorded.write_text(printed)
    third = port(src, tmp_path / "good", "--no-tune", "--expected-output", str(recorded))
    report = json.loads((tmp_path / "good" / "port_report.json").read_text())
    assert third.returncode == 0 and "numbers match the original run" in report["check"]["detail"]


def test_a_read_only_repository_ports(tmp_path):
    """The port tree is a copy of the repository that the port writes (and builds) in, whatever
    the repository's own modes."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "projects" / "vector_ops", repo)
    for path in [repo, *repo.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        result = port(repo, tmp_path / "out", "--no-tune")
        assert result.returncode == 0, (tmp_path / "out" / "PORT_REPORT.md").read_text()
        assert all(p.stat().st_mode & stat.S_IWUSR for p in [tmp_path / "out" / "src", *(tmp_path / "out" / "src").rglob("*")])
    finally:
        for path in [repo, *repo.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_a_build_that_fails_says_why_on_the_console(tmp_path):
    root = tmp_path / "app"
    root.mkdir()
    (root / "main.cu").write_text("__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"
                                  "int main() { float* x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); not_defined_anywhere(); }\n")
    console = Console(record=True, width=200)
    status = port_repository(root, Settings(sandbox="local", tune=False), out=tmp_path / "out", trace=None,
                             check_commands=None, console=console)
    printed = console.export_text()
    assert status != 0
    assert "build error:" in printed and "not_defined_anywhere" in printed, printed
    assert "(`None`)" not in (tmp_path / "out" / "PORT_REPORT.md").read_text()


def test_tuning_stops_at_its_budget_and_says_so(tmp_path):
    """The first kernel is tuned; once the budget is spent the others keep their faithful lowering,
    each with the reason, and the port still passes."""
    out = tmp_path / "vec"
    result = port(ROOT / "examples" / "projects" / "vector_ops", out, "--tune-budget", "4")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    report = json.loads((out / "port_report.json").read_text())
    notes = [k["tuning"] or "" for k in report["kernels"]]
    assert report["check"]["passed"] and len(notes) == 3, notes
    # a kernel whose one check would take more than half the budget is set aside before any search
    # (how long a check takes depends on the machine's load); the others go to the search in turn
    searched = [n for n in notes if "checking one version of it takes about" not in n and "not worth tuning" not in n]
    spent = [n for n in searched if "tuning budget (4 s, --tune-budget) was spent before this kernel" in n]
    assert len(searched) >= 2 and len(spent) == len(searched) - 1, notes


def test_a_launch_too_costly_to_check_within_the_tuning_budget_is_not_tuned(tmp_path):
    """Checking a version runs the captured launch some 50 times and makes, reads and compares all
    its buffers: where that would take more than half the budget, the kernel is not tuned, with
    the figures and what to do."""
    out = tmp_path / "vec"
    result = port(ROOT / "examples" / "projects" / "vector_ops", out, "--tune-budget", "0.2")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    notes = [k["tuning"] or "" for k in json.loads((out / "port_report.json").read_text())["kernels"]]
    assert len(notes) == 3 and all("checking one version of it takes about" in n and "run about 50 times" in n
                                   and "MiB" in n and "(0.2 s, --tune-budget) allows" in n for n in notes), notes
    assert not (out / "kernels" / "trace.jsonl").exists()  # no kernel's graph ran


SPECIALIZED_APP = r"""
#include <cmath>
#include <cstdio>
#include <cuda_fp16.h>
enum Scaling { KEEP, MULTIPLY };
template <typename T>
__global__ void scale(T* x, int n, float by, Scaling how) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && how == MULTIPLY) x[i] = (T)((float)x[i] * by);
}
__global__ void mark(int* flag) { if (threadIdx.x == 0) *flag = 1; }
template <typename T>
bool run(int n, int times) {
  T* x;
  cudaMallocManaged(&x, n * sizeof(T));
  for (int i = 0; i < n; i++) x[i] = (T)(float)(i % 7);
  for (int t = 0; t < times; t++) scale<<<(n + 255) / 256, 256>>>(x, n, 0.5f, MULTIPLY);
  cudaDeviceSynchronize();
  bool ok = true;
  for (int i = 0; i < n; i++) ok &= (float)x[i] == ldexpf((float)(i % 7), -times);
  cudaFree(x);
  return ok;
}
int main() {
  // double and half take a few percent of the float runs' time: clear of the 1% tuning threshold under load
  bool ok = run<float>(1 << 22, 288) && run<double>(1 << 21, 24) && run<__half>(1 << 21, 24);
  int* flag;
  cudaMallocManaged(&flag, sizeof(int));
  *flag = 0;
  // after the others: no thread pool to start, microseconds; on a busy machine a wake-up of the
  // thread pool was seen to take tens of ms, still under 1% of the scale launches' seconds
  mark<<<1, 32>>>(flag);
  cudaDeviceSynchronize();
  ok = ok && *flag == 1;
  printf(ok ? "PASS\n" : "FAIL\n");
  return ok ? 0 : 1;
}
"""


def test_each_specialization_is_tuned_apart_hottest_first_and_a_negligible_kernel_not_at_all(tmp_path):
    """scale<float>, scale<double> and scale<__half> each become a task of their own (a half
    buffer is a float16 one, an enum argument its integer); the report lists them by the time they took; `mark`, far under 1% of
    the kernels' time, is not tuned. One attempt per kernel keeps this short."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.cu").write_text(SPECIALIZED_APP)
    out = tmp_path / "out"
    result = port(repo, out, "--max-iters", "1")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    tasks = {d.name: json.loads((d / "task.json").read_text())
             for d in (out / "kernels").iterdir() if (d / "task.json").is_file()}
    assert {name: (t["launches"][0]["template_args"], t["buffers"][0]["dtype"]) for name, t in tasks.items()} == {
        "scale": (["float"], "float32"), "scale__s1": (["double"], "float64"), "scale__s2": (["__half"], "float16")}
    assert {s["name"]: s["value"] for s in tasks["scale"]["scalars"]}["how"] == 1  # an enum, as its integer
    for name in tasks:
        assert json.loads((out / "kernels" / name / "result.json").read_text())["status"] == "correct", name
    report = {k["name"]: k for k in json.loads((out / "port_report.json").read_text())["kernels"]}
    tuning = report["scale"]["tuning"]
    assert tuning.startswith("<float>") and "<double>" in tuning and "<__half>" in tuning, tuning
    assert "not worth tuning" in report["mark"]["tuning"], report["mark"]


UNCHECKED_APP = """#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
__global__ void fill(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 1.0f; }
int main(int argc, char** argv) {
  float* d; cudaMalloc(&d, 256 * sizeof(float)); fill<<<1, 256>>>(d, 256);
  if (!std::strcmp(argv[1], "sleep")) sleep(60);
  char* big = (char*)std::malloc(size_t(2) << 30);  // unchecked, as in many apps
  for (size_t i = 0; i < (size_t(2) << 30); i += 4096) big[i] = 1;
  std::printf("PASS\\n");
}
"""


@pytest.mark.parametrize("run, settings, status, words", [
    ("./main sleep", {"check_timeout_s": 2}, "timeout", "timed out after 2s"),
    ("./main alloc", {"check_memory_mb": 1024}, "runtime_error", "at most 1024 MiB of address space"),
])
def test_a_check_that_never_reaches_its_verdict_leaves_the_kernels_unchecked(tmp_path, run, settings, status, words):
    """A check killed by its time limit or by a signal says nothing of the kernels: they are not
    'incorrect', and a crash names the memory limit that may have caused it."""
    console = Console(record=True, width=200)
    code, report = port_app(tmp_path, UNCHECKED_APP, Settings(sandbox="local", tune=False, **settings),
                            [run], console=console)
    assert code != 0 and report["build_ok"]
    assert [k["status"] for k in report["kernels"]] == [status]
    assert words in report["check"]["detail"], report["check"]["detail"]
    assert ("TIMED OUT" if status == "timeout" else "CRASHED") in console.export_text()
    # nothing in its arguments to cut: the report says so, and what the user can do
    assert any("no smaller run of it could be made" in note for note in report["check"]["notes"]), report["check"]


TWO_COMMANDS_APP = """#include <cstdio>
#include <cstring>
#include <unistd.h>
__global__ void fill(float* a) { a[threadIdx.x] = 1.0f; }
__global__ void twice(float* a) { a[threadIdx.x] *= 2.0f; }
int main(int argc, char** argv) {
  float* d; cudaMalloc(&d, 64 * sizeof(float)); fill<<<1, 64>>>(d);
  if (!std::strcmp(argv[1], "slow")) { twice<<<1, 64>>>(d); cudaDeviceSynchronize(); sleep(60); }
  float h[64]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  std::printf(h[5] == 1.0f ? "PASS\\n" : "FAIL\\n");
}
"""


def test_a_kernel_checked_by_an_earlier_command_keeps_its_verdict_when_a_later_one_times_out(tmp_path):
    """The verdict of a command that passed covers the kernels it launched; only those the timed-out
    command alone launched are left unchecked."""
    code, report = port_app(tmp_path, TWO_COMMANDS_APP, Settings(sandbox="local", tune=False, check_timeout_s=3),
                            ["./main quick", "./main slow"])
    assert code != 0 and [r["verdict"] for r in report["check"]["runs"]] == ["passed", "timeout"], report["check"]
    assert {k["name"]: k["status"] for k in report["kernels"]} == {"fill": "correct", "twice": "timeout"}
    assert any(note.startswith("fill launched in check commands that passed") for note in report["check"]["notes"])


def test_a_check_that_times_out_still_has_its_captured_kernels_tuned(tmp_path):
    """A faithful port too slow for its check may be fast enough once tuned: the kernels the killed
    run captured are tuned and the port with them in is checked. Here that check sleeps too, so the
    tuned version is not let in, and the report says which check ran out of time."""
    settings = Settings(sandbox="local", check_timeout_s=2, budgets={"max_iters": 2})
    code, report = port_app(tmp_path, UNCHECKED_APP, settings, ["./main sleep"])
    assert code != 0 and [k["status"] for k in report["kernels"]] == ["timeout"]
    assert json.loads((tmp_path / "out" / "kernels" / "fill" / "task.json").read_text())["launches"][0]["block"] == [256, 1, 1]
    tuning = report["kernels"][0]["tuning"]
    assert tuning.startswith("failed: reverted: the project check failed with it") or tuning.startswith("faithful"), tuning
    assert "timed out after 2s" in report["check"]["detail"]


REPEATING_APP = """#include <cstdio>
#include <cstdlib>
#include <unistd.h>
__global__ void add_one(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }
int main(int argc, char** argv) {
  const int n = atoi(argv[1]);
  const int repeat = atoi(argv[2]);
  float* d; cudaMalloc(&d, n * sizeof(float)); cudaMemset(d, 0, n * sizeof(float));
  for (int r = 0; r < repeat; r++) { add_one<<<(n + 255) / 256, 256>>>(d, n); usleep(n * 50); }
  float* h = (float*)malloc(n * sizeof(float));
  float* expected = (float*)calloc(n, sizeof(float));
  for (int r = 0; r < repeat; r++) for (int i = 0; i < n; i++) expected[i] += 1.0f;
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < n; i++) ok = ok && h[i] == expected[i];
  printf("%s\\n", ok ? "PASS" : "FAIL");
}
"""


@pytest.mark.parametrize("command, runs, change", [
    ("./main 4096 1000", [("./main 4096 1000", "timeout"), ("./main 4096 1", "passed")], "argument 2 (`repeat`) 1000 -> 1"),
    ("./main 65536 2", [("./main 65536 2", "timeout"), ("./main 65536 1", "timeout"), ("./main 4096 1", "passed")],
     "argument 1 (`n`) 65536 -> 4096"),
])
def test_a_check_that_times_out_is_run_again_with_fewer_repetitions_then_a_smaller_problem(tmp_path, command, runs, change):
    """Each launch sleeps n * 50 us: `./main 4096 1000` takes 200 s, and its second argument only
    repeats the launches (and the program's own reference computation), so the check runs `./main
    4096 1`. `./main 65536 2` still takes 3.3 s at one repetition: its first argument sizes the
    allocations, so the check runs it 16 times smaller. The report says which ran."""
    console = Console(record=True, width=300)
    code, report = port_app(tmp_path, REPEATING_APP, Settings(sandbox="local", tune=False, check_timeout_s=3),
                            [command], console=console)
    assert code == 0, console.export_text()
    assert [(r["command"], r["verdict"]) for r in report["check"]["runs"]] == runs
    assert [k["status"] for k in report["kernels"]] == ["correct"]
    assert report["check"]["detail"].startswith(f"{runs[-1][0]}: exit 0")
    assert f"checked with `{runs[-1][0]}` instead" in (tmp_path / "out" / "PORT_REPORT.md").read_text()
    assert change in console.export_text()


@pytest.mark.parametrize("app, command, runs", [
    (REPEATING_APP, "./main 4096 100", [("./main 4096 100", "timeout"), ("./main 4096 1", "passed")]),
    # fewer repetitions still take 3.3 s: cut at the first try's limit too, as a smaller problem remains
    (REPEATING_APP, "./main 65536 2", [("./main 65536 2", "timeout"), ("./main 65536 1", "timeout"), ("./main 4096 1", "passed")]),
    # its verdict wants 5 repetitions: the smaller run fails for being smaller, the command itself decides
    (REPEATING_APP.replace('ok ? "PASS"', 'ok && repeat >= 5 ? "PASS"'), "./main 4096 10",
     [("./main 4096 10", "timeout"), ("./main 4096 1", "failed"), ("./main 4096 10", "passed")]),
    # the count assigned to a file-scope variable, which main's loops read
    (REPEATING_APP.replace("int main(", "static int repeat = 1;\nint main(").replace(
        "const int repeat = atoi(argv[2]);", "repeat = atoi(argv[2]);"), "./main 4096 100",
     [("./main 4096 100", "timeout"), ("./main 4096 1", "passed")]),
])
def test_a_command_with_a_smaller_run_has_a_shorter_first_try(tmp_path, app, command, runs):
    """`./main 4096 100` takes 20 s: with a first try of 1 s (of a 60 s check timeout) it is cut at 1 s
    and `./main 4096 1` checked at once, not after 60 s; where that fails, the command runs again with
    all of the check timeout."""
    settings = Settings(sandbox="local", tune=False, check_timeout_s=60, check_first_try_s=1)
    code, report = port_app(tmp_path, app, settings, [command])
    assert code == 0, report["check"]
    assert [(r["command"], r["verdict"]) for r in report["check"]["runs"]] == runs
    assert report["check"]["runs"][0]["seconds"] < 30  # cut at the first try's limit, not the check's
    assert any(f"`{command}` ran past 1 s (its first try" in note for note in report["check"]["notes"])
    assert [k["status"] for k in report["kernels"]] == ["correct"]


def test_a_command_that_ran_past_its_first_try_and_then_failed_in_full_is_failed_not_timed_out(tmp_path):
    """The first try is cut, the smaller run fails (for being smaller, maybe), the command runs again
    in full and prints FAIL: the check failed, its kernels are incorrect; the first try's timeout is
    not the verdict (it was: `check: TIMED OUT`, kernels `timeout`)."""
    settings = Settings(sandbox="local", tune=False, check_timeout_s=60, check_first_try_s=1)
    code, report = port_app(tmp_path, REPEATING_APP.replace('ok ? "PASS"', 'ok && repeat > 20 ? "PASS"'), settings,
                            ["./main 4096 10"])
    assert code != 0
    assert [(r["command"], r["verdict"]) for r in report["check"]["runs"]] == [
        ("./main 4096 10", "timeout"), ("./main 4096 1", "failed"), ("./main 4096 10", "failed")]
    assert CheckReport(**report["check"]).verdict == "failed"
    assert [k["status"] for k in report["kernels"]] == ["incorrect"]
    assert "check: FAILED" in (tmp_path / "out" / "PORT_REPORT.md").read_text()


ALLOCATING_APP = """#include <cstdio>
#include <cstdlib>
__global__ void magnitude(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = fabsf(a[i]); }
int main(int argc, char** argv) {
  const int n = atoi(argv[1]), repeat = atoi(argv[2]);
  float* h = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) h[i] = -(i % 7);  // no check of malloc's result, as is common
  float* d; cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  for (int r = 0; r < repeat; r++) magnitude<<<(n + 255) / 256, 256>>>(d, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < n; i++) ok = ok && h[i] == i % 7;
  printf("%s\\n", ok ? "PASS" : "FAIL");
}
"""


def test_a_check_that_crashes_out_of_memory_is_run_again_on_a_smaller_problem_only(tmp_path):
    """`./main 268435456 3` allocates 1 GiB on the host at once: under a 768 MiB limit malloc returns
    null and the program faults. Fewer repetitions would not help (the retry skips `./main 268435456 1`);
    16 times fewer elements fit, and that run's own check passes."""
    console = Console(record=True, width=300)
    code, report = port_app(tmp_path, ALLOCATING_APP, Settings(sandbox="local", tune=False, check_memory_mb=768),
                            ["./main 268435456 3"], console=console)
    assert code == 0, console.export_text()
    assert [(r["command"], r["verdict"]) for r in report["check"]["runs"]] == [
        ("./main 268435456 3", "crashed"), ("./main 16777216 1", "passed")]
    assert "crashed as it does when out of memory (at most 768 MiB); checked with `./main 16777216 1` instead" \
        in (tmp_path / "out" / "PORT_REPORT.md").read_text()


def test_a_check_that_crashes_out_of_memory_with_only_a_count_to_cut_says_nothing_could_help(tmp_path):
    """The problem's size is fixed in the program and its only argument repeats the launches: no
    smaller run can help, and the report says so rather than nothing."""
    fixed_size = ALLOCATING_APP.replace("const int n = atoi(argv[1]), repeat = atoi(argv[2]);",
                                        "const int n = 268435456, repeat = atoi(argv[1]);")
    code, report = port_app(tmp_path, fixed_size, Settings(sandbox="local", tune=False, check_memory_mb=768), ["./main 3"])
    assert code != 0 and [(r["command"], r["verdict"]) for r in report["check"]["runs"]] == [("./main 3", "crashed")]
    assert any("no smaller run of it could be made: none of its arguments is a size that could be cut" in note
               for note in report["check"]["notes"]), report["check"]["notes"]


def test_headers_are_translated_with_what_their_includer_defines_and_may_lie_beside_the_project(tmp_path):
    """`app/main.cu` defines FACTOR's header first, then includes a kernel header from a sibling
    folder (`../common/scale.cuh`) that uses FACTOR without defining it, and one found through
    `-I../inc`. The headers are translated as the compiler sees them (after what main.cu has
    before each #include: FACTOR was lost from the kernel before), and placed beside OUT/src where
    the project's own relative paths find them."""
    (tmp_path / "common").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "app").mkdir()
    (tmp_path / "inc" / "factor.h").write_text("#include <factor_value.h>\n#define FACTOR FACTOR_VALUE\n")
    (tmp_path / "inc" / "factor_value.h").write_text("#define FACTOR_VALUE 3.0f\n")  # found through -I with <...>
    (tmp_path / "common" / "scale.cuh").write_text(
        "#pragma once\n__device__ inline float twice(float x) { return 2.0f * x; }\n"
        "__global__ void scale(float* a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) a[i] = twice(a[i]) * FACTOR;\n}\n")
    (tmp_path / "app" / "main.cu").write_text(
        '#include <cstdio>\n#include "factor.h"\n#include "../common/scale.cuh"\nint main() {\n'
        "  const int n = 1000; float h[n]; for (int i = 0; i < n; i++) h[i] = i;\n"
        "  float* d; cudaMalloc(&d, sizeof(h)); cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);\n"
        "  scale<<<(n + 255) / 256, 256>>>(d, n); cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
        "  bool ok = true; for (int i = 0; i < n; i++) ok = ok && h[i] == 6.0f * i;\n"
        '  printf("%s\\n", ok ? "PASS" : "FAIL"); return ok ? 0 : 1;\n}\n')
    (tmp_path / "app" / "Makefile").write_text("main: main.cu\n\tnvcc -I../inc main.cu -o main\n\nrun: main\n\t./main\n")
    out = tmp_path / "out"
    code = port_repository(tmp_path / "app", Settings(sandbox="local", tune=False), out=out, trace=None,
                           check_commands=None, console=Console(record=True, width=200))
    report = json.loads((out / "port_report.json").read_text())
    assert code == 0 and report["check"]["passed"], report["check"]["detail"]
    assert [(k["name"], k["file"], k["status"]) for k in report["kernels"]] == [("scale", "../common/scale.cuh", "correct")]
    assert "__global__" not in (out / "common" / "scale.cuh").read_text()  # translated, beside OUT/src
    assert (out / "inc" / "factor.h").is_file() and (out / "inc" / "factor_value.h").is_file()
    assert "__global__" in (tmp_path / "common" / "scale.cuh").read_text()  # the user's copy untouched


def test_a_program_that_prints_no_verdict_leaves_its_kernels_unverified(tmp_path):
    """Exit 0 and numbers with neither PASS nor FAIL: the port ran, but nothing judged its results.
    The kernels say `unverified` (not `correct`), and the report says how to check them."""
    console = Console(record=True, width=300)
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n__global__ void fill(float* a) { a[threadIdx.x] = threadIdx.x; }\n"
        "int main() { float* d; cudaMalloc(&d, 64 * 4); fill<<<1, 64>>>(d); float h[64];\n"
        "  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost); printf(\"sum %f\\n\", h[10] + h[20]); }\n",
        Settings(sandbox="local", tune=False), ["./main"], console=console)
    assert code == 0 and report["check"]["passed"]
    assert [(k["status"], k["reference_kind"]) for k in report["kernels"]] == [("unverified", None)]
    printed = console.export_text()
    assert "reported no failure" in printed and "--expected-output FILE" in printed


@pytest.mark.parametrize("tune", [True, False])
def test_a_kernel_the_check_never_launches_is_reported_not_launched_not_correct(tmp_path, tune):
    """`halve` runs only when the program is given an argument, and the check gives none: its PASS
    says nothing of `halve`. The launches the check's run recorded tell which kernels it checked,
    whether or not the port tunes (and so captures) them."""
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n__global__ void fill(float* a) { a[threadIdx.x] = threadIdx.x; }\n"
        "__global__ void halve(float* a) { a[threadIdx.x] *= 0.5f; }\n"
        "int main(int argc, char** argv) { float* d; cudaMalloc(&d, 64 * 4); fill<<<1, 64>>>(d);\n"
        "  if (argc > 1) halve<<<1, 64>>>(d);\n"
        "  float h[64]; cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
        "  printf(h[10] == (argc > 1 ? 5.0f : 10.0f) ? \"PASS\\n\" : \"FAIL\\n\"); }\n",
        Settings(sandbox="local", tune=tune, budgets={"max_iters": 1}), ["./main"])
    assert code == 0 and report["check"]["passed"]
    assert {k["name"]: (k["status"], k["reference_kind"]) for k in report["kernels"]} == {
        "fill": ("correct", "project-check"), "halve": ("not_launched", None)}
    assert "not_launched" in (tmp_path / "out" / "PORT_REPORT.md").read_text()


def test_kernels_of_a_run_that_stops_before_any_launch_are_not_launched_not_incorrect(tmp_path):
    """A usage line and exit 1 before the first launch: the check failed, and it says nothing of the kernel."""
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n#include <cstdlib>\n__global__ void k(int* d) { d[threadIdx.x] = 1; }\n"
        "int main(int argc, char** argv) {\n"
        "  if (argc != 2) { printf(\"Usage: %s <repeat>\\n\", argv[0]); return 1; }\n"
        "  int* d; cudaMalloc(&d, 32 * sizeof(int)); for (int r = 0; r < atoi(argv[1]); r++) k<<<1, 32>>>(d);\n"
        "  printf(\"PASS\\n\"); }\n",
        Settings(sandbox="local", tune=False), ["./main"])
    assert code != 0 and not report["check"]["passed"] and "Usage" in report["check"]["detail"]
    assert "it printed how to call it: the command's arguments are not those it expects" in report["check"]["detail"]
    assert [k["status"] for k in report["kernels"]] == ["not_launched"]


def test_a_failed_assert_on_the_results_is_the_program_s_verdict_not_a_crash(tmp_path):
    """A check written as assert(): its abort says the results are wrong (incorrect, not runtime_error)."""
    code, report = port_app(
        tmp_path,
        "#include <cassert>\n__global__ void k(int* d) { d[threadIdx.x] = threadIdx.x + 1; }\n"
        "int main() { int h[32], *d; cudaMalloc(&d, sizeof(h)); k<<<1, 32>>>(d);\n"
        "  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
        "  for (int i = 0; i < 32; i++) assert(h[i] == 2 * i); }\n",
        Settings(sandbox="local", tune=False), ["./main"])
    assert code != 0 and not report["check"]["passed"]
    assert "an assertion of the program failed" in report["check"]["detail"], report["check"]["detail"]
    assert "h[i] == 2 * i" in report["check"]["detail"]
    assert [k["status"] for k in report["kernels"]] == ["incorrect"]


VERIFY_ONLY_WHEN_ASKED = {
    "Makefile": "VERIFY = no\nCFLAGS = -O2\nifeq ($(VERIFY),yes)\n  CFLAGS += -DVERIFY\nendif\n"
                "main: main.cu\n\tnvcc $(CFLAGS) -o main main.cu\nrun: main\n\t./main\n",
    "main.cu": "#include <cstdio>\n__global__ void twice(int* d) { d[threadIdx.x] *= 2; }\n"
               "int main() { int h[32], *d; for (int i = 0; i < 32; i++) h[i] = i;\n"
               "  cudaMalloc(&d, sizeof(h)); cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice); twice<<<1, 32>>>(d);\n"
               "  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
               "#ifdef VERIFY\n  bool ok = true; for (int i = 0; i < 32; i++) ok = ok && h[i] == 2 * i;\n"
               "  printf(\"%s\\n\", ok ? \"PASS\" : \"FAIL\");\n#endif\n}\n",
}


BIT_EXACT_APP = """#include <cstdio>
__global__ void axpy(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}
int main() {
  const int n = 4096;
  static float a[n], b[n], c[n], out[n];
  unsigned s = 12345;
  for (int i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u; a[i] = (s >> 8) / 16777216.0f + 0.5f;
    s = s * 1664525u + 1013904223u; b[i] = (s >> 8) / 16777216.0f - 0.5f;
    s = s * 1664525u + 1013904223u; c[i] = (s >> 8) / 16777216.0f;
  }
  float *da, *db, *dc, *dout;
  cudaMalloc(&da, sizeof a); cudaMalloc(&db, sizeof b); cudaMalloc(&dc, sizeof c); cudaMalloc(&dout, sizeof out);
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice); cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice);
  axpy<<<n / 256, 256>>>(da, db, dc, dout, n);
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
  int differ = 0;
  for (int i = 0; i < n; i++) { volatile float product = a[i] * b[i]; differ += out[i] != product + c[i]; }
  printf(differ ? "FAIL: %d differ\\n" : "PASS\\n", differ);
}
"""


def test_a_port_rounds_as_the_program_s_host_reference_does(tmp_path):
    """The program compares its kernel's results bit for bit with a host loop that multiplies and
    adds apart, as the original's host compiler builds it (no FMA): the faithful port fuses neither."""
    code, report = port_app(tmp_path, BIT_EXACT_APP, Settings(sandbox="local", tune=False), ["./main"])
    assert code == 0 and report["check"]["passed"], report["check"]
    assert [k["status"] for k in report["kernels"]] == ["correct"]


def test_make_variables_reach_the_makefile_as_on_make_s_command_line(tmp_path):
    """The project checks its results only when built with VERIFY=yes: given that variable, the
    port is built as make would build it and its check has a verdict."""
    root = tmp_path / "app"
    root.mkdir()
    for name, text in VERIFY_ONLY_WHEN_ASKED.items():
        (root / name).write_text(text)
    for variables, verdict in (([], "ran"), (["VERIFY=yes"], "passed")):
        out = tmp_path / f"out{len(variables)}"
        port_repository(root, Settings(sandbox="local", tune=False, make_variables=variables), out=out, trace=None,
                        check_commands=None, console=Console(width=200))
        report = json.loads((out / "port_report.json").read_text())
        assert [r["verdict"] for r in report["check"]["runs"]] == [verdict], report["check"]
        if verdict == "ran":  # the note names the guard and the setting that builds the verdict in
            assert any("its verdict is printed only where VERIFY is defined (main.cu:8): --make-var VERIFY=yes builds "
                       "it in" in note for note in report["check"]["notes"]), report["check"]["notes"]
    with pytest.raises(ValueError, match="'VERIFY' is not NAME=VALUE"):
        Settings(make_variables=["VERIFY"])


def test_specializations_that_tuning_treated_alike_share_one_entry():
    skipped = {"status": "skipped", "note": "its buffers hold 9000 MiB"}
    records = [("float", {"status": "tuned", "note": "1.8x"}), *((f"T{i}", skipped) for i in range(6)),
               ("int", {"status": "correct"}), ("char", {"status": "correct"})]
    assert tuning_summary(records) == ("<float> tuned: 1.8x; <T0>, <T1>, <T2> and 3 more skipped: its buffers hold "
                                       "9000 MiB; <int>, <char> correct")
    assert tuning_summary(records[:1]) == "tuned: 1.8x"


TWO_SPECIALIZATIONS_APP = """#include <cstdio>
template <typename T>
__global__ void scale_add(T* y, const T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
template <typename T> bool run() {
  const int n = 16;
  T hx[n], hy[n];
  for (int i = 0; i < n; ++i) { hx[i] = T(i); hy[i] = T(1); }
  T *x, *y;
  cudaMalloc(&x, sizeof(hx)); cudaMalloc(&y, sizeof(hy));
  cudaMemcpy(x, hx, sizeof(hx), cudaMemcpyHostToDevice); cudaMemcpy(y, hy, sizeof(hy), cudaMemcpyHostToDevice);
  // many launches each (tens of ms): neither specialization's share of the time falls under the 1%
  // tuning threshold, whatever a busy machine's stalls add to the other
  for (int r = 0; r < 20000; ++r) scale_add<T><<<1, n>>>(y, x, T(2), n);
  cudaMemcpy(hy, y, sizeof(hy), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && hy[i] == T(40000 * i + 1);
  return ok;
}
int main() { bool ok = run<float>() && run<double>(); printf(ok ? "PASS\\n" : "FAIL\\n"); return ok ? 0 : 1; }
"""


def test_a_specialization_tries_first_what_paid_on_its_sibling(tmp_path):
    """One small launch per specialization, which the optimizer reliably makes many times faster
    (the faithful lowering pays a parallel region for 16 threads): the first specialization tuned
    finds its transformations by the whole search; the second tries those first, alone."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.cu").write_text(TWO_SPECIALIZATIONS_APP)
    out = tmp_path / "out"
    # a budget no loaded machine exhausts: what is tested is the order, not the budget
    result = port(repo, out, "--max-iters", "2", "--jobs", "1", "--tune-budget", "900")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    tasks = {d.name: json.loads((d / "task.json").read_text()) for d in (out / "kernels").iterdir() if (d / "task.json").is_file()}
    [(first, _)] = [(name, t) for name, t in tasks.items() if not t.get("optimize_first")]
    [(second, task)] = [(name, t) for name, t in tasks.items() if t.get("optimize_first")]
    tuned_first = (out / "kernels" / first / f"{first}.cpp").read_text()
    assert task["optimize_first"] == applied(tuned_first)
    [kernel] = json.loads((out / "port_report.json").read_text())["kernels"]
    assert kernel["tuning"].count("tuned:") == 2 and "tried first (paid on a sibling)" in kernel["tuning"], kernel["tuning"]


def test_a_macro_s_parameters_named_like_the_launch_rewrite_s_helpers_keep_their_meaning(tmp_path):
    """The launch in a macro's body is rewritten in place: every name the rewrite adds there
    (the launch helper, the kernel's name and template arguments, dim3) is spelled as no
    parameter is, or the preprocessor would put the macro's argument in its place."""
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n"
        "__global__ void add(int* total, int by) { atomicAdd(total, by); }\n"
        "template <class T> __global__ void add_as(int* total, T by) { atomicAdd(total, (int)by); }\n"
        "#define benchmark(kernel_name, launch) kernel_name<<<4, 64>>>(d, launch)\n"
        "#define benchmark_as(kernel_name, T, dim3) kernel_name<T><<<dim3, 64>>>(d, (T)1)\n"
        "int main() { int* d; int h = 0; cudaMalloc(&d, sizeof(int)); cudaMemset(d, 0, sizeof(int));\n"
        "  benchmark(add, 5); benchmark_as(add_as, float, 2);\n"
        "  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);\n"
        "  printf(\"%s %d\\n\", h == 4 * 64 * 5 + 2 * 64 ? \"PASS\" : \"FAIL\", h); }\n",
        Settings(sandbox="local", tune=False), ["./main"])
    assert code == 0, report["build_errors"] or report["check"]
    assert {k["name"]: k["status"] for k in report["kernels"]} == {"add": "correct", "add_as": "correct"}


def test_kernels_launched_through_a_macro_s_parameter_are_named_as_launched(tmp_path):
    """`RUN(fill)` launches through the macro's parameter `kern`: the run records `fill` and `twice`,
    not `kern`, so both kernels count as checked."""
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n__global__ void fill(float* a) { a[threadIdx.x] = threadIdx.x; }\n"
        "__global__ void twice(float* a) { a[threadIdx.x] *= 2.0f; }\n"
        "#define RUN(kern) \\\n  kern<<<1, 64>>>(d); \\\n  cudaDeviceSynchronize();\n"
        "int main() { float* d; cudaMalloc(&d, 64 * 4); RUN(fill) RUN(twice)\n"
        "  float h[64]; cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
        "  printf(h[10] == 20.0f ? \"PASS\\n\" : \"FAIL\\n\"); }\n",
        Settings(sandbox="local", tune=False), ["./main"])
    assert code == 0, report["check"]
    assert {k["name"]: k["status"] for k in report["kernels"]} == {"fill": "correct", "twice": "correct"}


READS_ITS_INPUT = (
    "#include <cstdio>\n__global__ void twice(int* x, int n) { if (threadIdx.x < n) x[threadIdx.x] *= 2; }\n"
    "int main(int argc, char** argv) {\n"
    '  FILE* fp = fopen(argv[1], "r"); if (!fp) { printf("Error reading %s\\n", argv[1]); return 1; }\n'
    '  int n, scale, h[16], r[16]; fscanf(fp, "%d", &n); for (int i = 0; i < n; i++) fscanf(fp, "%d", &h[i]);\n'
    '  fclose(fp); if (scanf("%d", &scale) != 1) { printf("no scale on stdin\\n"); return 1; }\n'
    "  int* d; cudaMalloc(&d, n * sizeof(int)); cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);\n"
    "  twice<<<1, 32>>>(d, n); cudaMemcpy(r, d, n * sizeof(int), cudaMemcpyDeviceToHost);\n"
    "  bool ok = n == 3; for (int i = 0; i < n; i++) ok = ok && r[i] == scale * h[i];\n"
    '  printf("%s\\n", ok ? "PASS" : "FAIL"); return ok ? 0 : 1;\n}\n')


@pytest.mark.parametrize("data_present", [True, False])
def test_input_data_beside_the_project_reaches_the_check_or_is_named_missing(tmp_path, data_present):
    """The Makefile's run reads `../data/x.txt`, a sibling folder of the project (as HeCBench keeps its
    inputs), and `< scale.txt` from the project itself. The sandbox holds both where the unchanged
    command finds them; where the data is absent the check fails and its note names the missing input."""
    root = tmp_path / "app"
    root.mkdir()
    (root / "main.cu").write_text(READS_ITS_INPUT)
    (root / "scale.txt").write_text("2\n")
    (root / "Makefile").write_text("main: main.cu\n\tnvcc main.cu -o main\n\nrun: main\n\t./main ../data/x.txt < scale.txt\n")
    if data_present:
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "x.txt").write_text("3\n1 2 3\n")
    out = tmp_path / "out"
    code = port_repository(root, Settings(sandbox="local", tune=False), out=out, trace=None, check_commands=None,
                           console=Console(width=200))
    check = json.loads((out / "port_report.json").read_text())["check"]
    assert check["command"] == "./main ../data/x.txt < scale.txt"
    missing = [note for note in check["notes"] if "the input it reads is missing" in note]
    if data_present:
        assert code == 0 and check["passed"], check
        assert not missing and not (out / "data").exists()  # carried into the sandbox only, not into OUT
    else:
        assert code != 0 and not check["passed"] and "Error reading ../data/x.txt" in check["detail"]
        assert missing == ["`./main ../data/x.txt < scale.txt` names ../data/x.txt, which exists neither in the project "
                           f"nor beside it ({tmp_path / 'data' / 'x.txt'}): the input it reads is missing; put it there, "
                           "or give the command another with --run 'CMD ARGS'"], check["notes"]


def test_a_run_with_no_verdict_that_names_a_missing_input_says_so(tmp_path):
    """The program ignores an input it cannot open and exits 0, printing no verdict: the report
    names the input, which may be why it checked nothing."""
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n#include <fstream>\n__global__ void k(int* x, int n) { if (threadIdx.x < n) x[threadIdx.x] = n; }\n"
        "int main(int argc, char** argv) { std::ifstream in(argv[1]); int n = 0; in >> n;\n"
        "  int* d; cudaMalloc(&d, 64 * sizeof(int)); if (n > 0) k<<<1, 64>>>(d, n);\n"
        "  printf(\"rmse %d\\n\", n); return 0; }\n",
        Settings(sandbox="local", tune=False), ["./main params.config"])
    assert code == 0 and [r["verdict"] for r in report["check"]["runs"]] == ["ran"], report["check"]
    assert any(note.startswith("`./main params.config` names params.config, which exists neither in the project")
               for note in report["check"]["notes"]), report["check"]["notes"]
    assert [k["status"] for k in report["kernels"]] == ["not_launched"]


SILENT_ON_SUCCESS = (
    "#include <cstdio>\n__global__ void twice(int* x) { x[threadIdx.x] *= 2; }\n"
    "int main() { int h[32], *d; for (int i = 0; i < 32; i++) h[i] = i;\n"
    '  if (cudaMalloc(&d, sizeof(h)) != cudaSuccess) { printf("cudaMalloc failed\\n"); return 1; }\n'
    "  cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice); twice<<<1, 32>>>(d);\n"
    "  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
    "  bool error = false; for (int i = 0; i < 32; i++) error = error || h[i] != WANT;\n"
    '  if (error) printf("1D test: FAILED\\n");\n  return 0; }\n')


@pytest.mark.parametrize("want, message, verdict, status", [
    ("2 * i", "1D test: FAILED", "passed", "correct"),  # silent: its check passed
    ("3 * i", "1D test: FAILED", "failed", "incorrect"),
    ("2 * i", "no such thing", "ran", "unverified"),  # only `cudaMalloc failed`: no check of the results
])
def test_a_program_silent_on_success_passes_where_it_prints_none_of_its_failure_messages(
        tmp_path, want, message, verdict, status):
    source = SILENT_ON_SUCCESS.replace("WANT", want).replace("1D test: FAILED", message)
    code, report = port_app(tmp_path, source, Settings(sandbox="local", tune=False), ["./main"])
    assert [r["verdict"] for r in report["check"]["runs"]] == [verdict], report["check"]
    assert [k["status"] for k in report["kernels"]] == [status]
    if verdict == "passed":
        assert "printed none of its failure messages (main.cu:8 `1D test: FAILED`)" in report["check"]["detail"]


def test_a_header_s_function_template_with_barriers_is_inlined_from_its_template(tmp_path):
    """A kernel that is no template calls a header's `block_sum<Op, float>`, which calls `warp_sum<Op, T>`:
    the parse knows them by their specializations, the lowering inlines their templates' text with
    `Op` and `T` bound."""
    root = tmp_path / "app"
    root.mkdir()
    (root / "reduce.cuh").write_text(
        "#pragma once\ntemplate <typename T> struct Add { __device__ static T op(T a, T b) { return a + b; } };\n"
        "template <template <class> class Op, typename T> __device__ T warp_sum(T v) {\n"
        "  for (int o = 16; o > 0; o /= 2) v = Op<T>::op(v, __shfl_xor_sync(0xffffffff, v, o)); return v; }\n"
        "template <template <class> class Op, typename T> __device__ T block_sum(const T& v) {\n"
        "  __shared__ T part[32]; T w = warp_sum<Op, T>(v); if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = w;\n"
        "  __syncthreads(); T s = 0; for (int i = 0; i < blockDim.x / 32; i++) s = Op<T>::op(s, part[i]);\n"
        "  __syncthreads(); return s; }\n")
    (root / "main.cu").write_text(
        '#include <cstdio>\n#include "reduce.cuh"\n'
        "__global__ void total(const float* in, float* out) { float s = block_sum<Add, float>(in[threadIdx.x]);\n"
        "  if (threadIdx.x == 0) *out = s; }\n"
        "int main() { float h[128], *d, *o, r; for (int i = 0; i < 128; i++) h[i] = i;\n"
        "  cudaMalloc(&d, sizeof(h)); cudaMalloc(&o, sizeof(float)); cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);\n"
        "  total<<<1, 128>>>(d, o); cudaMemcpy(&r, o, sizeof(float), cudaMemcpyDeviceToHost);\n"
        '  printf(r == 8128.0f ? "PASS\\n" : "FAIL %f\\n", r); }\n')
    (root / "Makefile").write_text("main: main.cu reduce.cuh\n\tnvcc -o main main.cu\nrun: main\n\t./main\n")
    out = tmp_path / "out"
    code = port_repository(root, Settings(sandbox="local", tune=False), out=out, trace=None, check_commands=None,
                           console=Console(width=200))
    report = json.loads((out / "port_report.json").read_text())
    assert code == 0 and report["check"]["passed"], report["check"]
    assert [k["status"] for k in report["kernels"]] == ["correct"]


@pytest.mark.parametrize("fault", ["kernel", "kernel template", "host"])
def test_a_build_error_is_placed_in_the_kernel_whose_code_failed(tmp_path, fault):
    """g++ names the function each error is in: the kernel whose lowered code failed is the
    compile_error, with its error and its place in the project; the others were not built; the
    error names its file in the port tree (OUT/src), where its line is."""
    bad = ("template <class T> __global__ void bad(T* a, int n) {\n" if fault == "kernel template" else
           "__global__ void bad(float* a, int n) {\n")
    call = "missing_helper(a[i])" if fault != "host" else "a[i] + 1.f"
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n"
        "__global__ void good(float* a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 2.f; }\n"
        + bad +
        f"  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = {call};\n"
        "}\n"
        "int main() { float* d; cudaMalloc(&d, 256 * sizeof(float));\n"
        "  good<<<1, 256>>>(d, 256); bad<<<1, 256>>>(d, 256);\n"
        + ("  cudaHostFunctionNobodyWrote(d);\n" if fault == "host" else "") +
        "  printf(\"PASS\\n\"); }\n",
        Settings(sandbox="local", tune=False), ["./main"])
    assert code != 0 and not report["build_ok"]
    status = {k["name"]: (k["status"], k["errors"]) for k in report["kernels"]}
    [error] = [e for e in report["build_errors"] if "not declared" in e]
    assert error.startswith("src/main.cu:"), error
    if fault == "host":
        assert status == {name: ("not_built", ["not built: the build failed in code outside the kernels (see the build "
                                               "errors)"]) for name in ("good", "bad")}
    else:
        assert error.endswith("(in the lowered kernel bad, main.cu:3)"), error
        assert status == {"bad": ("compile_error", [error]),
                          "good": ("not_built", ["not built: the build failed in the lowered kernel bad (see the build "
                                                 "errors)"])}
    line = int(error.split(":")[1])
    port_line = (tmp_path / "out" / "src" / "main.cu").read_text().splitlines()[line - 1]
    assert ("missing_helper" if fault != "host" else "cudaHostFunctionNobodyWrote") in port_line


def test_the_project_s_own_runs_let_idle_openmp_threads_sleep(tmp_path):
    """The check's runs are correctness runs: threads waiting between launches sleep (passive), as in
    the kernels' own checks, rather than spin and steal a busy machine's time slices from working ones."""
    code, report = port_app(
        tmp_path,
        "#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n"
        "__global__ void fill(float* a) { a[threadIdx.x] = threadIdx.x; }\n"
        "int main() { float* d; cudaMalloc(&d, 64 * 4); fill<<<1, 64>>>(d); float h[64];\n"
        "  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);\n"
        "  const char* policy = getenv(\"OMP_WAIT_POLICY\");\n"
        "  bool ok = h[10] == 10.0f && policy && strcmp(policy, \"passive\") == 0;\n"
        "  printf(\"%s\\n\", ok ? \"PASS\" : \"FAIL\"); return ok ? 0 : 1; }\n",
        Settings(sandbox="local", tune=False), ["./main"])
    assert code == 0 and report["check"]["passed"]
