"""Both sandbox implementations, for real: local always, Docker where a daemon answers and the image exists."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from sandboxes import Limits, LocalSandbox, Sandbox, SandboxError, docker_available, open_sandbox
from sandboxes.local import drops_root
from tools.build import compile_cpp, compile_cuda, parse_diagnostics

IMAGE = "agent-sandbox:latest"


def _docker_skip_reason() -> str | None:
    ok, reason = docker_available()
    if not ok:
        return reason
    from sandboxes.docker import image_present

    if not image_present(IMAGE):
        return f"image {IMAGE} not built (sandboxes/image/build_image.sh)"
    return None


# local-plain: the local sandbox as it runs where bubblewrap is missing (limits only).
KINDS = ["local", "local-plain", pytest.param("docker", marks=pytest.mark.docker)]


def make_box(kind: str, limits: Limits | None = None) -> Sandbox:
    """A fresh sandbox of `kind`; Docker skips (or fails under AGENT_REQUIRE_DOCKER=1) without a daemon and image."""
    limits = limits or Limits(timeout_s=60, memory_mb=2048)
    if kind in ("local", "local-plain"):
        return LocalSandbox(limits, use_bwrap=False if kind == "local-plain" else None)
    reason = _docker_skip_reason()
    if reason and os.environ.get("AGENT_REQUIRE_DOCKER") == "1":
        pytest.fail(f"AGENT_REQUIRE_DOCKER=1 (CI) but {reason}")
    if reason:
        print(f"docker sandbox skipped: {reason}")
        pytest.skip(f"docker sandbox: {reason}")
    from sandboxes.docker import DockerSandbox

    return DockerSandbox(limits, image=IMAGE)


@pytest.fixture(scope="module", params=KINDS)
def box(request) -> Sandbox:
    sandbox = make_box(request.param)
    print(f"sandbox mode: {sandbox.mode}")
    yield sandbox
    sandbox.close()


def isolated(box: Sandbox) -> bool:
    """Whether the sandbox claims network and filesystem isolation (local needs bubblewrap)."""
    return box.kind == "docker" or getattr(box, "bwrap", False)


def require_isolation(box: Sandbox) -> None:
    if not isolated(box):
        pytest.skip(f"{box.kind} sandbox without bubblewrap isolates neither network nor filesystem: {box.mode}")


OPENMP_SUM = r"""
#include <cstdio>
#include <omp.h>
int main() {
    long long sum = 0;
    #pragma omp parallel for reduction(+:sum)
    for (int i = 1; i <= 1000000; ++i) sum += i;
    int threads = 0;
    #pragma omp parallel
    {
        #pragma omp single
        threads = omp_get_num_threads();
    }
    std::printf("sum=%lld threads=%d\n", sum, threads);
    return 0;
}
"""


def test_openmp_round_trip(box: Sandbox) -> None:
    assert isinstance(box, Sandbox)
    box.put({"omp/sum.cpp": OPENMP_SUM})
    build = compile_cpp(box, ["omp/sum.cpp"], "omp/sum", flags=["-O2", "-fopenmp"])
    assert build.ok, build.summary()
    assert box.exists("omp/sum")
    run = box.run(["./omp/sum"], env={"OMP_NUM_THREADS": "2"})
    assert run.ok, run.tail()
    assert run.stdout.strip() == "sum=500000500000 threads=2"
    assert box.get("omp/sum")[:4] == b"\x7fELF"  # the binary comes back out


def test_put_path_and_get(box: Sandbox, tmp_path: Path) -> None:
    tree = tmp_path / "proj"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.txt").write_text("alpha")
    (tree / "run.sh").write_text("#!/bin/sh\ncat src/a.txt > out.txt\n")
    (tree / "run.sh").chmod(0o755)
    box.put_path(tree, "proj")
    run = box.run("./run.sh", cwd="proj")
    assert run.ok, run.tail()
    assert box.get("proj/out.txt") == b"alpha"
    assert not box.exists("proj/missing.txt")
    with pytest.raises(FileNotFoundError):
        box.get("proj/missing.txt")
    with pytest.raises(SandboxError):
        box.put({"../escape.txt": "x"})


def test_timeout_kills_children(box: Sandbox) -> None:
    marker = f"late-{uuid.uuid4().hex[:8]}.txt"
    # The child would write the marker after 2 s; the parent outlives the 1 s limit.
    run = box.run(f"(sleep 2; echo late > {marker}) & sleep 60", timeout_s=1)
    assert run.timed_out and not run.ok
    assert any("time limit" in note for note in run.notes)
    time.sleep(2.5)  # past the moment the child would have written
    assert not box.exists(marker)


def test_background_children_end_with_the_command(box: Sandbox) -> None:
    marker = f"background-{uuid.uuid4().hex[:8]}.txt"
    run = box.run(f"(sleep 2; echo late > {marker}) >/dev/null 2>&1 & echo started")
    assert run.ok and run.stdout.strip() == "started"
    time.sleep(2.5)
    assert not box.exists(marker)


def test_timeout_kills_escaped_session(box: Sandbox) -> None:
    require_isolation(box)
    marker = f"escaped-{uuid.uuid4().hex[:8]}.txt"
    # setsid leaves timeout's process group: only namespace/container-wide clean-up catches it.
    run = box.run(f"setsid sh -c 'sleep 2; echo late > {marker}' </dev/null >/dev/null 2>&1 & sleep 60", timeout_s=1)
    assert run.timed_out
    time.sleep(2.5)
    assert not box.exists(marker)


def test_memory_limit_fails_cleanly(box: Sandbox) -> None:
    # 1 GiB of real bytes under a 256 MB limit: a clean failure, never a hang.
    run = box.run(["python3", "-c", "b = b'x' * (1 << 30); print('allocated', len(b))"], limits=Limits(memory_mb=256, timeout_s=60))
    assert not run.ok and not run.timed_out
    assert "allocated" not in run.stdout
    if box.kind == "docker":
        assert run.returncode == 137
        assert any("memory limit" in note for note in run.notes), run.notes
    else:
        assert "MemoryError" in run.stderr
    after = box.run(["echo", "alive"])  # the sandbox is still usable
    assert after.ok and after.stdout.strip() == "alive"


def test_gpu_sandbox_has_no_address_space_limit(tmp_path: Path) -> None:
    """A CUDA program reserves address space far beyond what it allocates (cudaMalloc fails under
    a 4 GiB RLIMIT_AS on an H200), so a sandbox that runs CUDA caps time and files, not that."""
    reserve = ["python3", "-c", "import mmap; m = mmap.mmap(-1, 1 << 30); print('reserved')"]
    small = Limits(memory_mb=256, timeout_s=60)
    with LocalSandbox(small, root=tmp_path) as cpu_box, LocalSandbox(small, root=tmp_path, gpu=True) as gpu_box:
        assert not cpu_box.run(reserve).ok
        run = gpu_box.run(reserve)
        assert run.ok and run.stdout.strip() == "reserved", run.tail()
        assert gpu_box.run(["sh", "-c", "ulimit -t"]).stdout.strip() == str(small.cpu_s)


def test_network_is_unreachable(box: Sandbox) -> None:
    require_isolation(box)
    # A server on the host's loopback: reachable from any process that shares the host's network.
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        probe = (
            "import socket\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "print('connected')\n"
        )
        run = box.run(["python3", "-c", probe], timeout_s=30)
        assert not run.ok
        assert "connected" not in run.stdout
        assert "Error" in run.stderr  # ConnectionRefusedError / OSError: Network is unreachable
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_writes_outside_workdir_stay_inside(box: Sandbox) -> None:
    require_isolation(box)
    name = f"agent-escape-{uuid.uuid4().hex[:8]}"
    run = box.run(f"echo x > /tmp/{name}; echo x > ../{name}; echo x > /usr/{name}; cat /tmp/{name}")
    try:
        assert run.stdout.strip() == "x"  # the private /tmp is writable inside
        assert not Path("/tmp", name).exists()
        assert not Path("/usr", name).exists()
        assert "Read-only file system" in run.stderr
        if isinstance(box, LocalSandbox):
            assert not (box.workdir.parent / name).exists()
    finally:
        for leaked in (Path("/tmp", name), Path("/usr", name)):
            leaked.unlink(missing_ok=True)


def host_place() -> Path:
    """A writable host directory that sandboxes show as it is (not /tmp, which is private, nor $HOME, which is masked)."""
    return next(p for p in (Path("/var/tmp"), Path(__file__).resolve().parent) if os.access(p, os.W_OK))


def test_commands_cannot_read_what_only_root_may(box: Sandbox) -> None:
    """/etc/shadow, root's home, a root file of mode 0600 anywhere, another process's environment:
    commands run as an unprivileged user, so none of them opens."""
    if box.kind != "docker" and not drops_root():
        pytest.skip("commands run as the invoking user where the tool is not root: its own files are theirs")
    secret = f"secret-{uuid.uuid4().hex}"
    private = Path(tempfile.mkdtemp(prefix=".agent-private-", dir=host_place()))
    home = Path(tempfile.mkdtemp(prefix=".agent-home-", dir=Path.home()))
    for place in (private, home):
        (place / "key").write_text(secret)
        (place / "key").chmod(0o600)
    holder = subprocess.Popen(["sleep", "60"], env={"AGENT_SECRET": secret})
    try:
        run = box.run(f"id -u; cat /etc/shadow {private}/key {home}/key /proc/{holder.pid}/environ; ls -A /root")
    finally:
        holder.kill()
        holder.wait()
        shutil.rmtree(private)
        shutil.rmtree(home)
    assert run.stdout.split()[0] != "0", run.tail()
    assert secret not in run.stdout + run.stderr
    assert "/etc/shadow: Permission denied" in run.stderr
    assert home.name not in run.stdout  # root's home is not listed
    shadow = Path("/etc/shadow").read_text().splitlines() if drops_root() else []
    assert not any(line in run.stdout for line in shadow if line.strip())


def test_what_commands_write_the_tool_reads_and_removes(box: Sandbox) -> None:
    box.put({"deep/dir/a.txt": "x\n"})
    run = box.run("echo y >> deep/dir/a.txt && mkdir -p deep/new/inner && echo w > deep/new/inner/c.txt "
                  "&& chmod 600 deep/new/inner/c.txt && chmod 500 deep/new/inner")
    assert run.ok, run.tail()
    assert box.get("deep/dir/a.txt") == b"x\ny\n"  # a file put there is the command's to change
    assert box.get("deep/new/inner/c.txt") == b"w\n"
    if isinstance(box, LocalSandbox):
        assert box.run("chmod 700 deep/new/inner").ok  # the module's sandbox lives on; clean for the next test
        where = box.workdir
        probe = LocalSandbox(box.limits, use_bwrap=box.bwrap)
        assert probe.run("mkdir -p d/e && touch d/e/f && chmod 500 d/e d").ok
        probe.close()
        assert not probe.workdir.exists()
        assert where.exists()


def test_workdir_reached_through_private_directories(tmp_path: Path) -> None:
    """A sandbox root under directories only root may pass through (pytest's own tmp_path is one):
    with bubblewrap the command still reaches its working directory by its absolute path;
    without it, the sandbox refuses to open, saying why."""
    if not drops_root():
        pytest.skip("commands run as the invoking user where the tool is not root")
    private = Path(tempfile.mkdtemp(prefix=".agent-root-", dir=host_place()))
    (tmp_path / "task").mkdir()  # hidden like a task's directory: its mask's parents are the workdir's too
    try:
        for root in (tmp_path, private):
            with LocalSandbox(Limits(timeout_s=30), root=root, hide=[tmp_path / "task"]) as box:
                if not box.bwrap:
                    pytest.skip(f"no bubblewrap: {box.mode}")
                run = box.run(f"echo ok > {box.workdir}/f.txt && cat {box.workdir}/f.txt")
                assert run.ok and run.stdout == "ok\n", run.tail()
        with pytest.raises(SandboxError, match=f"cannot pass through {private}"):
            LocalSandbox(root=private, use_bwrap=False)
        assert os.listdir(private) == []  # the refused sandbox left nothing behind
    finally:
        shutil.rmtree(private)


def test_exposed_directory_under_the_masked_home() -> None:
    """What `expose` binds back under the masked $HOME (a Python installation) stays reachable
    for the unprivileged user, though bubblewrap makes the directories above it root's."""
    if not drops_root():
        pytest.skip("commands run as the invoking user where the tool is not root")
    home = Path(tempfile.mkdtemp(prefix=".agent-home-", dir=Path.home()))
    try:
        tool = home / "tools" / "bin"
        tool.mkdir(parents=True)
        (tool / "hello").write_text("#!/bin/sh\necho hello\n")
        (tool / "hello").chmod(0o755)
        with LocalSandbox(Limits(timeout_s=30), expose=[tool]) as box:
            if not box.bwrap:
                pytest.skip(f"no bubblewrap: {box.mode}")
            run = box.run([str(tool / "hello")])
            assert run.ok and run.stdout == "hello\n", run.tail()
    finally:
        shutil.rmtree(home)


def test_bwrap_view_leaves_out_runtime_state_but_shows_its_siblings() -> None:
    """Container runtimes churn mounts under their state directories; a recursive bind of / that
    meets one being torn down fails, so the sandbox's view leaves those directories out."""
    import subprocess
    import tempfile

    from sandboxes.local import RUNTIME_PATHS, root_binds

    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed")
    assert root_binds(["/no/such/dir"]) == ["--ro-bind", "/", "/"]
    # bwrap replaces /tmp with its own, so the directories go where the checkout is, unless that is /tmp.
    places = (Path(__file__).resolve().parent, Path.home(), Path("/var/tmp"))
    place = next(p for p in places if p.parts[1:2] != ("tmp",) and os.access(p, os.W_OK))
    parent = Path(tempfile.mkdtemp(prefix=".binds-", dir=place))
    try:
        (parent / "kept").mkdir()
        (parent / "kept" / "f").write_text("seen\n")
        (parent / "state" / "inner").mkdir(parents=True)
        (parent / "link").symlink_to("kept")
        args = root_binds([str(parent / "state")])
        assert ["--ro-bind", "/", "/"] != args[:3]
        run = subprocess.run(
            ["bwrap", *args, "--dev", "/dev", "/bin/sh", "-c", f"ls {parent}; cat {parent}/link/f; ls /usr/bin/env"],
            capture_output=True, text=True, timeout=30,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["kept", "link", "seen", "/usr/bin/env"]
    finally:
        shutil.rmtree(parent)
    box = LocalSandbox(Limits(timeout_s=30))
    try:
        assert box.bwrap, box.mode
        for state in (path for path in RUNTIME_PATHS if os.path.lexists(path)):
            seen = box.run(["test", "-e", state])
            assert seen.returncode == 1, f"{state} is visible in the sandbox"
            # The directories on the way, which bwrap makes, keep the host's modes: open to all.
            listed = box.run(["ls", os.path.dirname(state)])
            assert listed.ok, listed.tail()
    finally:
        box.close()


SAXPY_CU = """\
__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

BROKEN_CU = """\
__global__ void broken(float* y) {
    int i = threadIdx.x;
    y[i] = undeclared_value;
}
"""


def _need_nvcc(box: Sandbox) -> None:
    if box.kind == "local" and not shutil.which("nvcc"):
        pytest.skip("nvcc is not installed on this host")
    if box.kind == "docker":
        from sandboxes.docker import host_cuda_home

        if host_cuda_home() is None:
            pytest.skip("the host has no CUDA toolkit to mount into the container")


def test_nvcc_ptx_and_diagnostics(box: Sandbox) -> None:
    _need_nvcc(box)
    box.put({"cu/saxpy.cu": SAXPY_CU, "cu/broken.cu": BROKEN_CU})
    good = compile_cuda(box, ["cu/saxpy.cu"], "cu/saxpy.ptx", ptx_only=True)
    assert good.ok, good.summary()
    assert b".entry" in box.get("cu/saxpy.ptx")

    bad = compile_cuda(box, ["cu/broken.cu"], "cu/broken.ptx", ptx_only=True)
    assert not bad.ok
    errors = bad.errors
    assert errors, bad.output
    first = errors[0]
    assert first.file.endswith("broken.cu") and first.line == 3 and first.severity == "error"
    assert "undeclared_value" in first.message and "undefined" in first.message
    assert parse_diagnostics(bad.output, "nvcc")[0].line == 3


@pytest.mark.parametrize("kind", KINDS)
def test_close_leaves_nothing_behind(kind: str) -> None:
    box = make_box(kind)
    box.put({"f.txt": "x"})
    if isinstance(box, LocalSandbox):
        where = box.workdir
        box.close()
        assert not where.exists()
    else:
        import docker

        client = docker.from_env()
        name = box.container.name
        volume = box.volume.name
        box.close()
        assert not client.containers.list(all=True, filters={"name": name})
        assert not client.volumes.list(filters={"name": volume})
    box.close()  # a second close is harmless


@pytest.mark.docker
def test_reap_stale_removes_orphaned_containers() -> None:
    if _docker_skip_reason():
        pytest.skip(f"docker sandbox: {_docker_skip_reason()}")
    import subprocess

    import docker

    from sandboxes.docker import LABEL, reap_stale

    gone = subprocess.Popen(["true"])
    gone.wait()  # a process id that no longer runs: the owner of a leftover container
    client = docker.from_env()
    labels = {LABEL: "1", f"{LABEL}.pid": str(gone.pid), f"{LABEL}.host": socket.gethostname()}
    live = make_box("docker")
    leftover = client.containers.create(IMAGE, ["sleep", "infinity"], labels=labels, network_mode="none")
    try:
        assert reap_stale(client) >= 1
        assert not client.containers.list(all=True, filters={"id": leftover.id})
        assert live.run(["true"]).ok  # a live owner's container is kept
    finally:
        live.close()
        try:
            leftover.remove(force=True)
        except docker.errors.NotFound:
            pass


def test_open_sandbox_auto_says_which() -> None:
    box = open_sandbox("auto")
    try:
        print(f"auto chose {box.kind}: {box.mode}")
        if _docker_skip_reason() is None:
            assert box.kind == "docker" and box.mode.startswith("docker")
        else:
            assert box.kind == "local" and "auto chose local" in box.mode
        assert box.run(["true"]).ok
    finally:
        box.close()


def test_open_sandbox_rejects_unknown_kind() -> None:
    with pytest.raises(SandboxError, match="unknown sandbox kind"):
        open_sandbox("vm")


# A program that starts a command in its main thread while another thread runs, as a port does,
# with Ctrl-C pressed while the command's process forks; it reports the Ctrl-C the way the CLI does.
_PRESSED_WHILE_FORKING = """
import os, signal, sys, threading, time
from sandboxes import LocalSandbox
threading.Thread(target=lambda: time.sleep(600), daemon=True).start()
box = LocalSandbox()
def press_ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.05)  # time for whichever thread takes it
os.register_at_fork(before=press_ctrl_c)
try:
    box.run(["sleep", "600"])
    print("not interrupted", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
finally:
    box.close()
"""


def test_ctrl_c_while_a_command_starts_is_one_clean_interrupt() -> None:
    """Ctrl-C lands where the program can act on it, whichever thread takes the signal: never
    inside Python's after-fork hooks (printed there as 'Exception ignored ... KeyboardInterrupt'
    and lost), and the command started meanwhile does not run on."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", _PRESSED_WHILE_FORKING], cwd=root, capture_output=True,
                          text=True, timeout=60, preexec_fn=_as_from_a_shell)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "interrupted\n", "")


def _as_from_a_shell() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
