"""What a command prints reaches the result in bounded memory: its ends kept, its size counted,
the whole of stdout on disk for a caller that asks; real programs, real pipes."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sandboxes import Limits, LocalSandbox
from sandboxes.base import OutputKeeper
from tools.project.check import run_check

KEEP = 64 * 1024
FILLER = 200_000_000  # bytes: far above what may be held, small enough to be quick


@pytest.fixture(scope="module", params=["local", "local-plain"])
def box(request):
    sandbox = LocalSandbox(Limits(timeout_s=60), use_bwrap=False if request.param == "local-plain" else None)
    yield sandbox
    sandbox.close()


def test_keeper_holds_the_ends_of_any_chunking() -> None:
    rng = random.Random(7)
    stream = bytes(rng.randrange(256) for _ in range(50_000))
    for keep in (0, 1, 999, 30_000):
        keeper = OutputKeeper(keep)
        at = 0
        while at < len(stream):
            step = rng.choice((1, 7, 500, 4096, 20_000))
            keeper.feed(stream[at:at + step])
            at += step
        assert keeper.total == len(stream)
        assert bytes(keeper.head) == stream[:keep]
        assert bytes(keeper.end) == (stream[keep:][-keep:] if keep else b"")  # what follows the head
        assert keeper.cut == (len(stream) > 2 * keep)
        if not keeper.cut:
            assert bytes(keeper.head + keeper.end) == stream


def test_a_flood_keeps_its_ends_and_its_size(box: LocalSandbox) -> None:
    run = box.run(f"echo START; head -c {FILLER} /dev/zero | tr '\\0' x; echo; echo END")
    assert run.ok, run.tail()
    assert run.stdout_bytes == len("START\n") + FILLER + len("\nEND\n")
    assert run.output_cut and run.stderr_bytes == 0
    assert run.stdout.startswith("START\nxxx") and run.stdout.endswith("xxx\nEND\n")
    assert len(run.stdout) < 2 * KEEP + 100
    assert "... 191 MiB of output, 191 MiB not kept ..." in run.stdout
    assert run.notes == ["stdout: 191 MiB printed; its first and last 64 KiB kept"]


def test_small_output_is_whole(box: LocalSandbox) -> None:
    run = box.run("printf 'a\\nb\\n'; printf 'warn\\n' >&2")
    assert (run.stdout, run.stderr, run.stdout_bytes, run.stderr_bytes) == ("a\nb\n", "warn\n", 4, 5)
    assert not run.output_cut and run.notes == []


def test_kept_size_is_a_setting(box: LocalSandbox) -> None:
    run = box.run("seq 1 100000 >&2", limits=Limits(timeout_s=60, output_kb=1))
    assert run.stderr.startswith("1\n2\n3\n") and run.stderr.endswith("99999\n100000\n")
    assert len(run.stderr) < 2 * 1024 + 100 and run.stderr_bytes == len("".join(f"{i}\n" for i in range(1, 100001)))


def test_stdout_file_receives_everything(box: LocalSandbox, tmp_path: Path) -> None:
    whole = tmp_path / "stdout"
    run = box.run(["seq", "1", "300000"], stdout_file=whole)
    expected = "".join(f"{i}\n" for i in range(1, 300001))
    assert whole.read_text() == expected
    assert run.output_cut and len(run.stdout) < 2 * KEEP + 100
    cut = box.run(["seq", "1", "300000"], stdout_file=whole, limits=Limits(timeout_s=60, file_mb=1))
    assert whole.stat().st_size == 1024 * 1024 and whole.read_text() == expected[:1024 * 1024]
    assert "the stdout file was cut at 1.0 MiB (the file-size limit)" in cut.notes


def test_peak_memory_of_the_tool_stays_small() -> None:
    """Measured in a fresh Python that only runs the sandbox, so nothing else counts: its own
    memory's high-water mark (VmHWM; ru_maxrss would carry over pytest's size from the fork)."""
    script = textwrap.dedent(f"""
        import re
        from sandboxes import Limits, LocalSandbox
        with LocalSandbox(Limits(timeout_s=120)) as box:
            run = box.run(["head", "-c", "{FILLER}", "/dev/zero"])
        status = open("/proc/self/status").read()
        print(run.stdout_bytes, re.search(r"VmHWM:\\s+(\\d+) kB", status)[1])
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                           cwd=Path(__file__).resolve().parents[1])
    assert child.returncode == 0, child.stderr
    printed, peak_kb = map(int, child.stdout.split())
    assert printed == FILLER
    assert peak_kb < 100 * 1024, f"peak RSS {peak_kb // 1024} MB for {FILLER // 10**6} MB printed"


def test_project_check_reads_all_a_run_prints() -> None:
    """The project check compares every number printed and looks for a failure anywhere,
    beyond what the sandbox keeps of the output (64 KiB at each end; these print ~200 KB)."""
    numbers = "".join(f"{i}.5\n" for i in range(1, 25001))
    with LocalSandbox(Limits(timeout_s=60)) as box:
        box.put({"src/run.sh": "seq 1 25000 | sed 's/$/.5/'\n",
                 "src/fail.sh": "seq 1 20000; echo 'check FAILED at 7'; seq 1 20000\n"})
        good = run_check(box, "sh run.sh", expected_output=numbers, timeout_s=60)
        assert good.passed, good.detail
        assert good.stdout == numbers
        changed = numbers.replace("\n12000.5\n", "\n12100.5\n")
        differs = run_check(box, "sh run.sh", expected_output=changed, timeout_s=60)
        assert not differs.passed and "line 12000: original 12100.5, port 12000.5" in differs.detail
        failed = run_check(box, "sh fail.sh", timeout_s=60)
        assert not failed.passed and "check FAILED at 7" in failed.detail
