"""Where no Docker daemon answers, the Docker sandbox says so in one line: where it looked, why
it failed, what to do; and the CLI prints that line, not a traceback. Real client, real sockets."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sandboxes import SandboxUnavailable, docker_available, open_sandbox
from sandboxes.docker import DockerSandbox

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def refusing_socket(tmp_path: Path):
    """A unix socket nobody listens on: connecting to it is refused."""
    path = tmp_path / "docker.sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    yield path
    sock.close()


@pytest.fixture
def closed_port():
    """A TCP port bound but not listening: connecting to it is refused."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield sock.getsockname()[1]
    sock.close()


def test_no_socket(monkeypatch, tmp_path: Path) -> None:
    host = f"unix://{tmp_path}/absent.sock"
    monkeypatch.setenv("DOCKER_HOST", host)
    expected = f"no Docker daemon answers at {host} (no such socket): start dockerd, or use --sandbox local"
    for attempt in (lambda: open_sandbox("docker"), lambda: DockerSandbox()):
        with pytest.raises(SandboxUnavailable) as caught:
            attempt()
        assert str(caught.value) == expected
    assert docker_available() == (False, f"no Docker daemon answers at {host} (no such socket)")


def test_refused(monkeypatch, refusing_socket: Path, closed_port: int) -> None:
    for host in (f"unix://{refusing_socket}", f"tcp://127.0.0.1:{closed_port}"):
        monkeypatch.setenv("DOCKER_HOST", host)
        with pytest.raises(SandboxUnavailable, match=r"^no Docker daemon answers at \S+ \(connection refused\): start"):
            open_sandbox("docker")


def test_a_bad_address_is_named(monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "bogus://nowhere")
    with pytest.raises(SandboxUnavailable) as caught:
        open_sandbox("docker")
    assert str(caught.value).startswith("no Docker daemon answers at bogus://nowhere (Invalid bind address protocol")
    assert "\n" not in str(caught.value)


def test_auto_says_why_in_a_few_words(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/absent.sock")
    box = open_sandbox("auto")
    try:
        assert box.kind == "local"
        assert box.mode.endswith(f"; auto chose local: no Docker daemon answers at unix://{tmp_path}/absent.sock (no such socket)")
    finally:
        box.close()


def _agent(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, DOCKER_HOST=f"unix://{tmp_path}/absent.sock", COLUMNS="300")
    return subprocess.run([sys.executable, "-m", "agent", *args], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env=env)


@pytest.mark.parametrize("command", ["verify", "port"])
def test_cli_prints_one_line(command: str, tmp_path: Path) -> None:
    """`verify` turns it into its own error; `port` used to report it as an internal error."""
    if command == "verify":
        candidate = tmp_path / "cand.cpp"
        candidate.write_text("int main() { return 0; }\n")
        args = ["verify", str(ROOT / "examples/kernels/saxpy/task.json"), str(candidate), "--sandbox", "docker"]
    else:
        args = ["port", str(ROOT / "examples/projects/heat2d"), "--sandbox", "docker", "--out", str(tmp_path / "out")]
    run = _agent(args, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("error: ") and lines[0].endswith(
        f"no Docker daemon answers at unix://{tmp_path}/absent.sock (no such socket): start dockerd, or use --sandbox local")
    assert "Traceback" not in run.stdout + run.stderr and "DockerException" not in run.stdout + run.stderr
