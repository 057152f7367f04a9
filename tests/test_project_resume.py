"""A repository port run again keeps everything the first run produced; a run killed (SIGKILL)
at any step resumes to the same files and report; two runs into one OUT at once are refused.

The project is one small launch, which the optimizer reliably makes many times faster (the
faithful lowering pays a parallel region for 16 threads), so a first run always links a tuned
file back. Its main sleeps a little so that a kill lands inside the check and the capture."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.trace import read_trace

ROOT = Path(__file__).resolve().parent.parent
AGENT = [sys.executable, "-m", "agent"]
WAIT_S = 300  # generous: the machine may be busy; each wait normally takes seconds
TUNED = "cpu_tuned_scale_add.cpp"

MAIN = """\
#include <cstdio>
#include <unistd.h>

__global__ void scale_add(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
    const int n = 16;
    float hx[n], hy[n];
    for (int i = 0; i < n; ++i) { hx[i] = float(i); hy[i] = 1.0f; }
    float *x, *y;
    cudaMalloc(&x, sizeof(hx));
    cudaMalloc(&y, sizeof(hy));
    cudaMemcpy(x, hx, sizeof(hx), cudaMemcpyHostToDevice);
    cudaMemcpy(y, hy, sizeof(hy), cudaMemcpyHostToDevice);
    scale_add<<<1, n>>>(y, x, 2.0f, n);
    cudaMemcpy(hy, y, sizeof(hy), cudaMemcpyDeviceToHost);
    usleep(400000);
    bool ok = true;
    for (int i = 0; i < n; ++i) ok = ok && hy[i] == 2.0f * i + 1.0f;
    std::printf(ok ? "PASS\\n" : "FAIL\\n");
    return ok ? 0 : 1;
}
"""


def command(repo: Path, out: Path) -> list[str]:
    # Two attempts: the faithful lowering, then one optimization (the one that makes it faster).
    return [*AGENT, "port", str(repo), "-o", str(out), "--sandbox", "local", "--max-iters", "2"]


def port(repo: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command(repo, out), capture_output=True, text=True, timeout=900, cwd=ROOT)


def start(repo: Path, out: Path) -> subprocess.Popen:
    """A run in its own process group, so that a kill takes its sandboxed children too."""
    return subprocess.Popen(command(repo, out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, start_new_session=True)


def has_event(trace: Path, node: str, type: str | None = "node_start", kernel: str | None = None) -> bool:
    return trace.is_file() and trace.stat().st_size > 0 and any(
        e["node"] == node and type in (None, e["type"]) and (kernel is None or e["kernel"] == kernel)
        for e in read_trace(trace).events)


def wait_for(proc: subprocess.Popen, what: str, ready) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if ready():
            return
        if proc.poll() is not None:
            raise AssertionError(f"agent port ended (exit {proc.returncode}) before {what}: {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    kill(proc)
    raise AssertionError(f"no {what} within {WAIT_S}s")


def kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()


def outputs(out: Path) -> dict[str, bytes]:
    """Every file the port leaves, but its traces, checkpoints, lock and reports (compared apart)."""
    skip = {"trace.jsonl", "checkpoints.sqlite", "checkpoints.sqlite-wal", "checkpoints.sqlite-shm",
            "port.lock", "port_report.json", "PORT_REPORT.md"}
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file() and p.name not in skip}


def report(out: Path) -> dict:
    """port_report.json without what is timed afresh on every run."""
    data = json.loads((out / "port_report.json").read_text())
    data.pop("time_s"), data.pop("app_runs_s")
    return data


def same_run_apart(files: dict[str, bytes]) -> dict[str, bytes]:
    """What two separate runs make alike: the optimizer times its choices (so the tuned code and
    the kernel's timings may differ), and a capture records where each buffer was allocated and
    how long each kernel's launches took."""
    timed = {f"src/{TUNED}", "kernels/scale_add/result.json", "kernels/scale_add/scale_add.cpp"}
    alike = {}
    for name, content in files.items():
        if name.startswith("captures/") and name.endswith(".json"):
            content = re.sub(rb'"allocation": "0x[0-9a-f]+"', b'"allocation": ""', content)
        if name == "captures/launch_times.tsv":
            content = re.sub(rb"\t[0-9.e+-]+\n", b"\n", content)  # the seconds column
        if name not in timed:
            alike[name] = content
    return alike


def without_seconds(data: dict) -> dict:
    text = re.sub(r" \(\d+\.\d s\)", "", json.dumps(data))
    data = json.loads(text)
    for run in data["check"]["runs"]:
        run.pop("seconds")
    return data


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo") / "tiny"
    root.mkdir()
    (root / "main.cu").write_text(MAIN)
    return root


@pytest.fixture(scope="module")
def first_run(repo, tmp_path_factory) -> tuple[Path, dict[str, bytes], dict]:
    """One uninterrupted run: its OUT, its files and its report, as they were when it ended."""
    out = tmp_path_factory.mktemp("first") / "out"
    result = port(repo, out)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    return out, outputs(out), report(out)


def test_first_run_links_a_tuned_kernel(first_run):
    out, files, data = first_run
    assert f"src/{TUNED}" in files and TUNED in files["src/Makefile.cpu"].decode()
    assert any(name.startswith("captures/") for name in files)
    kernel = data["kernels"][0]
    assert kernel["tuning"].startswith("tuned") and kernel["speedup"] > 1


def test_second_run_keeps_every_output_and_the_report(repo, first_run):
    out, files, data = first_run
    kernel_trace = out / "kernels" / "trace.jsonl"
    kernel_events = len(read_trace(kernel_trace).events)
    again = port(repo, out)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert outputs(out) == files  # the tuned file, captures/, Makefile.cpu, kernel tasks: all kept
    assert report(out) == data  # speedup and tuning included
    assert len(read_trace(kernel_trace).events) == kernel_events, "the kernel was tuned again"
    events = read_trace(out / "trace.jsonl").events
    reused = {e["node"] for e in events if e["type"] == "decision" and e["data"].get("reused")}
    assert reused >= {"translate", "build", "check", "capture", "tune", "recheck"}


def test_runs_killed_at_each_step_resume_to_what_an_uninterrupted_run_makes(repo, first_run, tmp_path):
    """Killed during translate, then build, check, capture and tuning (each rerun resuming the
    last): the next run ends with the files and the report of a run that was never killed."""
    _, files, data = first_run
    out = tmp_path / "out"
    trace, kernel_trace = out / "trace.jsonl", out / "kernels" / "trace.jsonl"
    for node in ("translate", "build", "check", "capture"):
        proc = start(repo, out)
        wait_for(proc, f"{node} starting", lambda: has_event(trace, node))
        kill(proc)
    proc = start(repo, out)  # killed inside the kernel's own loop, once it times its first version
    wait_for(proc, "the kernel's profiling", lambda: has_event(kernel_trace, "profile", kernel="scale_add"))
    kill(proc)

    last = port(repo, out)
    assert last.returncode == 0, last.stdout[-3000:] + last.stderr[-2000:]
    resumed = [e for e in read_trace(kernel_trace).events if e["node"] == "kernel" and e["type"] == "node_start"]
    assert resumed[-1]["data"]["resumed"], "the kernel's loop started over instead of resuming"
    now = outputs(out)
    assert now.keys() == files.keys()
    assert same_run_apart(now) == same_run_apart(files)
    got, want = without_seconds(report(out)), without_seconds(data)
    for kernel in got["kernels"] + want["kernels"]:
        assert kernel.pop("speedup") > 1
        kernel["tuning"] = kernel["tuning"].split(":")[0]
    assert got == want


def test_a_second_run_into_the_same_output_is_refused(repo, tmp_path):
    out = tmp_path / "out"
    first = start(repo, out)
    try:
        wait_for(first, "the build", lambda: has_event(out / "trace.jsonl", "build", type=None))
        second = port(repo, out)
        assert second.returncode != 0
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and str(out) in lines[0], second.stderr
        discovered = [e for e in read_trace(out / "trace.jsonl").events if e["node"] == "discover" and e["type"] == "node_start"]
        assert len(discovered) == 1, "the refused run wrote to the first one's trace"
    finally:
        kill(first)
