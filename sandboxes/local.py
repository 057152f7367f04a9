"""LocalSandbox: a private directory, rlimits, process-group kill, and bubblewrap where present.

With `bwrap` the command sees the system read-only (less container runtimes' state), a
private /tmp, no network and its own PID namespace; only the working directory is writable.
Without it, only the limits and the working directory apply, and `mode` says so. A `gpu` sandbox (for running CUDA) also
sees the NVIDIA device nodes and has no address-space limit: the CUDA driver reserves far more
virtual memory than a program uses (under a 4 GiB RLIMIT_AS, cudaMalloc fails on an H200).
"""

from __future__ import annotations

import os
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from glob import glob
from pathlib import Path
from typing import Mapping, Sequence

from .base import Limits, RunResult, SandboxError

_MB = 1024 * 1024

# Container runtimes mount and unmount their containers' file systems under these directories
# while containers start and stop. bwrap's read-only bind of / remounts every mount below it, and
# one torn down meanwhile fails the whole command ("Unable to apply mount flags"), so the
# sandbox's view of the system leaves these out; also the daemons' sockets, which a read-only
# bind would still let a command connect to.
RUNTIME_PATHS = (
    "/var/lib/docker", "/var/lib/containerd", "/var/lib/containers",
    "/run/docker", "/run/containerd", "/run/containers", "/run/netns",
    "/run/docker.sock", "/run/podman",
)
# Replaced inside the sandbox by bwrap's own /dev, /proc and /tmp.
_REPLACED = ("/dev", "/proc", "/tmp")


def root_binds(left_out: Sequence[str] = RUNTIME_PATHS) -> list[str]:
    """bwrap arguments that show the host's file system read-only, except the `left_out`
    paths: `--ro-bind / /` where none exists, else a bind of each sibling along the
    way to them (symbolic links recreated as links)."""
    present = [path for path in left_out if os.path.lexists(path) and not os.path.islink(path)]
    if not present:
        return ["--ro-bind", "/", "/"]
    args: list[str] = []

    def visit(directory: str) -> None:
        try:
            names = sorted(os.listdir(directory))
        except OSError:  # not ours to list: shown whole, as without left-out paths
            args.extend(["--ro-bind", directory, directory])
            return
        for name in names:
            path = os.path.join(directory, name)
            if path in present or path in _REPLACED:
                continue
            if os.path.islink(path):
                args.extend(["--symlink", os.readlink(path), path])
            elif any(out.startswith(path + "/") for out in present):
                visit(path)
            else:
                args.extend(["--ro-bind-try", path, path])  # an entry gone meanwhile is no failure

    visit("/")
    return args


def _bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate commands here, or None when it can."""
    exe = shutil.which("bwrap")
    if not exe:
        return "no bubblewrap"
    probe = subprocess.run(
        [exe, *root_binds(), "--dev", "/dev", "--unshare-net", "true"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    if probe.returncode != 0:
        return f"bubblewrap fails here: {probe.stderr.strip()[:200]}"
    return None


class LocalSandbox:
    kind = "local"

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        use_bwrap: bool | None = None,
        root: Path | None = None,
        hide: Sequence[Path | str] = (),
        expose: Sequence[Path | str] = (),
        gpu: bool = False,
    ):
        """`hide`: host directories masked by an empty tmpfs under bwrap (e.g. a task's
        directory, so a candidate cannot read the reference's files); $HOME always is.
        `expose`: directories bound back read-only after the masks (e.g. a Python installation
        under $HOME, for task code that needs it)."""
        self.limits = limits or Limits()
        self.hide = [str(Path(p).resolve()) for p in (Path.home(), *hide)]
        self.expose = [str(Path(p).resolve()) for p in expose]
        self.gpu = gpu
        self._tmp = tempfile.mkdtemp(prefix="agent-sbx-", dir=root)
        self.workdir = Path(self._tmp)
        problem = _bwrap_problem() if use_bwrap is None else (None if use_bwrap else "bubblewrap not used")
        self.bwrap = problem is None
        self.mode = (
            "local+bwrap (read-only system, private /tmp, no network)"
            if self.bwrap
            else f"local (rlimits only: {problem}, so network and filesystem are not isolated)"
        )

    # files -----------------------------------------------------------------
    def _path(self, rel: str) -> Path:
        path = (self.workdir / rel).resolve()
        if path != self.workdir and self.workdir not in path.parents:
            raise SandboxError(f"path escapes the sandbox: {rel}")
        return path

    def put(self, files: Mapping[str, str | bytes]) -> None:
        for rel, content in files.items():
            path = self._path(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content)
            else:
                path.write_bytes(content)

    def put_path(self, src: Path, dest: str = "") -> None:
        src = Path(src)
        target = self._path(dest or src.name)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)

    def get(self, path: str) -> bytes:
        return self._path(path).read_bytes()

    def exists(self, path: str) -> bool:
        return self._path(path).exists()

    # running ---------------------------------------------------------------
    def _argv(self, command: Sequence[str] | str, cwd: Path) -> list[str]:
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if not self.bwrap:
            return argv
        wd = str(self.workdir)
        masks = [arg for path in self.hide if not wd.startswith(path + "/") for arg in ("--tmpfs", path)]
        masks += [arg for path in self.expose for arg in ("--ro-bind", path, path)]
        if self.gpu:
            masks += [arg for node in sorted(glob("/dev/nvidia*")) for arg in ("--dev-bind", node, node)]
        return [
            "bwrap", *root_binds(), "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", *masks, "--bind", wd, wd, "--unshare-net", "--unshare-pid",
            "--unshare-ipc", "--die-with-parent", "--new-session", "--chdir", str(cwd), *argv,
        ]

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout_s: float | None = None,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str = "",
    ) -> RunResult:
        lim = limits or self.limits
        timeout = timeout_s if timeout_s is not None else lim.timeout_s
        workdir = self._path(cwd)

        def set_limits() -> None:
            os.setsid()
            if not self.gpu:
                resource.setrlimit(resource.RLIMIT_AS, (lim.memory_mb * _MB, lim.memory_mb * _MB))
            resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 5))
            resource.setrlimit(resource.RLIMIT_FSIZE, (lim.file_mb * _MB, lim.file_mb * _MB))
            # RLIMIT_NPROC counts the user's processes machine-wide; root is exempt.
            resource.setrlimit(resource.RLIMIT_NPROC, (lim.max_procs, lim.max_procs))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        run_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.workdir), "LANG": "C.UTF-8"}
        run_env["TMPDIR"] = "/tmp" if self.bwrap else str(self.workdir)
        run_env.update(env or {})
        text = command if isinstance(command, str) else shlex.join(command)
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                self._argv(command, workdir), cwd=workdir, env=run_env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=set_limits,
            )
        except OSError as exc:
            return RunResult(text, 127, "", f"cannot start: {exc}", 0.0)
        timed_out = False
        try:
            out, err = proc.communicate(timeout=timeout)
            if not self.bwrap:
                # What the command left running in its group dies with it, as in bwrap's PID namespace.
                _kill_group(proc.pid)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            out, err = _drain(proc)
        duration = time.monotonic() - start
        rc = proc.returncode
        sig = -rc if rc < 0 else (rc - 128 if rc > 128 and self.bwrap else None)
        result = RunResult(text, rc, out.decode(errors="replace"), err.decode(errors="replace"), duration, timed_out, sig)
        if timed_out:
            result.notes.append(f"killed after {timeout:g}s time limit (whole process group)")
        if sig == signal.SIGXCPU:
            result.notes.append(f"CPU time limit of {lim.cpu_s}s exceeded")
        return result

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> "LocalSandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drain(proc: subprocess.Popen) -> tuple[bytes, bytes]:
    """The output of a killed command; a descendant that left its process group (possible
    without bwrap's PID namespace) may hold the pipes open, so wait only briefly."""
    try:
        return proc.communicate(timeout=5)
    except subprocess.TimeoutExpired as exc:
        for pipe in (proc.stdout, proc.stderr):
            if pipe:
                pipe.close()
        proc.wait()
        return exc.output or b"", exc.stderr or b""


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
