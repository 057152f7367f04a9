"""Questions the IR passes ask of a lowered kernel's IR (tools/cuda/kernel_ir.py): its block
state, its regions, the text of its leaves."""

from __future__ import annotations

from typing import Iterator

from tools.cuda import kernel_ir as ir
from tools.cuda.printer import region_body, region_is_simd


def block_state(kernel: ir.Kernel) -> list[str]:
    """What the kernel keeps per block besides its threads' registers, in words (empty: nothing)."""
    found = []
    if kernel.per_thread:
        found.append("per-thread copies live across barriers")
    if kernel.exit_flags is not None:
        found.append("flags for threads that returned")
    if kernel.warp_exchange is not None:
        found.append("warp exchanges")
    if kernel.shared or kernel.dynamic_shared is not None:
        found.append("__shared__ memory")
    return found


def block_nodes(kernel: ir.Kernel) -> Iterator[object]:
    """Every block-level node, at any depth, in order."""

    def walk(nodes):
        for node in nodes:
            yield node
            if isinstance(node, ir.Scope):
                yield from walk(node.items)
            elif isinstance(node, ir.If):
                yield from walk(node.then)
                yield from walk(node.orelse or [])
            elif isinstance(node, ir.Loop):
                yield from walk(node.body)

    return walk(kernel.body)


def thread_loops(kernel: ir.Kernel) -> list[ir.Region]:
    """The regions that run a loop nest over the block's threads (a region with nothing to run
    prints only its hoisted declarations)."""
    return [r for r in kernel.regions() if region_body(r, kernel)]


def simd_regions(kernel: ir.Kernel) -> list[ir.Region]:
    """The thread loops that are `#pragma omp simd`."""
    return [r for r in thread_loops(kernel) if region_is_simd(r, kernel)]


def leaves(kernel: ir.Kernel) -> Iterator[str]:
    """The text of every leaf: the user's statements and expressions, with the lowering's renamings."""
    for node in block_nodes(kernel):
        if isinstance(node, ir.Region):
            yield from node.hoisted
            yield from node.recomputed
            for item in node.items:
                for name in ("text", "value", "condition", "target"):
                    if isinstance(getattr(item, name, None), str):
                        yield getattr(item, name)
        elif isinstance(node, ir.If):
            yield node.condition
        elif isinstance(node, ir.Loop):
            yield from (x for x in (node.init, node.condition, node.increment) if x)
