"""Where commands run: one Sandbox protocol, a local and a Docker implementation."""

from __future__ import annotations

from .base import Limits, RunResult, Sandbox, SandboxError, SandboxUnavailable
from .local import LocalSandbox

__all__ = ["Limits", "RunResult", "Sandbox", "SandboxError", "SandboxUnavailable", "LocalSandbox", "open_sandbox",
           "docker_available"]


def docker_available() -> tuple[bool, str]:
    """Whether a Docker daemon answers, with the reason (one line) when it does not."""
    from .docker import docker_client, no_daemon

    try:
        docker_client(5).ping()
        return True, "daemon answers"
    except Exception as exc:  # no socket, permission, old API ...
        return False, no_daemon(exc)


def open_sandbox(kind: str = "auto", *, limits: Limits | None = None, image: str = "agent-sandbox:latest") -> Sandbox:
    """Open a sandbox; `auto` picks Docker when a daemon answers and its image exists, else local."""
    if kind == "local":
        return LocalSandbox(limits)
    if kind in ("docker", "auto"):
        ok, reason = docker_available()
        if ok:
            from .docker import DockerSandbox, image_present

            if kind == "docker" or image_present(image):
                return DockerSandbox(limits, image=image)
            reason = f"image {image} not built (run sandboxes/image/build_image.sh)"
        if kind == "docker":
            from .docker import unavailable

            raise unavailable(reason)
        box = LocalSandbox(limits)
        box.mode += f"; auto chose local: {reason}"
        return box
    raise SandboxError(f"unknown sandbox kind {kind!r} (auto, local, docker)")

