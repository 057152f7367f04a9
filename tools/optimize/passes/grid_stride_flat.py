"""grid_stride_flat: a kernel whose threads only run grid-stride loops, those loops as one flat
parallel (simd) loop over the whole index space."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analysis import code as C
from ..base import Context, NotApplicable, Transform

_NORM_CAST = re.compile(r"\((?:unsigned\s+)?(?:int|long|long\s+long|size_t|std::size_t)\)")
_FOR_HEAD = re.compile(r"for\s*\(\s*(?P<type>(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:long\s+long|int|long|size_t|std::size_t|"
                       r"unsigned|int64_t|uint32_t|int32_t))\s+(?P<var>\w+)\s*=\s*(?P<start>[^;]+);\s*(?P=var)\s*<\s*"
                       r"(?P<bound>[^;]+);\s*(?P=var)\s*\+=\s*(?P<stride>[^)]+)\)\s*", re.S)
_DECL = re.compile(r"^\s*(?:const\s+)?(?P<type>[\w:]+(?:\s+[\w:]+)*?)\s+(?P<name>\w+)\s*=\s*(?P<init>[^;]+);\s*$", re.S)
_COORDS = re.compile(r"\b(threadIdx|blockIdx)\b")


def _norm(expr: str) -> str:
    return re.sub(r"\s+", "", _NORM_CAST.sub("", expr)).strip("()") if expr else ""


def _global_index_dim(expr: str) -> str | None:
    """The dimension d when expr is blockIdx.d * blockDim.d + threadIdx.d (any operand order)."""
    e = _norm(expr)
    for d in C.DIMS:
        prods = (f"blockIdx.{d}*blockDim.{d}", f"blockDim.{d}*blockIdx.{d}")
        if any(e in (f"{p}+threadIdx.{d}", f"threadIdx.{d}+{p}", f"({p})+threadIdx.{d}", f"threadIdx.{d}+({p})") for p in prods):
            return d
    return None


def _grid_stride_dim(expr: str) -> str | None:
    e = _norm(expr)
    for d in C.DIMS:
        if e in (f"gridDim.{d}*blockDim.{d}", f"blockDim.{d}*gridDim.{d}"):
            return d
    return None


@dataclass
class _StrideLoop:
    type: str
    var: str
    bound: str
    dim: str
    body: str  # the loop's statement, braces included when written so


def _split_statements(text: str) -> list[str] | None:
    """Top-level statements of a block's text; None when a statement is compound (has braces)."""
    out, text = [], text.strip()
    while text:
        end = C.statement_end(text)
        if end is None:
            return None
        out.append(text[:end + 1].strip())
        text = text[end + 1:].strip()
    return out


def _parse_stride_loop(text: str, aliases: dict[str, str], strides: dict[str, str]) -> tuple[_StrideLoop, str] | None:
    """`for (T v = <global index>; v < bound; v += <grid stride>) stmt` at the start of text;
    returns the loop and what follows it."""
    m = _FOR_HEAD.match(text)
    if not m:
        return None
    start, stride = m["start"].strip(), m["stride"].strip()
    dim = aliases.get(start) or _global_index_dim(start)
    sdim = strides.get(stride) or _grid_stride_dim(stride)
    if dim is None or dim != sdim:
        return None
    rest = text[m.end():]
    if rest.startswith("{"):
        close = C.matching_brace(rest, 0)
        body, after = rest[:close + 1], rest[close + 1:]
    elif rest.startswith("for"):
        inner = _parse_stride_loop(rest, aliases, strides)
        if inner is None:
            return None
        loop, after = inner
        body = rest[:len(rest) - len(after)]
    else:
        semi = C.statement_end(rest)
        if semi is None:
            return None
        body, after = rest[:semi + 1], rest[semi + 1:]
    return _StrideLoop(m["type"], m["var"], m["bound"].strip(), dim, body), after


def _flatten_loops(text: str, aliases, strides) -> tuple[list[_StrideLoop], str] | None:
    """The chain of directly nested grid-stride loops at the start of text and the innermost body."""
    parsed = _parse_stride_loop(text, aliases, strides)
    if parsed is None:
        return None
    loop, after = parsed
    if after.strip():
        return None
    loops, body = [loop], loop.body
    inner_text = body[1:-1].strip() if body.startswith("{") else body
    nested = _parse_stride_loop(inner_text, aliases, strides) if inner_text.startswith("for") else None
    if nested is not None and not nested[1].strip() and nested[0].dim not in {loop.dim}:
        deeper = _flatten_loops(inner_text, aliases, strides)
        if deeper is not None:
            return loops + deeper[0], deeper[1]
    return loops, body


def grid_stride_flat(ctx: Context, code: str) -> str | None:
    """A kernel whose threads only run grid-stride loops covers each index once, whatever the
    grid: the loops become `for (v = 0; v < bound; ++v)` run once, in parallel (+simd)."""
    changed, why = False, []
    for k in reversed(C.kernels(code)):
        try:
            new = _grid_stride_kernel(ctx, code, k)
        except NotApplicable as reason:
            why.append(f"{k.name}: {reason}")
            continue
        if new is None:
            why.append(f"{k.name}: its threads do more than grid-stride loops over an index space that the launch covers")
            continue
        code = C.replace_span(code, k.start, k.end, new)
        changed = True
    if not changed:
        raise NotApplicable("; ".join(why) or "no kernel")
    return code


def _grid_stride_kernel(ctx: Context, code: str, k: C.KernelText) -> str | None:
    body = k.body(code)
    if "cudacpu::" in body or "__shared__" in body:
        raise NotApplicable("it uses shared memory, barriers or warp exchanges")
    spans = C.thread_loop_bodies(body)
    if len(spans) != 1:
        raise NotApplicable("its threads run in more than one region (barriers split them)")
    inner = C.strip_comments(body[spans[0][0] + 1:spans[0][1]])
    inner = inner.replace("const uint3 threadIdx = make_uint3(tx, ty, tz);", "", 1).strip()
    pre, loop_text = _split_pre(inner)
    if pre is None:
        return None
    aliases, strides, kept = {}, {}, []
    for stmt in pre:
        m = _DECL.match(stmt)
        if not m:
            return None
        if (d := _global_index_dim(m["init"])) is not None:
            aliases[m["name"]] = d
            continue
        if _COORDS.search(m["init"]):
            return None
        if (d := _grid_stride_dim(m["init"])) is not None:
            strides[m["name"]] = d
        kept.append(stmt)
    flat = _flatten_loops(loop_text, aliases, strides)
    if flat is None:
        return None
    loops, stmt = flat
    covered = {loop.dim for loop in loops}
    if not _launches_flat_outside(ctx, k.name, covered):
        return None
    inner_body = stmt
    if _COORDS.search(inner_body) or re.search(r"\b(return|break|goto)\b", inner_body):
        return None
    if any(re.search(rf"\b{a}\b", inner_body) for a in aliases):
        return None
    if any(C.writes(loop.var, inner_body) for loop in loops):
        return None
    for i, loop in enumerate(loops):
        bound_names = set(re.findall(r"[A-Za-z_]\w*", loop.bound)) - {"gridDim", "blockDim", "x", "y", "z"}
        if any(C.writes(n, inner_body) for n in bound_names) or _COORDS.search(loop.bound):
            return None
        if any(re.search(rf"\b{outer.var}\b", loop.bound) for outer in loops[:i]):
            return None  # a bound that depends on an outer index: no collapse
    uncovered = [d for d in C.DIMS if d not in covered]
    guard = " && ".join(f"gridDim.{d} == 1 && blockDim.{d} == 1" for d in uncovered) or "true"
    simd = "" if re.search(r"atomic|cudacpu::|\bprintf\b", inner_body) else " simd"
    collapse = f" collapse({len(loops)})" if len(loops) > 1 else ""
    lines = [f"    if ({guard}) {{  // tools.optimize: grid-stride loops as one flat loop over the index space"]
    lines += [f"        {s}" for s in kept]
    lines.append(f"        #pragma omp parallel for{simd}{collapse} schedule(static)")
    for depth, loop in enumerate(loops):
        lines.append("        " + "    " * depth + f"for ({loop.type} {loop.var} = 0; {loop.var} < {loop.bound}; ++{loop.var})")
    lines.append("        " + "    " * len(loops) + inner_body.strip())
    lines += ["        return;", "    }"]
    head = code[k.start:k.body_open + 1]
    return head + "\n" + "\n".join(lines) + body + "}"


def _split_pre(inner: str) -> tuple[list[str] | None, str]:
    i = inner.find("for")
    while i >= 0 and not _FOR_HEAD.match(inner, i):
        i = inner.find("for", i + 1)
    if i < 0:
        return None, ""
    pre = _split_statements(inner[:i])
    return pre, inner[i:]


def _launches_flat_outside(ctx: Context, kernel: str, covered: set[str]) -> bool:
    """The dimensions without a grid-stride loop must have one block and one thread, or each
    index would be visited once per such thread."""
    launches = ctx.launches_of(kernel)
    if not launches:
        return False
    for launch in launches:
        grid, block = launch.dims()
        for i, d in enumerate(C.DIMS):
            if d not in covered and (grid[i] != 1 or block[i] != 1):
                return False
    return True


GRID_STRIDE_FLAT = Transform("grid_stride_flat", "grid-stride loops as one flat parallel simd loop", grid_stride_flat)
