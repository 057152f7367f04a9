"""DockerSandbox: one long-lived, locked-down container per sandbox session.

The container (image built by sandboxes/image/build_image.sh) runs `sleep infinity` under
docker-init with: a read-only root filesystem, writable exec tmpfs at /work (the working
directory, a tmpfs volume) and /tmp, no network, every capability dropped,
no-new-privileges, memory/CPU/pids limits, and the host's CUDA toolkit mounted read-only
when it has one (GPUs are requested too where the host has them). Every command runs as
the unprivileged user 1000 under `prlimit ... timeout -s KILL T sh -c CMD`: `timeout`
leads its own process group and kills the whole group when the time is up, and what is
left of the group is killed when a command ends; after a timeout, processes that left the
group (setsid) are swept too. A kill by the memory cgroup comes back as returncode 137
with a note. Output is read as it comes; the result keeps its ends (Limits.output_kb).
Files go in and out as tar archives (put_archive/get_archive). Containers and volumes
are labelled `agent.sandbox=1` with their session and owner, removed on
close() and at exit, and `reap_stale()` removes those whose owner process is gone.
"""

from __future__ import annotations

import atexit
import io
import os
import posixpath
import shlex
import shutil
import socket
import subprocess
import tarfile
import threading
import time
import uuid
import weakref
from contextlib import nullcontext
from pathlib import Path
from typing import Mapping, Sequence

import docker
import docker.errors
from docker.types import DeviceRequest, Mount

from .base import Limits, OutputKeeper, RunResult, SandboxError, SandboxUnavailable, kept_result

WORKDIR = "/work"
USER = "1000:1000"  # the image's `sandbox` user
_UID = 1000
_MB = 1024 * 1024
_KILLED = 128 + 9
_HANG_GRACE_S = 20.0  # past the time limit, before the host sweeps the container itself
LABEL = "agent.sandbox"

_live: "weakref.WeakSet[DockerSandbox]" = weakref.WeakSet()


def docker_client(timeout: float = 30.0):
    """A client of the daemon the environment names (DOCKER_HOST), its calls timed out after timeout seconds."""
    return docker.from_env(timeout=timeout)


def daemon_address() -> str:
    """Where the Docker client looks for its daemon."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def no_daemon(exc: BaseException) -> str:
    """One line for a daemon that does not answer: where, and the cause in a few words."""
    causes = {FileNotFoundError: "no such socket", ConnectionRefusedError: "connection refused",
              PermissionError: "permission denied", TimeoutError: "timed out"}
    cause = None
    seen: BaseException | None = exc
    while seen is not None and cause is None:
        cause = next((words for kind, words in causes.items() if isinstance(seen, kind)), None)
        if cause is None and isinstance(seen, OSError) and seen.strerror:
            cause = seen.strerror.lower()
        seen = seen.__cause__ or seen.__context__
    if cause is None:  # the client's own complaint (a bad DOCKER_HOST, a missing package)
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:100]
    return f"no Docker daemon answers at {daemon_address()} ({cause})"


def unavailable(reason: str) -> SandboxUnavailable:
    """The error for a Docker sandbox that cannot start for want of a daemon: `reason`, then what to do."""
    fix = "use a user in the docker group" if "permission denied" in reason else "start dockerd"
    return SandboxUnavailable(f"{reason}: {fix}, or use --sandbox local")


def image_present(image: str = "agent-sandbox:latest") -> bool:
    """Whether the daemon has `image` (False too when no daemon answers)."""
    try:
        docker_client(10).images.get(image)
        return True
    except Exception:  # not found, or no daemon
        return False


def host_has_gpu() -> bool:
    """Whether nvidia-smi sees a GPU on this host."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False
    try:
        probe = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0 and "GPU" in probe.stdout


def host_cuda_home() -> Path | None:
    """The host CUDA toolkit (resolved through the /usr/local/cuda link), if it has nvcc."""
    home = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda").resolve()
    return home if (home / "bin" / "nvcc").is_file() else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap_stale(client=None) -> int:
    """Remove sandbox containers and volumes of this host whose owning process has exited.

    Returns how many containers were removed.
    """
    client = client or docker_client()
    host = socket.gethostname()

    def stale(labels: dict | None) -> bool:
        labels = labels or {}
        owner = labels.get(f"{LABEL}.pid", "")
        return labels.get(f"{LABEL}.host") == host and not (owner.isdigit() and _pid_alive(int(owner)))

    removed = 0
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        if stale(container.labels):
            removed += _quietly(lambda: container.remove(force=True))
    for volume in client.volumes.list(filters={"label": f"{LABEL}=1"}):
        if stale(volume.attrs.get("Labels")):
            _quietly(lambda: volume.remove(force=True))
    return removed


def _quietly(action) -> bool:
    """Run a clean-up step; a thing already gone (or a daemon gone) is not an error here."""
    try:
        action()
        return True
    except Exception:
        return False


def _close_all() -> None:
    for box in list(_live):
        box.close()


atexit.register(_close_all)


class DockerSandbox:
    """A sandbox session in its own container.

    `limits` sets the container's memory and pids limits and each command's defaults
    (a command's own `limits` may change the memory limit, its time, CPU-time and file-size
    limits); `cpus` caps CPU use (default: all host cores); `gpus` None passes GPUs through
    where nvidia-smi sees some; `work_mb`/`tmp_mb` size the /work and /tmp tmpfs.
    """

    kind = "docker"

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        image: str = "agent-sandbox:latest",
        cpus: float | None = None,
        gpus: bool | None = None,
        work_mb: int = 2048,
        tmp_mb: int = 1024,
    ):
        self.limits = limits or Limits()
        self.image = image
        self.session = uuid.uuid4().hex[:12]
        self._closed = True  # until the container runs
        try:
            self.client = docker_client(timeout=24 * 3600.0)  # commands are bounded by our own guard
            self.image_id = self.client.images.get(image).id  # which compiler: what may reuse a file it built
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(f"docker image {image} not found: build it with sandboxes/image/build_image.sh, "
                                     "or use --sandbox local") from None
        except docker.errors.DockerException as exc:
            raise unavailable(no_daemon(exc)) from None
        reap_stale(self.client)

        cpus = cpus or float(os.cpu_count() or 1)
        cuda = host_cuda_home()
        want_gpu = host_has_gpu() if gpus is None else gpus
        labels = {
            LABEL: "1",
            f"{LABEL}.session": self.session,
            f"{LABEL}.pid": str(os.getpid()),
            f"{LABEL}.host": socket.gethostname(),
        }
        # The working directory is a tmpfs-backed volume rather than a plain tmpfs mount:
        # the daemon writes archives (put_archive) into volumes even under a read-only root.
        self.volume = self.client.volumes.create(
            name=f"agent-sandbox-{self.session}", driver="local", labels=labels,
            driver_opts={"type": "tmpfs", "device": "tmpfs", "o": f"size={work_mb}m,mode=1777,nosuid,nodev"},
        )
        try:
            self.container, gpu_note = self._start(self._config(labels, cpus, cuda, tmp_mb), want_gpu)
        except BaseException:
            _quietly(lambda: self.volume.remove(force=True))
            raise
        self._memory_mb = self.limits.memory_mb
        self._oom_kills = 0
        self._lock = threading.Lock()
        self._active = 0  # commands running now
        self._closed = False
        _live.add(self)
        self.mode = (
            f"docker ({image}; read-only root, tmpfs {WORKDIR} and /tmp, no network, capabilities dropped, "
            f"no-new-privileges, {self.limits.memory_mb} MB, {cpus:g} CPUs, {self.limits.max_procs} pids; "
            f"CUDA toolkit {'mounted read-only from ' + str(cuda) if cuda else 'absent'}; {gpu_note})"
        )

    def _config(self, labels: dict, cpus: float, cuda: Path | None, tmp_mb: int) -> dict:
        mounts = [Mount(WORKDIR, self.volume.name, type="volume")]
        if cuda:
            mounts.append(Mount("/usr/local/cuda", str(cuda), type="bind", read_only=True))
        return dict(
            command=["sleep", "infinity"],
            detach=True,
            init=True,  # docker-init reaps orphans the commands leave behind
            # `sleep` runs as (capability-less) root so that a sweep by the sandbox user,
            # `kill -9 -1`, cannot stop the container; every command runs as USER.
            user="0:0",
            working_dir=WORKDIR,
            network_disabled=True,
            network_mode="none",
            read_only=True,
            mounts=mounts,
            tmpfs={"/tmp": f"rw,exec,nosuid,nodev,size={tmp_mb}m,mode=1777"},
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit=f"{self.limits.memory_mb}m",
            memswap_limit=f"{self.limits.memory_mb}m",  # no swap: past the limit is an OOM kill
            nano_cpus=int(cpus * 1e9),
            pids_limit=self.limits.max_procs,
            environment={"HOME": WORKDIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8"},
            labels=labels,
            name=f"agent-sandbox-{self.session}",
        )

    def _start(self, config: dict, want_gpu: bool):
        """Start the container; returns it and a note on GPUs."""

        if not want_gpu:
            return self._run_container(config), "no GPU on the host"
        try:
            gpu_config = dict(config, device_requests=[DeviceRequest(count=-1, capabilities=[["gpu"]])])
            return self._run_container(gpu_config), "all host GPUs passed through"
        except SandboxError as exc:
            # GPUs seen but the daemon has no NVIDIA runtime: run without them, and say so.
            return self._run_container(config), f"GPUs not passed through ({str(exc)[:100]})"

    def _run_container(self, config: dict):
        try:
            return self.client.containers.run(self.image, **config)
        except docker.errors.APIError as exc:
            _quietly(lambda: self.client.containers.get(config["name"]).remove(force=True))
            raise SandboxError(f"cannot start the sandbox container: {exc.explanation or exc}") from None

    # paths -------------------------------------------------------------------
    @staticmethod
    def _relative(rel: str) -> str:
        """A normalized path relative to the working directory; refuses escapes."""
        norm = posixpath.normpath(rel.replace("\\", "/")) if rel else "."
        if norm.startswith("/") or norm == ".." or norm.startswith("../"):
            raise SandboxError(f"path escapes the sandbox: {rel}")
        return norm

    def _inside(self, rel: str) -> str:
        norm = self._relative(rel)
        return WORKDIR if norm == "." else f"{WORKDIR}/{norm}"

    # files -------------------------------------------------------------------
    def _put_tar(self, build) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            build(tar)
        try:
            accepted = self.container.put_archive(WORKDIR, buf.getvalue())
        except docker.errors.APIError as exc:
            raise SandboxError(f"docker refused the files: {exc.explanation or exc}") from None
        if not accepted:
            raise SandboxError("docker refused the files")

    @staticmethod
    def _owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = _UID
        info.uname = info.gname = ""
        return info

    def _add_parents(self, tar: tarfile.TarFile, rel: str, seen: set[str]) -> None:
        # Explicit directory entries, so that the daemon does not create them root-owned.
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            path = "/".join(parts[:i])
            if path not in seen:
                seen.add(path)
                info = self._owned(tarfile.TarInfo(path))
                info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, time.time()
                tar.addfile(info)

    def put(self, files: Mapping[str, str | bytes]) -> None:
        def build(tar: tarfile.TarFile) -> None:
            seen: set[str] = set()
            for rel, content in files.items():
                name = self._relative(rel)
                data = content.encode() if isinstance(content, str) else bytes(content)
                self._add_parents(tar, name, seen)
                info = self._owned(tarfile.TarInfo(name))
                info.size, info.mode, info.mtime = len(data), 0o644, time.time()
                tar.addfile(info, io.BytesIO(data))

        self._put_tar(build)

    def put_path(self, src: Path, dest: str = "") -> None:
        src = Path(src)
        if not src.exists():
            raise SandboxError(f"{src}: no such file or directory")
        name = self._relative(dest or src.name)

        def build(tar: tarfile.TarFile) -> None:
            self._add_parents(tar, name, set())
            tar.add(str(src), arcname=name, filter=self._owned)

        self._put_tar(build)

    def get(self, path: str) -> bytes:
        inside = self._inside(path)
        try:
            stream, _stat = self.container.get_archive(inside)
        except docker.errors.NotFound:
            raise FileNotFoundError(f"{path}: not in the sandbox") from None
        except docker.errors.APIError as exc:
            raise SandboxError(f"cannot read {path} from the sandbox: {exc.explanation or exc}") from None
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise SandboxError(f"{path}: not a regular file in the sandbox")
            return tar.extractfile(member).read()

    def exists(self, path: str) -> bool:
        return self._exec(["test", "-e", self._inside(path)], None, WORKDIR)[0] == 0

    # running -----------------------------------------------------------------
    def _exec(self, argv: list[str], env: Mapping[str, str] | None, workdir: str,
              deadline_s: float | None = None, out: OutputKeeper | None = None,
              err: OutputKeeper | None = None) -> tuple[int, bool]:
        """Run argv in the container, its output fed to `out` and `err`; returns (exit code, hung)."""
        api = self.client.api
        out = out if out is not None else OutputKeeper(0)
        err = err if err is not None else OutputKeeper(0)
        try:
            exec_id = api.exec_create(self.container.id, argv, stdout=True, stderr=True, environment=dict(env or {}),
                                      workdir=workdir, user=USER)["Id"]
        except docker.errors.APIError as exc:
            raise SandboxError(f"the sandbox container does not take commands: {exc.explanation or exc}") from None

        feeding = threading.Lock()
        done = threading.Event()  # past it, a pump still running feeds nothing (the caller reads the keepers)

        def pump() -> None:
            for chunk_out, chunk_err in api.exec_start(exec_id, stream=True, demux=True):
                with feeding:
                    if done.is_set():
                        return
                    if chunk_out:
                        out.feed(chunk_out)
                    if chunk_err:
                        err.feed(chunk_err)

        worker = threading.Thread(target=pump, daemon=True)
        worker.start()
        worker.join(deadline_s)
        hung = worker.is_alive()
        if hung:
            # Something escaped timeout's process group and keeps the output open.
            self._sweep()
            worker.join(10)
        with feeding:
            done.set()
        code = api.exec_inspect(exec_id).get("ExitCode")
        return (code if code is not None else _KILLED), hung

    def _sweep(self) -> None:
        """Kill every process of the sandbox user except the container's init."""
        api = self.client.api
        _quietly(lambda: api.exec_start(api.exec_create(self.container.id, ["/bin/sh", "-c", "kill -9 -1"], user=USER)["Id"]))

    def _sweep_if_alone(self) -> None:
        # A timed-out command's descendants may have left its process group (setsid):
        # sweep them too, unless another command of this sandbox is running right now.
        with self._lock:
            if self._active == 0:
                self._sweep()

    def _set_memory(self, memory_mb: int) -> None:
        if memory_mb != self._memory_mb:
            self.container.update(mem_limit=f"{memory_mb}m", memswap_limit=f"{memory_mb}m")
            self._memory_mb = memory_mb

    def _oom_kill_count(self) -> int | None:
        """The container's OOM-kill counter from the host's cgroup files (v1 or v2), if readable."""
        cid = self.container.id
        for path in (
            f"/sys/fs/cgroup/memory/docker/{cid}/memory.oom_control",
            f"/sys/fs/cgroup/memory/system.slice/docker-{cid}.scope/memory.oom_control",
            f"/sys/fs/cgroup/docker/{cid}/memory.events",
            f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/memory.events",
        ):
            try:
                text = Path(path).read_text()
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return None

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout_s: float | None = None,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str = "",
        stdout_file: Path | None = None,
    ) -> RunResult:
        if self._closed:
            raise SandboxError("the sandbox is closed")
        lim = limits or self.limits
        timeout = timeout_s if timeout_s is not None else lim.timeout_s
        text = command if isinstance(command, str) else shlex.join(command)
        self._set_memory(lim.memory_mb)
        limited = (
            f"prlimit --cpu={lim.cpu_s} --fsize={lim.file_mb * _MB} --core=0 -- "
            f"timeout -s KILL {timeout:.3f}s /bin/sh -c \"$0\""
        )
        # timeout leads its own process group: once it returns, kill what is left of the
        # group too (background children), as bubblewrap's PID namespace would.
        argv = ["/bin/sh", "-c", f"{limited} & pid=$!; wait $pid; rc=$?; kill -9 -$pid 2>/dev/null; exit $rc", text]
        start = time.monotonic()
        with self._lock:
            self._active += 1
        keep = lim.output_kb * 1024
        try:
            with open(stdout_file, "wb") if stdout_file is not None else nullcontext() as copy:
                out, err = OutputKeeper(keep, copy, lim.file_mb * _MB), OutputKeeper(keep)
                rc, hung = self._exec(argv, env, self._inside(cwd), timeout + _HANG_GRACE_S, out, err)
        finally:
            with self._lock:
                self._active -= 1
        duration = time.monotonic() - start
        result = kept_result(text, rc, out, err, duration)
        if rc > 128:
            result.signal = rc - 128
        if rc == _KILLED or hung:
            self._explain_kill(result, timeout, hung)
        if result.timed_out:
            self._sweep_if_alone()
        elif result.signal == 24:  # SIGXCPU
            result.notes.append(f"CPU time limit of {lim.cpu_s}s exceeded")
        return result

    def _explain_kill(self, result: RunResult, timeout: float, hung: bool) -> None:
        count = self._oom_kill_count()
        if count is not None and count > self._oom_kills:
            self._oom_kills = count
            result.notes.append(f"killed by the OOM killer: memory limit of {self._memory_mb} MB exceeded")
        elif hung or result.duration_s >= timeout:
            result.timed_out = True
            result.notes.append(f"killed after {timeout:g}s time limit (whole process group)")
        elif count is None:
            result.notes.append(f"killed by SIGKILL: most likely the memory limit of {self._memory_mb} MB (OOM killer)")
        else:
            result.notes.append("killed by SIGKILL")

    def close(self) -> None:
        if getattr(self, "_closed", True):
            return
        self._closed = True
        _live.discard(self)
        # Where the daemon is gone, reap_stale() cleans up at the next session.
        _quietly(lambda: self.container.remove(force=True))
        _quietly(lambda: self.volume.remove(force=True))

    def __enter__(self) -> "DockerSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
