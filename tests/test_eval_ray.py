"""`agent eval --ray`: tasks as Ray tasks on a real local Ray head (started here, stopped after).

Real components throughout: the compiler translator, the local sandbox, a `ray start --head` on
127.0.0.1. Skipped, with the reason, where Ray is not installed (`pip install 'cuda2cpu-agent[ray]'`).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
AGENT = [sys.executable, "-m", "agent"]
START_TIMEOUT_S = 90

try:
    import ray  # noqa: F401

    RAY = True
except ImportError as exc:
    RAY = False
    print(f"test_eval_ray: Ray cannot be imported ({exc}); the cluster tests are skipped", file=sys.stderr)

needs_ray = pytest.mark.skipif(not RAY, reason="ray is not installed (pip install 'cuda2cpu-agent[ray]')")
needs_data = pytest.mark.skipif(not (DATA / "elementwise.json").is_file(), reason="bench/data not generated")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head():
    """A Ray head on 127.0.0.1 with 2 CPUs, in its own temp dir and process group; its address."""
    if not RAY:
        pytest.skip("ray is not installed (pip install 'cuda2cpu-agent[ray]')")
    from agent.ray_runner import HeadError, local_head

    temp = tempfile.mkdtemp(prefix="ray-", dir="/tmp")  # short: Ray's socket paths live under it
    try:
        with local_head(2, temp, START_TIMEOUT_S) as address:
            yield address
    except HeadError as exc:
        pytest.skip(str(exc))


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update({"AGENT_BUDGETS__MAX_ITERS": "1", "AGENT_SANDBOX": "local"}, **extra)  # one translation: CI time
    return env


def _subset(tmp_path: Path, n: int) -> Path:
    """The n smallest relu records: the quickest tasks the shipped benchmark has."""
    from bench.format import load_records, save_records

    relus = sorted((r for r in load_records(DATA / "elementwise.json") if r.op_name == "relu"),
                   key=lambda r: math.prod(r.output_shape[0]))
    path = tmp_path / "subset.json"
    save_records(relus[:n], path)
    return path


def test_unreachable_or_missing_ray_is_one_line(tmp_path):
    """Nothing listens at the address (or Ray is not installed): one line, within seconds, no traceback."""
    bench = tmp_path / "t.json"
    bench.write_text(json.dumps({"name": "k", "cuda_code": "__global__ void k(float* x) {}",
                                 "buffers": [{"name": "x", "dtype": "float32", "shape": [4], "role": "output"}],
                                 "reference": {"kind": "python", "function": "m:f"}}))
    port = _free_port()  # closed again: nothing listens there
    started = time.monotonic()
    done = subprocess.run([*AGENT, "eval", str(bench), "--ray", f"127.0.0.1:{port}", "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=60, env=_env(), cwd=ROOT)
    took = time.monotonic() - started
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode != 0
    assert len(lines) == 1 and "Traceback" not in done.stderr, lines
    expected = f"127.0.0.1:{port}: no Ray cluster reachable" if RAY else "pip install 'cuda2cpu-agent[ray]'"
    assert expected in lines[0]
    assert took < 20, f"took {took:.1f} s"
    assert not (tmp_path / "r" / "runs").exists()  # failed before any work


@needs_ray
@needs_data
def test_ray_eval_gives_the_local_verdicts_and_names_the_node(ray_head, tmp_path):
    from rich.console import Console

    from agent.commands.evaluate import run
    from agent.configuration import load_settings

    bench = _subset(tmp_path, 2)
    cfg = load_settings(llm="compiler", sandbox="local", jobs=1)
    cfg = cfg.model_copy(update={"budgets": cfg.budgets.model_copy(update={"max_iters": 1})})
    quiet = Console(file=io.StringIO(), width=200)
    t0 = time.monotonic()
    local_status = run(bench, cfg, out=tmp_path / "local", console=quiet)
    t1 = time.monotonic()
    ray_status = run(bench, cfg, out=tmp_path / "ray", console=quiet, ray=ray_head)
    t2 = time.monotonic()
    print(f"local {t1 - t0:.1f} s, ray {t2 - t1:.1f} s", file=sys.stderr)
    local = json.loads((tmp_path / "local" / "report.json").read_text())
    remote = json.loads((tmp_path / "ray" / "report.json").read_text())
    verdicts = lambda report: [(t["name"], t["status"], t["compiled"], t["correct"]) for t in report["tasks"]]  # noqa: E731
    assert verdicts(remote) == verdicts(local) and len(remote["tasks"]) == 2
    assert ray_status == local_status
    host = socket.gethostname()
    for task in remote["tasks"]:
        assert task["node"].startswith(host + " (")  # hostname and Ray node id
        if task["correct"]:
            assert task["speedup"] > 0 and task["time_s"]["candidate"] and task["time_s"]["reference"]
    assert "| node |" in (tmp_path / "ray" / "report.md").read_text()
    # the driver holds the worker's checkpoints: the same command again redoes nothing
    run(bench, cfg, out=tmp_path / "ray", console=(again := Console(file=io.StringIO(), width=200)), ray=ray_head)
    assert "0 kernels sent to the cluster, 2 finished earlier" in again.file.getvalue()
    assert verdicts(json.loads((tmp_path / "ray" / "report.json").read_text())) == verdicts(local)


@needs_ray
@needs_data
def test_killed_driver_restarted_finishes_only_the_rest(ray_head, tmp_path):
    bench = _subset(tmp_path, 2)
    out = tmp_path / "r"
    cmd = [*AGENT, "eval", str(bench), "--ray", ray_head, "-o", str(out)]
    env = _env(AGENT_THREADS="2")  # a task takes both of the head's CPUs: one at a time
    first = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    nodes = out / "runs" / "nodes.json"
    try:
        deadline = time.monotonic() + 240
        while not (nodes.is_file() and json.loads(nodes.read_text() or "{}")):
            assert first.poll() is None, "the driver ended before any task finished"
            assert time.monotonic() < deadline, "no task finished within 240 s"
            time.sleep(0.2)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    [done_first] = json.loads(nodes.read_text())
    assert not (out / "report.json").exists()
    second = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert "1 kernels sent to the cluster, 1 finished earlier" in second.stdout, second.stdout + second.stderr
    report = json.loads((out / "report.json").read_text())
    assert len(report["tasks"]) == 2 and all(t["node"] for t in report["tasks"])
    events = [json.loads(line) for line in (out / "runs" / "trace.jsonl").read_text().splitlines()[1:]]
    started = [e["kernel"] for e in events if e["type"] == "node_start" and e["node"] == "kernel"]
    name_first = done_first.rsplit("-", 1)[0]
    assert started.count(name_first) == 1  # ran once, in the killed driver's time; not redone
    assert sorted(set(started)) == sorted(t["name"] for t in report["tasks"])


@needs_ray
@needs_data
def test_a_task_larger_than_every_node_is_refused_in_one_line(ray_head, tmp_path):
    """threads=4 on a 2-CPU cluster: Ray would keep the tasks pending for ever; the run says so instead."""
    done = subprocess.run([*AGENT, "eval", str(_subset(tmp_path, 1)), "--ray", ray_head, "-o", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120, env=_env(AGENT_THREADS="4"), cwd=ROOT)
    assert done.returncode != 0
    assert "each task asks for 4 CPUs (the threads setting), but the largest node of the cluster has 2" in done.stderr
    assert "Traceback" not in done.stderr


def _workers_running(title: str) -> list[int]:
    """Pids of the processes whose title (Ray sets `ray::NAME` while a worker runs a task) is `title`."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace").startswith(title):
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


@needs_ray
@needs_data
def test_a_worker_killed_mid_task_is_retried_and_the_run_completes(ray_head, tmp_path):
    """SIGKILL to the worker process while it runs a kernel: Ray reruns the task (a kernel's run is
    idempotent), the evaluation finishes with every verdict, and nothing is lost or left hanging."""
    bench = _subset(tmp_path, 1)
    out = tmp_path / "r"
    driver = subprocess.Popen([*AGENT, "eval", str(bench), "--ray", ray_head, "-o", str(out)], env=_env(), cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    killed = []
    try:
        deadline = time.monotonic() + 240
        while not killed:
            assert driver.poll() is None, "the run ended before a worker could be killed"
            assert time.monotonic() < deadline, "no worker ran the task within 240 s"
            workers = _workers_running("ray::agent-kernel")
            if workers:
                time.sleep(0.5)  # inside the kernel's run, not at its start
                for pid in workers:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
            time.sleep(0.05)
        output, _ = driver.communicate(timeout=300)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 0, output
    [task] = json.loads((out / "report.json").read_text())["tasks"]
    assert task["status"] == "correct" and task["node"], task


@needs_ray
def test_bench_generate_on_ray_writes_the_records_a_local_run_writes(ray_head, tmp_path):
    """`agent bench generate --ray`: each workload's TVM lowering is a Ray task; the verified records
    and pairs are byte for byte those of the local run (the generator is deterministic for its seed)."""
    pytest.importorskip("tvm", reason="TVM is not installed (pip install 'cuda2cpu-agent[bench]')")
    from rich.console import Console

    from agent.commands.bench import generate

    def run(out: Path, ray: str | None) -> str:
        console = Console(file=io.StringIO(), width=200)
        status = generate(out, ops=["relu", "softmax"], graphs=1, seed=7, pairs=True, console=console, per_op=1, ray=ray)
        assert status == 0, console.file.getvalue()
        return console.file.getvalue()

    run(tmp_path / "local", None)
    log = run(tmp_path / "ray", ray_head)
    assert f"each workload a Ray task on {ray_head}" in log
    for name in ("elementwise.json", "reduction.json", "graph.json", "pairs.jsonl"):
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text(), name


@needs_ray
def test_port_tunes_each_kernel_as_a_ray_task(ray_head, tmp_path):
    """`agent port REPO --ray ADDRESS`: the captured kernel's graph runs on a worker, and its
    checkpoint, trace and result come back into OUT/kernels as a local tuning writes them."""
    out = tmp_path / "heat"
    done = subprocess.run([*AGENT, "port", str(ROOT / "examples" / "projects" / "heat2d"), "-o", str(out),
                           "--sandbox", "local", "--ray", ray_head], capture_output=True, text=True, timeout=900,
                          env=_env(), cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    result = json.loads((out / "kernels" / "heat_step" / "result.json").read_text())
    assert result["status"] == "correct"
    report = json.loads((out / "port_report.json").read_text())
    assert report["check"]["passed"] and report["kernels"][0]["tuning"]
    events = [json.loads(line) for line in (out / "kernels" / "trace.jsonl").read_text().splitlines()[1:]]
    ran_on = {e["data"].get("ray_node") for e in events if isinstance(e.get("data"), dict)} - {None}
    assert ran_on and all(node.startswith(socket.gethostname() + " (") for node in ran_on)
