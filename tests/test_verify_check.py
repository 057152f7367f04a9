"""check(): deliberately wrong candidates are caught and described precisely (real g++, real sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.spec import load_task
from tools.verify import check

FIX = Path(__file__).parent / "verify_fixtures"

VADD_OK = """
#include <cstdint>
extern "C" void vadd(float* a, float* b, float* c, int32_t n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
"""


def vadd(body: str) -> str:
    return '#include <cstdint>\n#include <cmath>\nextern "C" void vadd(float* a, float* b, float* c, int32_t n) {\n' + body + "\n}\n"


@pytest.fixture(scope="module")
def vadd_task():
    return load_task(FIX / "vadd" / "task.json")


def messages(report) -> str:
    return "\n".join(o.message for o in report.observations)


def test_correct_candidate_against_c_reference(box, vadd_task):
    r = check(vadd_task, VADD_OK, box)
    assert r.status == "correct", r.summary()
    assert r.reference_kind == "c"
    assert r.seeds == [42, 43, 44] and r.threads[0] == 1 and r.threads[-1] >= 2
    assert r.max_abs_err == 0.0 and not r.mismatches


def test_inputs_read_from_data_files_are_checked_on_one_seed(box, vadd_task, tmp_path):
    """A captured launch's inputs are its data files, the same whatever the seed: running more
    seeds would repeat the same runs (minutes on a large capture)."""
    import shutil

    import numpy as np

    shutil.copytree(FIX / "vadd", tmp_path / "vadd")
    spec = json.loads((FIX / "vadd" / "task.json").read_text())
    rng = np.random.default_rng(0)
    for buf in spec["buffers"][:2]:
        np.save(tmp_path / "vadd" / f"{buf['name']}.npy", rng.random(buf["shape"], dtype=np.float32))
        buf["data"] = f"{buf['name']}.npy"
    (tmp_path / "vadd" / "task.json").write_text(json.dumps(spec))
    captured = check(load_task(tmp_path / "vadd" / "task.json"), VADD_OK, box)
    assert captured.status == "correct" and captured.seeds == [42], captured.summary()
    wrong = check(load_task(tmp_path / "vadd" / "task.json"), vadd("for (int i = 0; i < n; i++) c[i] = a[i];"), box)
    assert wrong.status == "incorrect"


def test_wrong_at_boundary_names_last_element(box, vadd_task):
    r = check(vadd_task, vadd("for (int i = 0; i < n - 1; i++) c[i] = a[i] + b[i];"), box)
    assert r.status == "incorrect"
    m = r.mismatches[0]
    assert (m.buffer, m.first_index, m.count, m.total, m.unwritten) == ("c", (99, 36), 1, 3700, 1)
    assert "never written" in messages(r) and "[99, 36]" in messages(r)
    assert "<- differs" in m.excerpt and "nan" in m.excerpt


def test_off_by_one_element_shift_writes_past_end(box, vadd_task):
    r = check(vadd_task, vadd("for (int i = 1; i <= n; i++) c[i] = a[i - 1] + b[i - 1];"), box)
    assert r.status == "incorrect"
    text = messages(r)
    assert "wrote past the end of buffer 'c'" in text
    m = r.mismatches[0]
    assert m.first_index == (0, 0) and m.count == 3700  # every element is one place off
    assert "shifted by +1 element" in text and "off-by-one index" in text


def test_writing_an_input_is_caught(box, vadd_task):
    r = check(vadd_task, vadd("for (int i = 0; i < n; i++) { a[i] += b[i]; c[i] = a[i]; }"), box, seeds=[42])
    assert r.status == "incorrect"
    assert "wrote into input buffer 'a' (3700 elements changed, first at [0, 0]" in messages(r)


def test_nan_where_reference_has_a_number(box, vadd_task):
    r = check(vadd_task, vadd("for (int i = 0; i < n; i++) c[i] = std::log(a[i]) - std::log(a[i]) + a[i] + b[i];"), box, seeds=[42])
    assert r.status == "incorrect"
    m = r.mismatches[0]
    assert m.unwritten == 0 and 0 < m.count < m.total  # the negative a[i] only
    assert m.max_abs_err == float("inf")
    assert "nan  <- differs" in m.excerpt


def test_returning_immediately_is_never_correct(box, vadd_task):
    r = check(vadd_task, vadd("(void)a; (void)b; (void)c; (void)n;"), box, seeds=[42])
    assert r.status == "incorrect"
    assert r.mismatches[0].unwritten == 3700


def test_static_cache_across_calls_is_caught(box, vadd_task):
    body = """
  static bool done = false;
  if (done) return;
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
  done = true;"""
    r = check(vadd_task, vadd(body), box, seeds=[42], threads=[1])
    assert r.status == "incorrect"
    assert "changed between calls on the same inputs: call 2 differs from call 1 in 3700 elements" in messages(r)


def test_exit_in_entry_is_a_runtime_error(box, vadd_task):
    r = check(vadd_task, '#include <cstdlib>\n' + vadd("std::exit(0);"), box, seeds=[42])
    assert r.status == "runtime_error"
    assert "ended the process" in messages(r)


def test_crash_is_a_runtime_error(box, vadd_task):
    r = check(vadd_task, vadd("float* p = nullptr; for (int i = 0; i < n; i++) p[i * 1000] = a[i];"), box, seeds=[1])
    assert r.status == "runtime_error"
    assert "SIGSEGV" in messages(r)


def test_compile_error_names_candidate_line(box, vadd_task):
    r = check(vadd_task, vadd("for (int i = 0; i < n; i++) c[i] = a[i] + undefined_thing;"), box, seeds=[42])
    assert r.status == "compile_error"
    obs = r.observations[0]
    assert obs.kind == "compile" and obs.file == "vadd.cpp" and obs.line == 4 and "undefined_thing" in obs.message


def test_race_under_two_threads_with_inout(box):
    task = load_task(FIX / "prefix" / "task.json")
    good = """
#include <cstdint>
extern "C" void prefix(int32_t* x, int32_t* y, int64_t* total, int32_t n) {
  int32_t s = 0;
  for (int32_t i = 0; i < n; i++) { s += x[i]; y[i] = s; }
  total[0] += s;
}"""
    assert check(task, good, box, seeds=[1, 2], threads=[1, 2]).status == "correct"
    # a loop-carried dependence run as a parallel loop: right on one thread, wrong on two
    racy = """
#include <cstdint>
extern "C" void prefix(int32_t* x, int32_t* y, int64_t* total, int32_t n) {
  y[0] = x[0];
  #pragma omp parallel for schedule(static, 1)
  for (int32_t i = 1; i < n; i++) y[i] = y[i - 1] + x[i];
  total[0] += y[n - 1];
}"""
    r = check(task, racy, box, seeds=[1, 2], threads=[1, 2])
    assert r.status == "incorrect"
    assert {m.threads for m in r.mismatches} == {2}
    assert "correct with 1 thread, wrong with 2 threads: a data race" in messages(r)


def test_python_reference_and_unwritten_integer_output(box):
    task = load_task(FIX / "scale_count" / "task.json")
    good = """
#include <cstdint>
extern "C" void scale_count(float* x, float* y, int32_t* cnt, int32_t rows, int32_t cols, float alpha) {
  #pragma omp parallel for
  for (int r = 0; r < rows; r++) {
    int local = 0;
    for (int c = 0; c < cols; c++) { y[r * cols + c] = alpha * x[r * cols + c]; local += x[r * cols + c] > 0.0f; }
    cnt[r] += local;
  }
}"""
    r = check(task, good, box)
    assert r.status == "correct", r.summary()
    assert r.reference_kind == "python"
    forgot = good.replace("cnt[r] += local;", "(void)local;")
    r = check(task, forgot, box, seeds=[7])
    assert r.status == "incorrect"
    m = r.mismatches[0]
    # cnt says init zeros, so "unwritten" shows as zeros vs the reference's counts
    assert m.buffer == "cnt" and m.first_index == (0,) and m.count > 40
    assert "output 'cnt'" in messages(r)


def test_candidate_cannot_read_the_task_directory(box, vadd_task):
    if not box.bwrap:
        pytest.skip("bubblewrap is not usable here: the local sandbox cannot hide host directories")
    probe = str(vadd_task.path_of("ref.c"))
    peeking = '#include <cstdio>\n' + vadd(f"""
  FILE* f = std::fopen("{probe}", "r");  // the reference's file, by absolute path
  for (int i = 0; i < n; i++) c[i] = f ? a[i] + b[i] : 0.0f;
  if (f) std::fclose(f);""")
    r = check(vadd_task, peeking, box, seeds=[42], threads=[1])
    assert r.status == "incorrect"  # it found nothing to read
    assert box.hide.count(str(vadd_task.base_dir)) == 0  # the mask is lifted afterwards


def test_entry_with_the_wrong_parameter_list_is_flagged(box, vadd_task):
    hardcoded = ('#include <cstdint>\nextern "C" void vadd(float* a, float* b, float* c) {\n'
                 "  for (int i = 0; i < 3700; i++) c[i] = a[i] + b[i];\n}\n")
    r = check(vadd_task, hardcoded, box, seeds=[42], threads=[1])
    first = r.observations[0]
    assert first.severity == "warning" and first.line == 2
    assert 'the entry takes 3 parameters, the task\'s signature has 4: extern "C" void vadd(float* a, float* b, float* c, int32_t n)' in first.message


def test_endless_candidate_times_out(box, vadd_task):
    r = check(vadd_task, vadd("volatile int spin = 1; while (spin) {}"), box, seeds=[42], threads=[1], timeout_s=2)
    assert r.status == "timeout"
    assert "did not finish within the time limit (seed 42, 1 thread)" in messages(r)


@pytest.mark.docker
def test_check_in_docker_sandbox(vadd_task):
    from sandboxes import docker_available, open_sandbox

    ok, why = docker_available()
    if not ok:
        pytest.skip(why)
    try:
        sb = open_sandbox("docker")
    except Exception as exc:  # noqa: BLE001 - no image built: say so
        pytest.skip(f"docker sandbox unavailable: {exc}")
    try:
        r = check(vadd_task, VADD_OK.replace("a[i] + b[i]", "a[i] + b[i] + (i == 7)"), sb, seeds=[42])
        assert r.status == "incorrect" and r.mismatches[0].first_index == (0, 7) and r.mismatches[0].count == 1
    finally:
        sb.close()


def test_candidate_replacing_the_harness_is_caught(box, vadd_task):
    swap = "#include <unistd.h>\n#include <cstdio>\n#include <sys/stat.h>\n" + vadd("""
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
  char self[4096];
  ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);  // the harness running this call
  if (k > 0) {
    self[k] = 0;
    unlink(self);
    if (FILE* f = std::fopen(self, "w")) { std::fputs("#!/bin/sh\\necho DONE 2\\n", f); std::fclose(f); chmod(self, 0755); }
  }""")
    r = check(vadd_task, swap, box, seeds=[42], threads=[1, 2])
    assert r.status == "incorrect"
    assert "the candidate modified the verification harness" in messages(r)
    assert check(vadd_task, VADD_OK, box, seeds=[42]).status == "correct"  # rebuilt for the next candidate


def test_entry_without_c_linkage_is_a_compile_error(box, vadd_task):
    r = check(vadd_task, VADD_OK.replace('extern "C" ', ""), box, seeds=[42], threads=[1])
    assert r.status == "compile_error"
    assert "defines no function 'vadd' with C linkage" in messages(r)


def test_a_library_built_once_is_copied_until_it_is_changed(box, vadd_task, monkeypatch):
    """The same source built again (the search checks a variant, then times it under another name)
    is a copy of the first build; a library changed since it was built (candidate code runs in
    the same directory) is compiled again."""
    import importlib

    check_module = importlib.import_module("tools.verify.check")
    compiled = []
    real = check_module.compile_cpp
    monkeypatch.setattr(check_module, "compile_cpp", lambda *a, **k: compiled.append(a[2]) or real(*a, **k))
    source = VADD_OK + "// built once\n"
    first = check_module.build_candidate(box, vadd_task, source, lib="libfirst.so")
    second = check_module.build_candidate(box, vadd_task, source, lib="libsecond.so")
    assert first.ok and second.ok and len(compiled) == 1
    work = check_module.WORK
    assert box.get(f"{work}/libsecond.so") == box.get(f"{work}/libfirst.so")
    box.put({f"{work}/libfirst.so": b"not a library"})
    assert check_module.build_candidate(box, vadd_task, source, lib="libthird.so").ok and len(compiled) == 2
    assert box.get(f"{work}/libthird.so")[:4] == b"\x7fELF"
    other_flags = check_module.build_candidate(box, vadd_task, source, lib="libfourth.so", cxxflags=["-O1", "-fopenmp"])
    assert other_flags.ok and len(compiled) == 3  # the flags are part of what a build is
    assert check(vadd_task, source, box, seeds=[42]).status == "correct"


def test_padding_past_an_input_repeats_its_first_elements_and_past_an_output_is_allowed(box, tmp_path):
    """A published record's reference reads 2 elements past input `a` and its kernels store 3 past
    output `c`: the padding holds a[0], a[1] for every run, and stores into c's padding are no
    violation; a store past the padding still is."""
    (tmp_path / "ref.c").write_text(
        "void ref(const float* a, float* c) { for (int i = 0; i < 8; i++) c[i] = a[i] + a[i + 2]; }\n")
    (tmp_path / "k.cu").write_text("__global__ void k(const float* a, float* c) {}\n")
    (tmp_path / "task.json").write_text(json.dumps({
        "name": "pad", "cuda": "k.cu", "entry": "pad",
        "buffers": [{"name": "a", "dtype": "float32", "shape": [8], "role": "input", "padding": 2},
                    {"name": "c", "dtype": "float32", "shape": [8], "role": "output", "padding": 3}],
        "launches": [{"kernel": "k", "grid": [1], "block": [1], "args": ["a", "c"]}],
        "reference": {"kind": "c", "path": "ref.c", "function": "ref", "args": ["a", "c"]},
    }))
    task = load_task(tmp_path / "task.json")
    wrap = 'extern "C" void pad(const float* a, float* c) { for (int i = 0; i < 11; i++) c[i] = a[i % 8] + a[(i + 2) % 8]; }\n'
    assert check(task, wrap, box, seeds=[42]).status == "correct"
    past = wrap.replace("i < 11", "i < 12")
    r = check(task, past, box, seeds=[42])
    assert r.status == "incorrect" and "past the end of buffer 'c'" in messages(r)


def test_times_of_an_output_the_sandbox_cut_keep_only_whole_numbers():
    """Thousands of timed calls print more than a sandbox keeps: the TIMES line ends where the kept
    head ends (its last number perhaps cut: `2.53` of `2.5340014e-06`); the samples before it count."""
    from sandboxes.base import RunResult
    from tools.verify.harness import parse_harness_output

    cut = "TIMES 1e-06 2e-06 2.53\n... 300 KB of output, 170 KB not kept ...\n40014e-06 5e-06\nDONE 9\n"
    run = parse_harness_output(RunResult("driver", 0, cut, "", 1.0, output_cut=True))
    assert run.times == [1e-06, 2e-06] and run.done
    whole = parse_harness_output(RunResult("driver", 0, "TIMES 1e-06 2e-06 3e-06\nDONE 3\n", "", 1.0))
    assert whole.times == [1e-06, 2e-06, 3e-06]
