"""`agent port` killed (SIGKILL) or interrupted (SIGINT) mid-run: trace and checkpoint survive, the next run resumes."""

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from agent.runner import CHECKPOINT_DB, kernel_state
from agent.trace import read_trace

AGENT = str(Path(sys.executable).parent / "agent")
TASK = Path(__file__).parent / "agent_fixtures" / "tasks" / "scale" / "task.json"
WAIT_S = 300  # generous: the machine may be busy; the test normally takes seconds


def port(out: Path) -> list[str]:
    # One attempt: the loop ends after the first profile (the optimizer's search is not what is tested here).
    return [AGENT, "port", str(TASK), "-o", str(out), "--sandbox", "local", "--max-iters", "1"]


def as_from_a_shell() -> None:
    """Ctrl-C acted on, as for a command a shell starts: a test runner's worker may hand its
    children SIGINT ignored or blocked (seen under pytest-xdist: every Ctrl-C was lost)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def start(out: Path) -> subprocess.Popen:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.Popen(port(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=as_from_a_shell)


def wait_for_event(proc: subprocess.Popen, trace: Path, node: str, type: str = "node_start") -> None:
    """Block until the trace shows `type` for `node` (the run is then at a known step)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if trace.is_file() and trace.stat().st_size:
            if any(e["node"] == node and e["type"] == type for e in read_trace(trace).events):
                return
        if proc.poll() is not None:
            raise AssertionError(f"agent port ended before {node} {type}: {proc.stderr.read()}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no {node} {type} within {WAIT_S}s")


def interrupt(proc: subprocess.Popen) -> tuple[str, str]:
    """Ctrl-C, again every second until the run ends; its (stdout, stderr)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        proc.send_signal(signal.SIGINT)
        try:
            return proc.communicate(timeout=1.0)
        except subprocess.TimeoutExpired:
            continue
    proc.kill()
    return proc.communicate()


def starts(trace: Path) -> Counter:
    """How often each step of attempt 1 started (plan counts as attempt 0 and 1 alike)."""
    return Counter(e["node"] for e in read_trace(trace).events
                   if e["type"] == "node_start" and e["kernel"] == "scale" and e["data"].get("attempt", 1) in (0, 1))


def test_interrupted_and_killed_runs_resume_without_redoing_finished_steps(tmp_path):
    out = tmp_path / "out"
    trace = out / "trace.jsonl"

    # 1. Ctrl-C once the first translation is done: exit 130, trace and checkpoint readable.
    #    Pressed again while the run goes on; a run that finished before any landed starts afresh.
    for _ in range(3):
        proc = start(out)
        wait_for_event(proc, trace, "translate", "node_end")
        stdout, stderr = interrupt(proc)
        if proc.returncode != 0 or not (out / "scale" / "result.json").exists():
            break
        shutil.rmtree(out)
    assert proc.returncode == 130, stdout + stderr
    assert "interrupted" in stdout and "run the same command to resume" in stdout
    assert "Traceback" not in stderr
    recorded = read_trace(trace)
    assert not recorded.bad_lines
    assert any(e["type"] == "error" and "interrupted" in e["data"]["error"] for e in recorded.events)
    thread_id = next(e["data"]["thread_id"] for e in recorded.events if e["node"] == "kernel" and e["type"] == "node_start")
    state = kernel_state(out / CHECKPOINT_DB, thread_id)
    assert state is not None and state["kernel"] == "scale"
    assert state["counters"]["iterations"] == 1 and state["plan"]  # plan and translate are in the checkpoint

    # 2. Resume, then SIGKILL as profiling starts: `test` is finished and checkpointed (durability "sync").
    proc = start(out)
    wait_for_event(proc, trace, "profile")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (out / "scale" / "result.json").exists()

    # 3. Resume to the end: nothing finished is done again.
    done = subprocess.run(port(out), capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stdout + done.stderr
    counts = starts(trace)
    assert counts["plan"] == counts["translate"] == counts["test"] == 1  # never redone
    assert counts["compile"] in (1, 2)  # 2 only when Ctrl-C landed inside compile
    assert counts["profile"] == 2  # the step the kill cut short ran again
    runs = [e["data"] for e in read_trace(trace).events if e["node"] == "run" and e["type"] == "node_start"]
    assert [r["resumed"] for r in runs] == [False, True, True]
    assert (out / "scale" / "result.json").is_file() and (out / "scale" / "scale.cpp").is_file()

    # 4. A finished kernel is not redone.
    steps_before = len([e for e in read_trace(trace).events if e["type"] == "node_start" and e["kernel"]])
    again = subprocess.run(port(out), capture_output=True, text=True, timeout=WAIT_S)
    assert again.returncode == 0, again.stdout + again.stderr
    assert len([e for e in read_trace(trace).events if e["type"] == "node_start" and e["kernel"]]) == steps_before
    skipped = [e for e in read_trace(trace).events if e["type"] == "decision" and e["node"] == "run"]
    assert len(skipped) == 1 and "not redone" in skipped[0]["data"]["reason"]
