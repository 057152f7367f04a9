"""LocalSandbox: a private directory, rlimits, process-group kill, and bubblewrap where present.

With `bwrap` the command sees the system read-only (less container runtimes' state), a
private /tmp, no network and its own PID namespace; only the working directory is writable.
Without it, only the limits and the working directory apply, and `mode` says so. Where the
tool runs as root, commands run as nobody (bwrap itself mounts as root, then `setpriv` drops
to nobody; without bwrap the process drops before exec), so root-only files (/etc/shadow,
/root) stay closed to them; the working directory and what is put there belong to nobody.
A command's output is read as it comes: the result keeps its ends (Limits.output_kb). A
`gpu` sandbox (for running CUDA) also sees the NVIDIA device nodes and has no address-space
limit: the CUDA driver reserves far more virtual memory than a program uses (under a 4 GiB
RLIMIT_AS, cudaMalloc fails on an H200).
"""

from __future__ import annotations

import os
import resource
import selectors
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager, nullcontext
from glob import glob
from pathlib import Path
from typing import Mapping, Sequence

from .base import Limits, OutputKeeper, RunResult, SandboxError, kept_result

_MB = 1024 * 1024
_CHUNK = 1 << 16
# Who commands run as where the tool is root: nobody/nogroup owns no file of the system.
SANDBOX_UID = SANDBOX_GID = 65534

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
    way to them (symbolic links recreated as links, directories on the way with their modes)."""
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
                # Made by bwrap, which would make it root's alone (0700): it gets the host's mode.
                args.extend(["--perms", f"{stat.S_IMODE(os.stat(path).st_mode):04o}", "--dir", path])
                visit(path)
            else:
                args.extend(["--ro-bind-try", path, path])  # an entry gone meanwhile is no failure

    visit("/")
    return args


def drops_root() -> bool:
    """Whether commands run as nobody: the tool is root, whose files they must not reach."""
    return os.geteuid() == 0


def _drop_argv() -> list[str]:
    """bwrap's last arguments where it runs as root: keep only the capabilities to change
    user, then become nobody (no groups, no new privileges) just before the command."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise SandboxError("no setpriv (util-linux) to run commands as nobody")
    return [
        "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", setpriv, f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_GID}", "--clear-groups", "--no-new-privs", "--",
    ]


def _bwrap_problem() -> str | None:
    """Why bubblewrap cannot isolate commands here, or None when it can."""
    exe = shutil.which("bwrap")
    if not exe:
        return "no bubblewrap"
    try:
        drop = _drop_argv() if drops_root() else []
    except SandboxError as exc:
        return str(exc)
    probe = subprocess.run(
        [exe, *root_binds(), "--dev", "/dev", "--perms", "01777", "--tmpfs", "/tmp", "--unshare-net", *drop, "true"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    if probe.returncode != 0:
        return f"bubblewrap fails here: {probe.stderr.strip()[:200]}"
    return None


def _searchable(directory: str) -> bool:
    """Whether the sandbox user may pass through `directory` on the host."""
    info = os.stat(directory)
    if info.st_uid == SANDBOX_UID:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == SANDBOX_GID:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def _parents(path: str) -> list[str]:
    """The directories above `path`, outermost first, less /."""
    parts = Path(path).parts
    return [str(Path(*parts[:i])) for i in range(2, len(parts))]


class _Reach:
    """bwrap arguments that let the sandbox user reach what is mounted, given before each mount:
    the directories bwrap makes for a mount point inside a tmpfs get mode 0755 (bwrap makes
    them root's alone, 0700), and a host directory the user may not pass through is masked by
    an empty tmpfs (nothing below it was the user's to see). Not `needed` where commands run
    as the invoking user, whom what bwrap makes belongs to."""

    def __init__(self, tmpfs: Sequence[str], needed: bool):
        self.covered = list(tmpfs)
        self.seen: set[str] = set()
        self.needed = needed

    def before(self, target: str) -> list[str]:
        args: list[str] = []
        for parent in _parents(target) if self.needed else ():
            if parent in self.seen or parent in self.covered:
                continue
            self.seen.add(parent)
            if any(parent.startswith(root + "/") for root in self.covered):
                args += ["--perms", "0755", "--dir", parent]
            elif not _searchable(parent):
                args += ["--perms", "0755", "--tmpfs", parent]
                self.covered.append(parent)
        return args

    def tmpfs(self, path: str) -> list[str]:
        args = self.before(path) + ["--tmpfs", path]
        self.covered.append(path)
        return args


def _blocked_parent(path: Path) -> str | None:
    """The first directory above `path` that the sandbox user may not pass through, if any."""
    return next((parent for parent in _parents(str(path)) if not _searchable(parent)), None)


def _give_to_sandbox_user(path: Path) -> None:
    """Make `path` (a whole tree where it is a directory) the sandbox user's, to write in."""
    os.chown(path, SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)
    if path.is_dir() and not path.is_symlink():
        for top, dirs, files in os.walk(path):
            for name in dirs + files:
                os.chown(os.path.join(top, name), SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)


@contextmanager
def interrupts_deferred():
    """Ctrl-C pressed inside the block acts when it ends. While a process forks with a
    `preexec_fn`, Python runs its after-fork hooks, where a KeyboardInterrupt is printed as a
    traceback and lost, and a command started then would outlive the interrupt. Masking SIGINT
    in this thread is not enough: another thread takes the signal and Python still raises it
    here. Only the main thread gets KeyboardInterrupt, so only there is anything deferred."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pressed:
            signal.raise_signal(signal.SIGINT)


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
        self.as_nobody = drops_root()
        problem = _bwrap_problem() if use_bwrap is None else (None if use_bwrap else "bubblewrap not used")
        self.bwrap = problem is None
        self._tmp = tempfile.mkdtemp(prefix="agent-sbx-", dir=root)
        self.workdir = Path(self._tmp)
        if self.as_nobody:
            blocked = None if self.bwrap else _blocked_parent(self.workdir)
            if blocked:
                self.close()
                raise SandboxError(
                    f"commands run as nobody, who cannot pass through {blocked} (mode "
                    f"{stat.S_IMODE(os.stat(blocked).st_mode):04o}) to reach {self.workdir}: "
                    "give the sandbox a root directory nobody can reach, or install bubblewrap")
            _give_to_sandbox_user(self.workdir)
        who = ", as nobody" if self.as_nobody else ""
        self.mode = (
            f"local+bwrap (read-only system, private /tmp, no network{who})"
            if self.bwrap
            else f"local (rlimits only{who}: {problem}, so network and filesystem are not isolated)"
        )

    # files -----------------------------------------------------------------
    def _path(self, rel: str) -> Path:
        path = (self.workdir / rel).resolve()
        if path != self.workdir and self.workdir not in path.parents:
            raise SandboxError(f"path escapes the sandbox: {rel}")
        return path

    def _made(self, path: Path) -> None:
        """Hand what was just written (and the directories made for it) to the sandbox user."""
        if not self.as_nobody:
            return
        for parent in reversed(path.relative_to(self.workdir).parents[:-1]):
            os.chown(self.workdir / parent, SANDBOX_UID, SANDBOX_GID)
        _give_to_sandbox_user(path)

    def put(self, files: Mapping[str, str | bytes]) -> None:
        for rel, content in files.items():
            path = self._path(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content)
            else:
                path.write_bytes(content)
            self._made(path)

    def put_path(self, src: Path, dest: str = "") -> None:
        src = Path(src)
        target = self._path(dest or src.name)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
        self._made(target)

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
        hidden = [path for path in self.hide if not wd.startswith(path + "/")]
        reach = _Reach(["/tmp"], needed=self.as_nobody)
        masks = [arg for path in hidden for arg in reach.tmpfs(path)]
        masks += [arg for path in self.expose for arg in (*reach.before(path), "--ro-bind", path, path)]
        if self.gpu:
            masks += [arg for node in sorted(glob("/dev/nvidia*")) for arg in ("--dev-bind", node, node)]
        masks += reach.before(wd)
        drop: list[str] = []
        if self.as_nobody:
            masks += ["--perms", "01777", "--tmpfs", "/dev/shm"]  # shared memory nobody may use
            drop = _drop_argv()
        return [
            "bwrap", *root_binds(), "--dev", "/dev", "--proc", "/proc",
            "--perms", "01777", "--tmpfs", "/tmp", *masks, "--bind", wd, wd, "--unshare-net", "--unshare-pid",
            "--unshare-ipc", "--die-with-parent", "--new-session", "--chdir", str(cwd), *drop, *argv,
        ]

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
        lim = limits or self.limits
        timeout = timeout_s if timeout_s is not None else lim.timeout_s
        workdir = self._path(cwd)

        def set_limits() -> None:
            os.setsid()
            if not self.gpu:
                resource.setrlimit(resource.RLIMIT_AS, (lim.memory_mb * _MB, lim.memory_mb * _MB))
            resource.setrlimit(resource.RLIMIT_CPU, (lim.cpu_s, lim.cpu_s + 5))
            resource.setrlimit(resource.RLIMIT_FSIZE, (lim.file_mb * _MB, lim.file_mb * _MB))
            # RLIMIT_NPROC counts the user's processes machine-wide (root is exempt): as
            # nobody, those of every sandbox running now together.
            resource.setrlimit(resource.RLIMIT_NPROC, (lim.max_procs, lim.max_procs))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        run_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.workdir), "LANG": "C.UTF-8"}
        run_env["TMPDIR"] = "/tmp" if self.bwrap else str(self.workdir)
        run_env.update(env or {})
        text = command if isinstance(command, str) else shlex.join(command)
        # Without bwrap the process itself drops to nobody (after its chdir, before exec).
        user = dict(user=SANDBOX_UID, group=SANDBOX_GID, extra_groups=[]) if self.as_nobody and not self.bwrap else {}
        keep = lim.output_kb * 1024
        start = time.monotonic()
        with open(stdout_file, "wb") if stdout_file is not None else nullcontext() as copy:
            out, err = OutputKeeper(keep, copy, lim.file_mb * _MB), OutputKeeper(keep)
            proc = None
            try:
                with interrupts_deferred():
                    proc = subprocess.Popen(
                        self._argv(command, workdir), cwd=workdir, env=run_env, stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=set_limits, **user,
                    )
            except (OSError, SandboxError) as exc:
                return RunResult(text, 127, "", f"cannot start: {exc}", 0.0)
            except KeyboardInterrupt:  # pressed while it started: the command must not outlive the call
                if proc is not None:
                    _kill_group(proc.pid)
                    proc.communicate()
                raise
            streams = _Streams(proc, out, err)
            try:
                timed_out = not streams.pump(start + timeout)
                if timed_out or not self.bwrap:
                    # What the command left running in its group dies with it, as in bwrap's PID namespace.
                    _kill_group(proc.pid)
                if timed_out:
                    streams.drain()
            except BaseException:  # interrupted: the command must not outlive the call
                _kill_group(proc.pid)
                proc.wait()
                raise
            finally:
                streams.close()
        duration = time.monotonic() - start
        rc = proc.returncode
        sig = -rc if rc < 0 else (rc - 128 if rc > 128 and self.bwrap else None)
        result = kept_result(text, rc, out, err, duration, timed_out=timed_out, signal=sig)
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


class _Streams:
    """A command's stdout and stderr, read as they come into their keepers."""

    def __init__(self, proc: subprocess.Popen, out: OutputKeeper, err: OutputKeeper):
        self.proc = proc
        self.open = {proc.stdout: out, proc.stderr: err}

    def pump(self, deadline: float) -> bool:
        """Read until both streams end and the command exits; False when `deadline` comes first."""
        with selectors.DefaultSelector() as selector:
            for pipe, keeper in self.open.items():
                selector.register(pipe, selectors.EVENT_READ, keeper)
            while self.open:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                for key, _ in selector.select(left):
                    data = os.read(key.fd, _CHUNK)
                    if data:
                        key.data.feed(data)
                    else:
                        selector.unregister(key.fileobj)
                        del self.open[key.fileobj]
                        key.fileobj.close()
        try:
            self.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        return True

    def drain(self) -> None:
        """What a killed command printed last; a descendant that left its process group
        (possible without bwrap's PID namespace) may hold the pipes open, so wait only briefly."""
        self.pump(time.monotonic() + 5)
        self.close()
        self.proc.wait()

    def close(self) -> None:
        for pipe in self.open:
            pipe.close()
        self.open.clear()


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
