"""profile(): honest timing, slow candidates reported, timing-order gaming caught, vectorization mapped to lines;
and the `agent verify` / `agent profile` commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli import app
from tools.result import KernelResult
from tools.spec import load_task
from tools.verify import check, profile
from tools.verify.profile import hottest_line, parse_perf_stat, perf_stat_observation, vectorization_observations

FIX = Path(__file__).parent / "verify_fixtures"
VADD_OK = """
#include <cstdint>
extern "C" void vadd(float* a, float* b, float* c, int32_t n) {
  #pragma omp parallel for
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
}
"""
VADD_SLOW = """
#include <cstdint>
#include <cmath>
extern "C" void vadd(float* a, float* b, float* c, int32_t n) {
  for (int i = 0; i < n; i++) {
    float s = 0;
    for (int k = 0; k < 300; k++) s += std::sin(a[i] + k) * 0.0f;
    c[i] = a[i] + b[i] + s;
  }
}
"""


@pytest.fixture(scope="module")
def vadd_task():
    return load_task(FIX / "vadd" / "task.json")


def test_too_slow_candidate_is_reported_slower(box, vadd_task):
    r = profile(vadd_task, VADD_SLOW, box, baseline_cpp=VADD_OK, threads=1, min_time_s=0.03, perf=False)
    assert r.correct_after_timing and r.status == "correct"
    assert r.candidate and r.reference and r.baseline
    assert r.candidate.runs >= 3 * 3 and r.reference.runs >= 3 * 3  # 3 interleaved rounds of at least 3 calls
    assert r.speedup_vs_reference < 0.2 and r.speedup_vs_baseline < 0.2
    slow = [o for o in r.observations if o.kind == "profile" and "SLOWER than the reference" in o.message]
    assert slow and slow[0].severity == "warning" and "1 threads" in slow[0].message
    assert r.threads == 1


def test_work_skipped_after_the_checked_calls_is_caught(box, vadd_task):
    """Computes on the first two calls only: check() sees two good calls, timing must not be fooled."""
    lazy = VADD_OK.replace("{\n  #pragma", "{\n  static int calls = 0;\n  if (++calls > 2) return;\n  #pragma")
    assert check(vadd_task, lazy, box, seeds=[42], threads=[1]).status == "correct"
    r = profile(vadd_task, lazy, box, threads=1, min_time_s=0.02, perf=False)
    assert not r.correct_after_timing and r.status == "incorrect"
    text = "\n".join(o.message for o in r.observations)
    assert "changed between calls on the same inputs: call 3 differs from call 1" in text
    assert "last timed call" in text and "never written" in text


def test_work_skipped_is_caught_while_timed_beside_the_baseline(box, vadd_task):
    """The candidate and the baseline share one driver process when both are timed: the lazy
    candidate's skipped calls are still its own, and the honest baseline is not blamed."""
    lazy = VADD_OK.replace("{\n  #pragma", "{\n  static int calls = 0;\n  if (++calls > 2) return;\n  #pragma")
    r = profile(vadd_task, lazy, box, baseline_cpp=VADD_OK, threads=1, min_time_s=0.02, perf=False)  # blamed: raises
    assert not r.correct_after_timing and r.status == "incorrect"
    assert "call 3 differs from call 1" in "\n".join(o.message for o in r.observations)


def test_libraries_timed_together_alternate_and_keep_their_own_results(box, vadd_task):
    from tools.optimize.timing import library_for
    from tools.verify.check import WORK, build_harness, harness_observations, put_inputs, read_outputs
    from tools.verify.harness import time_together
    from tools.verify.inputs import generate_inputs

    lazy = VADD_OK.replace("{\n  #pragma", "{\n  static int calls = 0;\n  if (++calls > 2) return;\n  #pragma")
    libs = [library_for(box, vadd_task, src) for src in (VADD_OK, VADD_SLOW, lazy)]
    exe = build_harness(box, vadd_task)
    inputs = generate_inputs(vadd_task, 7)
    put_inputs(box, f"{WORK}/together/in", inputs)
    outdirs = [f"{WORK}/together/v{i}" for i in range(3)]
    runs = time_together(box, exe, libs, vadd_task.entry_name, f"{WORK}/together/in", outdirs, threads=1, budget_s=0.05)
    assert len(runs) == 3 and all(len(r.times) >= 3 for r in runs)
    fast, slow, skipped = (sorted(r.times)[len(r.times) // 2] for r in runs)
    assert slow > 5 * fast  # the same machine at the same moments: the ratio shows plainly
    statuses = [harness_observations(vadd_task, r, seed=7, threads=1, who=w)[0]
                for r, w in zip(runs, ("fast", "slow", "lazy"))]
    assert statuses == [None, None, "incorrect"]  # run-to-run differences belong to the lazy library alone
    want = inputs["a"] + inputs["b"]
    for outdir in outdirs[:2]:
        for suffix in ("", ".last"):
            assert (read_outputs(box, vadd_task, outdir, suffix)["c"] == want).all()
    assert not (read_outputs(box, vadd_task, outdirs[2], ".last")["c"] == want).all()


def test_vectorization_report_maps_to_candidate_lines(box, vadd_task):
    source = """#include <cstdint>
extern "C" void vadd(float* a, float* b, float* c, int32_t n) {
  for (int i = 0; i < n; i++) c[i] = a[i] + b[i];
  for (int i = 1; i < n; i++) c[i] = c[i - 1] * 0.5f + c[i];
}
"""
    r = profile(vadd_task, source, box, threads=1, min_time_s=0.01, perf=False)
    vec = {o.line: o for o in r.observations if o.kind == "vectorization"}
    assert all(o.file == "vadd.cpp" for o in vec.values())
    assert "loop vectorized" in vec[3].message
    assert vec[4].message.startswith("loop not vectorized") and vec[4].severity == "warning"
    assert not r.correct_after_timing  # the second loop changes the result, and timing re-checks it


def test_vectorization_parser_ignores_other_files():
    report = ("include/x.h:3:5: optimized: loop vectorized using 32 byte vectors\n"
              "k.cpp:7:21: missed: couldn't vectorize loop\n"
              "k.cpp:7:21: missed: not vectorized: no vectype for stmt: _1 = *p;\n"
              "k.cpp:9:3: missed: not vectorized: complicated access pattern.\n"
              "k.cpp:9:3: missed: couldn't vectorize loop\n")
    obs = vectorization_observations(report, "k.cpp")
    assert [(o.line, o.message) for o in obs] == [
        (7, "loop not vectorized: no vectype for stmt: _1 = *p;"),
        (9, "loop not vectorized: complicated access pattern."),
    ]


def test_hottest_line_and_perf_stat_parsing():
    source = "void f() {\n  for (int i = 0; i < n; i++) {\n    float s = 0;\n    for (int k = 0; k < 9; k++)\n      s += g(k);\n    c[i] = s;\n  }\n}\n"
    report = "# comment\n    61.20%  /usr/include/c++/12/cmath:464\n    30.00%  verify/k.cpp:5\n     8.80%  k.cpp:6\n"
    hot = hottest_line(report, "k.cpp", source)
    assert (hot.line, hot.data["loop_line"]) == (5, 4) and "30.00% of samples: `s += g(k);`" in hot.message
    assert hottest_line("    9.0%  other.cpp:1\n", "k.cpp", source) is None
    counters = parse_perf_stat("412.50,msec,task-clock,412500000,100.00,1.9,CPUs utilized\n7,,context-switches,412,100.00,,\n"
                               "<not supported>,,cycles,0,100.00,,\n")
    assert counters == {"task-clock": 412.5, "context-switches": 7.0}
    obs = perf_stat_observation(counters, wall_s=0.5, threads=4)
    assert "0.82 CPUs utilized with 4 threads" in obs.message and obs.severity == "warning"


def test_python_reference_is_timed(box):
    task = load_task(FIX / "scale_count" / "task.json")
    good = """
#include <cstdint>
extern "C" void scale_count(float* x, float* y, int32_t* cnt, int32_t rows, int32_t cols, float alpha) {
  for (int r = 0; r < rows; r++) {
    int local = 0;
    for (int c = 0; c < cols; c++) { y[r * cols + c] = alpha * x[r * cols + c]; local += x[r * cols + c] > 0.0f; }
    cnt[r] += local;
  }
}"""
    r = profile(task, good, box, threads=1, min_time_s=0.03, perf=False)
    assert r.correct_after_timing and r.reference_kind == "python"
    assert r.reference.runs >= 9 and r.speedup_vs_reference > 0


# the commands --------------------------------------------------------------------------

def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cli_verify_and_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENT_THREADS", "2")
    runner = CliRunner()
    task = str(FIX / "vadd" / "task.json")
    bad = write(tmp_path, "bad.cpp", VADD_OK.replace("i < n", "i < n - 1"))
    res = runner.invoke(app, ["verify", task, str(bad), "-o", str(tmp_path / "v"), "--sandbox", "local"])
    assert res.exit_code == 1, res.output
    assert "incorrect" in res.output and "first at [99, 36]" in res.output
    record = KernelResult.read(tmp_path / "v")
    assert record.status == "incorrect" and record.reference_kind == "c" and record.threads == 2
    good = write(tmp_path, "good.cpp", VADD_OK)
    res = runner.invoke(app, ["profile", task, str(good), "-o", str(tmp_path / "p"), "--sandbox", "local"])
    assert res.exit_code == 0, res.output
    assert "speedup vs the C reference" in res.output and "correct after timing" in res.output
    assert "perf stat" in res.output or "perf is not usable" in res.output
    data = json.loads((tmp_path / "p" / "result.json").read_text())
    assert data["status"] == "correct" and data["time_s"]["candidate"] > 0 and data["speedup_vs_reference"] > 0


def test_cli_bad_task_is_one_clear_line(tmp_path):
    raw = json.loads((FIX / "vadd" / "task.json").read_text())
    raw["buffers"][0]["dtype"] = "float128"
    task = write(tmp_path, "task.json", json.dumps(raw))
    (tmp_path / "kernel.cu").write_text((FIX / "vadd" / "kernel.cu").read_text())
    (tmp_path / "ref.c").write_text((FIX / "vadd" / "ref.c").read_text())
    cand = write(tmp_path, "c.cpp", VADD_OK)
    proc = subprocess.run([str(Path(sys.executable).with_name("agent")), "verify", str(task), str(cand)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "field 'buffers[0].dtype'" in proc.stderr and "unknown dtype 'float128'" in proc.stderr


def test_busy_means_runnable_now_not_the_lagging_load_average(monkeypatch, tmp_path):
    from tools.verify import harness

    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(harness.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(harness.os, "getloadavg", lambda: (1.9, 1.5, 1.0))  # compiles that just ended
    monkeypatch.setattr(harness, "Path", lambda _: loadavg)
    loadavg.write_text("1.90 1.50 1.00 1/312 4242\n")  # only this process runnable now
    assert harness.machine_busy(2) == (False, 1.9)
    assert "OMP_WAIT_POLICY" not in harness.omp_env(2, "time")
    loadavg.write_text("1.90 1.50 1.00 3/312 4242\n")  # two others running: our spinning threads would steal
    assert harness.machine_busy(2) == (True, 1.9)
    assert harness.omp_env(2, "time")["OMP_WAIT_POLICY"] == "passive"
    loadavg.write_text("garbage")  # unreadable: the load average decides
    assert harness.machine_busy(2) == (True, 1.9)


def test_busy_is_not_decided_by_one_passing_process(monkeypatch):
    """A compile's exiting processes show for a moment: the median of the samples decides."""
    from tools.verify import harness

    class Loadavg:
        def __init__(self, runnable):
            self.runnable = iter(runnable)

        def read_text(self):
            return f"1.90 1.50 1.00 {next(self.runnable)}/312 4242\n"

    monkeypatch.setattr(harness.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(harness.time, "sleep", lambda _: None)
    blip = Loadavg([3, 1, 1, 1, 1, 1, 1, 1, 1])  # two others once, then only this process
    monkeypatch.setattr(harness, "Path", lambda _: blip)
    assert harness.machine_busy(2)[0] is False
    steady = Loadavg([3, 3, 1, 3, 3, 4, 3, 3, 1])  # two or more others most of the time
    monkeypatch.setattr(harness, "Path", lambda _: steady)
    assert harness.machine_busy(2)[0] is True
