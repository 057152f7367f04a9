"""What every pass is made of: the context it reads (the task, what the configuration allows)
and the pass itself (a name, a line for observations, the function).

A pass takes the current code and returns a new version, or None where it does not apply (the
shape is not the one it knows, or the kernel's launches make it unsafe); where it can say why,
it raises NotApplicable with the reason, which the search puts in the trace as an observation. None of them is trusted:
the search checks every result against the task's reference before timing it. Everything a pass
emits is derived from the kernel's own text (its loop headers, bounds, bodies) and the task's
launches, never from the task's name.

Two kinds of pass (issue 29: passes over the typed IR instead of regular expressions over text):
- a text pass (`Transform.apply(ctx, code)`) reads and rewrites the translation unit's text;
- an IR pass (`ir_transform`) is a function from one kernel's IR (tools/cuda/kernel_ir.py) to a
  new IR, or NotApplicable with the reason; the kernel's text in the translation unit is then
  printed again from the new IR (tools/cuda/printer.py, the lowering's own printer).

What the search optimizes is a `Code`: the translation unit's text (it is a `str`, so that the
text passes read it as before) and, per kernel, the IR its text was printed from. How the two
kinds compose: a kernel's IR stays valid while only IR passes have changed it (each reprints
it). A text pass returns plain text; the search keeps the IR of each kernel whose printed text is
still in the result verbatim (the pass did not touch it) and marks the others as changed by that
pass (`Code.changed_by`), after which IR passes say NotApplicable("... changed by PASS") for that
kernel. So an IR pass applies where the text pass it replaces applied, as long as the passes
kept before it either are IR passes or left that kernel's text alone; code that is not the
lowering's output (an LLM's, one whose kernels no longer print from their IR) has no IR for
them, and the IR passes say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from tools.cuda import CudaParseError, LoweringError, LoweringUnsupported
from tools.cuda import kernel_ir as ir
from tools.cuda.translate import emitted_kernel, kernel_irs
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
    rewrite: "Callable[[Context, ir.Kernel], ir.Kernel] | None" = None  # an IR pass's (ir_transform): apply runs it


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


class Code(str):
    """The translation unit's text, and for each kernel (by name) the IR its text was printed from
    (`kernels`: valid ones; `changed_by`: kernel -> the text pass that changed it since). A `str`:
    text passes read it as before; what they return is plain text, which `after_text` wraps."""

    kernels: dict[str, ir.Kernel]
    changed_by: dict[str, str]
    _printed: dict[str, str]

    def __new__(cls, text: str, kernels: dict[str, ir.Kernel] | None = None, changed_by: dict[str, str] | None = None,
                printed: dict[str, str] | None = None):
        self = super().__new__(cls, text)
        self.kernels = dict(kernels or {})
        self.changed_by = dict(changed_by or {})
        self._printed = {name: (printed or {}).get(name) or emitted_kernel(k) for name, k in self.kernels.items()}
        return self

    @classmethod
    def of(cls, task: Task, text: str) -> "Code":
        """`text` with the IR of the task's kernels whose printed form it holds verbatim, once each
        (the lowering's output does); none where the task's source does not lower (an LLM's code,
        a source the lowering refuses)."""
        if isinstance(text, Code):
            return text
        key = (task.name, str(task.source_path()), text)  # the same text: the same kernels, the same IR
        if key in _CODE_CACHE:
            return _CODE_CACHE[key]
        kernels: dict[str, ir.Kernel] = {}
        names = sorted({launch.kernel for launch in task.launches})
        try:
            source = task.source()
            found = kernel_irs(source, str(task.source_path() or f"{task.name}.cu"), kernels=names) if names else []
        except (CudaParseError, LoweringError, LoweringUnsupported, OSError, ValueError):
            found = []
        for kernel in found:
            if sum(k.name == kernel.name for k in found) == 1 and text.count(emitted_kernel(kernel)) == 1:
                kernels[kernel.name] = kernel
        code = cls(text, kernels)
        if len(_CODE_CACHE) >= 8:
            _CODE_CACHE.pop(next(iter(_CODE_CACHE)))
        _CODE_CACHE[key] = code
        return code

    def printed(self, name: str) -> str:
        """Kernel `name`'s text in this translation unit (printed from its IR)."""
        return self._printed[name]

    def after_text(self, new: str, by: str) -> "Code":
        """`new`, the output of text pass `by` on this code, with the IR of the kernels whose text it
        left as it was; the others are marked as changed by `by`."""
        if isinstance(new, Code):
            return new
        kernels, changed = {}, dict(self.changed_by)
        for name, kernel in self.kernels.items():
            if new.count(self._printed[name]) == 1:
                kernels[name] = kernel
            else:
                changed[name] = by
        return Code(new, kernels, changed, self._printed)

    def with_kernel(self, kernel: ir.Kernel) -> "Code":
        """This code with `kernel` (a new IR of one of its kernels) printed in place of the old one."""
        old = self._printed[kernel.name]
        text = emitted_kernel(kernel)
        return Code(str.replace(self, old, text, 1), {**self.kernels, kernel.name: kernel}, self.changed_by,
                    {**self._printed, kernel.name: text})


_CODE_CACHE: dict[tuple[str, str, str], Code] = {}  # the last few translation units seen (a search's, the snapshot's)


def ir_transform(name: str, what: str, rewrite: Callable[[Context, ir.Kernel], ir.Kernel], **options) -> Transform:
    """A pass over the IR: `rewrite(ctx, kernel)` returns the kernel's new IR (a new object; the
    one given is shared with earlier versions and must not change) or raises NotApplicable with
    the reason. The Transform applies it to every kernel that has IR and prints each new IR in
    place of its kernel's text; NotApplicable, naming each kernel's reason, where none changed.
    Given plain text (a test, the snapshot), it finds the IR first (`Code.of`)."""

    def apply(ctx: Context, code: str) -> Code:
        code = Code.of(ctx.task, code)
        changed, why = False, []
        for kernel_name in sorted({launch.kernel for launch in ctx.task.launches}):
            if kernel_name in code.changed_by:
                why.append(f"{kernel_name}: its text was changed by {code.changed_by[kernel_name]}")
                continue
            kernel = code.kernels.get(kernel_name)
            if kernel is None:
                why.append(f"{kernel_name}: no IR (its text is not the lowering's output)")
                continue
            try:
                new = rewrite(ctx, kernel)
            except NotApplicable as reason:
                why.append(f"{kernel_name}: {reason}")
                continue
            code = code.with_kernel(new)
            changed = True
        if not changed:
            raise NotApplicable("; ".join(why) or "no kernel")
        return code

    return Transform(name, what, apply, rewrite=rewrite, **options)
