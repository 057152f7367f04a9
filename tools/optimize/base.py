"""What every pass is made of: the context it reads (the task, what the configuration allows)
and the pass itself (a name, a line for observations, the function).

A pass takes the current code and returns a new version, or None where it does not apply (the
shape is not the one it knows, or the kernel's launches make it unsafe); where it can say why,
it raises NotApplicable with the reason, which the search puts in the trace as an observation. None of them is trusted:
the search checks every result against the task's reference before timing it. Everything a pass
emits is derived from the kernel's own text (its loop headers, bounds, bodies) and the task's
launches, never from the task's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from tools.spec import Task


class NotApplicable(Exception):
    """A pass does not apply, and why (one line a user or an LLM translator can act on)."""


@dataclass
class Context:
    task: Task
    fast_math_ok: bool = False

    def launches_of(self, kernel: str):
        return [launch for launch in self.task.launches if launch.kernel == kernel]

    def largest_block(self, kernel: str) -> int:
        """Threads in the largest block the task launches the kernel with (0: not launched)."""
        return max((b[0] * b[1] * b[2] for _, b in (launch.dims() for launch in self.launches_of(kernel))), default=0)


@dataclass(frozen=True)
class Transform:
    name: str
    what: str  # one line for observations
    apply: Callable[[Context, str], "str | list[str] | None"]  # a list: alternatives, the first correct one counts
    fresh: bool = False  # where not faster after the steps kept so far, also tried on the search's input
    # chosen because it matched the reference on the task's data (one of several alternatives, or a
    # rounding that the data decides is within tolerance): known correct for those values only
    tested: bool = False


def apply_or_none(transform: Transform, ctx: Context, code: str) -> "str | list[str] | None":
    """The pass's output, None where it does not apply (with or without a reason)."""
    try:
        return transform.apply(ctx, code)
    except NotApplicable:
        return None


def together(ctx: Context, code: str, members: Iterable[Transform]) -> str:
    """A composite pass: every member that applies, in order, each on the previous one's output;
    NotApplicable (which members applied, why the others did not) where fewer than two do."""
    applied, why = [], []
    for t in members:
        try:
            new = t.apply(ctx, code)
        except NotApplicable as reason:
            new = None
            why.append(f"{t.name}: {reason}")
        except (ValueError, IndexError):  # a text shape the member misread: it does not apply
            new = None
        if new is not None:
            code = new
            applied.append(t.name)
    if len(applied) < 2:
        raise NotApplicable(f"fewer than two of its members apply ({', '.join(applied) or 'none'})"
                            + (f"; {'; '.join(why)}" if why else ""))
    return code
