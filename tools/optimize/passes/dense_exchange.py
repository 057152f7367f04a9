"""dense_exchange: warp exchanges where every lane always writes, without round stamps."""

from __future__ import annotations

import re
from pathlib import Path

from ..analysis import code as C
from ..base import Context, Transform

DENSE_EXCHANGE_HEADER = (Path(__file__).parent / "dense_exchange.h").read_text()
_EXCHANGE_DECL = re.compile(r"cudacpu::WarpExchange (\w+)\(")
_SHUFFLES = {"shfl", "shfl_up", "shfl_down", "shfl_xor"}


def dense_exchange(ctx: Context, code: str) -> str | None:
    """A warp exchange whose every `put` is unconditional in a thread loop that skips no thread,
    and that only shuffles read, becomes a plain array (cudaopt::DenseExchange); the put loops
    then vectorize."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        new = body
        for name in _EXCHANGE_DECL.findall(body):
            if not _dense_ok(body, name):
                continue
            new = new.replace(f"cudacpu::WarpExchange {name}(", f"cudaopt::DenseExchange {name}(", 1)
        if new != body:
            new = _simd_put_loops(new)
            code = C.with_body(code, k, new)
            changed = True
    if not changed:
        return None
    return C.with_support(code, DENSE_EXCHANGE_HEADER)


def _dense_ok(body: str, name: str) -> bool:
    uses = re.findall(rf"cudacpu::(\w+)(?:<[^>]*>)?\(\s*{name}\b", body)
    if any(u not in _SHUFFLES for u in uses):
        return False  # ballots, votes, block counts read which lanes took part
    if re.search(rf"\b{name}\s*\.\s*(?!put\b|begin\b)\w+", body):
        return False
    spans = C.thread_loop_bodies(body)
    puts = 0
    for open_i, close_i in spans:
        loop = body[open_i + 1:close_i]
        if f"{name}.put<" not in loop:
            continue
        if re.search(r"\b(continue|break|return|goto)\b", loop) or not _all_at_top(loop, f"{name}.put<"):
            return False
        puts += loop.count(f"{name}.put<")
    return puts == body.count(f"{name}.put<") and puts > 0


def _all_at_top(loop: str, needle: str) -> bool:
    depth, i = 0, 0
    while i < len(loop):
        if loop.startswith(needle, i) and depth != 0:
            return False
        depth += loop[i] == "{"
        depth -= loop[i] == "}"
        i += 1
    return True


_PUT_LOOP = re.compile(r"(?P<ind>[ \t]*)(?P<loop>for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{)")


def _simd_put_loops(body: str) -> str:
    """Thread loops that now only store into the exchange carry no dependence between threads."""
    out, pos = [], 0
    for m in _PUT_LOOP.finditer(body):
        before = body[:m.start()].rstrip()
        close = C.matching_brace(body, m.end() - 1)
        loop = body[m.end():close]
        if before.endswith("#pragma omp simd") or ".put<" not in loop or "cudacpu::" in loop.replace("cudacpu::shfl", ""):
            continue
        if re.search(r"\b(atomic\w*|continue|break|return)\b", loop):
            continue
        out.append(body[pos:m.start()] + f"{m['ind']}#pragma omp simd\n")
        pos = m.start()
    out.append(body[pos:])
    return "".join(out)


DENSE_EXCHANGE = Transform("dense_exchange", "warp exchanges without round stamps where every lane writes", dense_exchange)
