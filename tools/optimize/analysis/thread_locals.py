"""A thread's local declarations in the lowering's thread loops: the standard ones every loop
starts with, and the pure ones (computed from the launch's coordinates, parameters the kernel
never changes and other pure locals), which a pass may repeat in another loop."""

from __future__ import annotations

import re

from .guards import Unproven, parse

DECLARATION = re.compile(r"(?P<type>(?:const\s+)?[A-Za-z_][\w:]*(?:\s*<[^<>;]*>)?(?:\s+(?:const\s+)?[A-Za-z_][\w:]*)*"
                         r"[\s*&]*?)\s*(?<=[\s*&])(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<init>[^;]+);", re.S)
LAUNCH_BUILTINS = {f"{v}.{d}" for v in ("threadIdx", "blockIdx", "blockDim", "gridDim") for d in "xyz"} | \
    {"tx", "ty", "tz", "bx", "by", "bz"}
# the thread's rank in its block, as stride_loops declares it
THREAD_RANK_DECL = "const unsigned int cudaopt_t = (tz * blockDim.y + ty) * blockDim.x + tx;"
# the thread loop's own declarations (the last one stride_loops', where a loop it made holds another)
STANDARD_DECLARATIONS = ("const uint3 threadIdx = make_uint3(tx, ty, tz);",
                         "const unsigned int tid = (tz * blockDim.y + ty) * blockDim.x + tx;",
                         "const std::size_t tid = (std::size_t(tz) * blockDim.y + ty) * blockDim.x + tx;", THREAD_RANK_DECL)


def is_pure(expr: str, allowed: set[str], pure: dict[str, str]) -> bool:
    """Whether expr is integer arithmetic (analysis/guards.py reads it) on allowed names and pure locals only."""
    try:
        parse(expr)
    except Unproven:
        return False
    names = set(re.findall(r"(?<![\w.])[A-Za-z_]\w*(?:\.[xyz])?", expr)) - {
        "unsigned", "int", "long", "short", "signed", "char", "size_t", "std", "bool", "const"}
    return all(n in allowed or n in pure or re.fullmatch(r"u?int(8|16|32|64)_t", n) for n in names)


def expanded(expr: str, pure: dict[str, str]) -> str:
    """expr with the pure locals it reads replaced by their initialisers (to see what it depends on)."""
    for _ in range(8):
        new = re.sub(r"(?<![\w.])([A-Za-z_]\w*)\b", lambda m: f"({DECLARATION.fullmatch(pure[m[1]])['init']})" if m[1] in pure
                     else m[0], expr)
        if new == expr:
            break
        expr = new
    return expr
