"""What the task's launches tell about a kernel's arguments."""

from __future__ import annotations


def distinct_buffers(launches, pointer_idx: list[int], buffers: set[str]) -> bool:
    """Whether every launch passes a different task buffer at each of the pointer_idx arguments."""
    for launch in launches:
        args = [launch.args[i] for i in pointer_idx]
        if not all(isinstance(a, str) and a in buffers for a in args) or len(set(args)) != len(args):
            return False
    return True
