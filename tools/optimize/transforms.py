"""Transformations of a lowered translation unit. Each takes the current code and returns a new
version, or None where it does not apply (the shape is not the one it knows, or the kernel's
launches make it unsafe). None of them is trusted: the search checks every result against the
task's reference before timing it.

Everything a transformation emits is derived from the kernel's own text (its loop headers,
bounds, bodies) and the task's launches, never from the task's name.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tools.spec import Task

from . import code as C
from .guards import RANGED_TX_LOOP, guarded_region, hoisted_guards, kernel_shapes

DIMS = "xyz"


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


# ---------------------------------------------------------------------------------------
# grid-stride loops -> one flat parallel loop over the whole index space

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
    for d in DIMS:
        prods = (f"blockIdx.{d}*blockDim.{d}", f"blockDim.{d}*blockIdx.{d}")
        if any(e in (f"{p}+threadIdx.{d}", f"threadIdx.{d}+{p}", f"({p})+threadIdx.{d}", f"threadIdx.{d}+({p})") for p in prods):
            return d
    return None


def _grid_stride_dim(expr: str) -> str | None:
    e = _norm(expr)
    for d in DIMS:
        if e in (f"gridDim.{d}*blockDim.{d}", f"blockDim.{d}*gridDim.{d}"):
            return d
    return None


def _writes(name: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w.])(?:\+\+|--)\s*{name}\b|(?<![\w.]){name}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                          rf"(?<![\w.]){name}\s*(?:\+\+|--)", text))


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
    changed = False
    for k in reversed(C.kernels(code)):
        new = _grid_stride_kernel(ctx, code, k)
        if new is not None:
            code = C.replace_span(code, k.start, k.end, new)
            changed = True
    return code if changed else None


def _grid_stride_kernel(ctx: Context, code: str, k: C.KernelText) -> str | None:
    body = k.body(code)
    if "cudacpu::" in body or "__shared__" in body:
        return None
    spans = C.thread_loop_bodies(body)
    if len(spans) != 1:
        return None
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
    if any(_writes(loop.var, inner_body) for loop in loops):
        return None
    for i, loop in enumerate(loops):
        bound_names = set(re.findall(r"[A-Za-z_]\w*", loop.bound)) - {"gridDim", "blockDim", "x", "y", "z"}
        if any(_writes(n, inner_body) for n in bound_names) or _COORDS.search(loop.bound):
            return None
        if any(re.search(rf"\b{outer.var}\b", loop.bound) for outer in loops[:i]):
            return None  # a bound that depends on an outer index: no collapse
    uncovered = [d for d in DIMS if d not in covered]
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
        for i, d in enumerate(DIMS):
            if d not in covered and (grid[i] != 1 or block[i] != 1):
                return False
    return True


# ---------------------------------------------------------------------------------------
# restrict on pointer parameters that no two arguments of a launch alias

def restrict_pointers(ctx: Context, code: str) -> str | None:
    buffers = {b.name for b in ctx.task.buffers}
    changed = False
    for k in reversed(C.kernels(code)):
        params = C.split_params(k.params)
        launches = ctx.launches_of(k.name)
        if not launches or any(len(launch.args) != len(params) for launch in launches):
            continue
        pointer_idx = [i for i, p in enumerate(params) if p.count("*") == 1 and "__restrict" not in p and p.rstrip().split()[-1]
                       and re.search(r"\*\s*\w+$", p)]
        if not pointer_idx or not _distinct_buffers(launches, pointer_idx, buffers):
            continue
        new_params = list(params)
        for i in pointer_idx:
            new_params[i] = re.sub(r"\*\s*(\w+)$", r"* __restrict__ \1", params[i])
        code = C.replace_span(code, k.params_start, k.params_start + len(k.params), "".join(", " + p for p in new_params))
        changed = True
    return code if changed else None


def _distinct_buffers(launches, pointer_idx: list[int], buffers: set[str]) -> bool:
    for launch in launches:
        args = [launch.args[i] for i in pointer_idx]
        if not all(isinstance(a, str) and a in buffers for a in args) or len(set(args)) != len(args):
            return False
    return True


# ---------------------------------------------------------------------------------------
# barrier-free kernels: threads of a block in parallel when blocks are too few

def threads_parallel(ctx: Context, code: str) -> str | None:
    """With fewer blocks than cores, a barrier-free kernel without block state runs its thread
    loop as the parallel (and simd) loop instead of the block loop."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        if "cudacpu::" in body or "__shared__" in body or "tools.optimize" in body or len(C.thread_loop_bodies(body)) != 1:
            continue
        if body.count("#pragma omp parallel for collapse(3) schedule(static)") != 1 or body.count("#pragma omp simd") != 1:
            continue
        launches = ctx.launches_of(k.name)
        if not launches or any(_blocks(launch) >= _cores() for launch in launches):
            continue
        new = body.replace("#pragma omp parallel for collapse(3) schedule(static)", "// blocks in order: too few to share", 1)
        new = new.replace("#pragma omp simd", "#pragma omp parallel for simd schedule(static)", 1)
        code = C.with_body(code, k, new)
        changed = True
    return code if changed else None


def _blocks(launch) -> int:
    (gx, gy, gz), _ = launch.dims()
    return gx * gy * gz


def _cores() -> int:
    import os

    return os.cpu_count() or 1


# ---------------------------------------------------------------------------------------
# warp exchanges where every lane always writes: no round stamps

DENSE_EXCHANGE = (Path(__file__).parent / "dense_exchange.h").read_text()
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
    return C.with_support(code, DENSE_EXCHANGE)


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


# ---------------------------------------------------------------------------------------
# thread loops whose body is guarded: only the admitted threads, with no condition left

GUARD_RANGE = """// ---- tools.optimize: thread ranges of guarded regions ----------------------------------------
#ifndef CUDAOPT_GUARD_RANGE
#define CUDAOPT_GUARD_RANGE
#include <type_traits>
namespace cudaopt {
// First t in [0, n) where a predicate that is false, then true (monotone in t) holds; n if none.
template <class Pred>
inline unsigned first_true(unsigned n, Pred pred) {
  unsigned lo = 0, hi = n;
  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;
    if (pred(mid)) hi = mid; else lo = mid + 1;
  }
  return lo;
}
// The same where `guess` (the comparison's other side, for a guard on the thread index itself such as
// `tid < s`) is likely the answer: two calls of the predicate confirm it, else the binary search.
template <class T, class Pred>
inline unsigned first_true_near(unsigned n, T guess, Pred pred) {
  if constexpr (std::is_integral_v<T>) {
    const unsigned g = guess < T(0) ? 0u : static_cast<unsigned long long>(guess) > n ? n : static_cast<unsigned>(guess);
    if ((g == 0 || !pred(g - 1)) && (g == n || pred(g))) return g;
  }
  return first_true(n, pred);
}
inline unsigned at_least(unsigned a, unsigned b) { return a > b ? a : b; }
inline unsigned at_most(unsigned a, unsigned b) { return a < b ? a : b; }
}  // namespace cudaopt
#endif
"""

_TY_LOOP = re.compile(r"(?P<ind>[ \t]*)for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\n(?P<simd>[ \t]*#pragma omp simd\n)?"
                      r"(?P<pind>[ \t]*)for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{")


def hoist_guards(ctx: Context, code: str) -> str | None:
    """Guards that a counted loop in a thread loop re-tests every trip, moved out of it and joined
    with the same guard before it (guards.hoisted_guards): the region guarded_thread_range knows."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        new_body = body
        for open_index, close in reversed(C.thread_loop_bodies(body)):
            hoisted = hoisted_guards(body[open_index + 1:close])
            if hoisted is not None:
                new_body = new_body[:open_index + 1] + hoisted + new_body[close:]
        if new_body != body:
            code, changed = C.with_body(code, k, new_body), True
    return code if changed else None


def guarded_thread_range(ctx: Context, code: str) -> str | None:
    """A thread region `decls; if (G) S` (or `if (G) continue; S`) whose guard is proven to
    admit one contiguous range of threadIdx.x (tools/optimize/guards.py) runs over that range
    only, found per block by binary search on the guard, with the condition gone from the loop
    (vectorized where the region was: a loop without `omp simd` stays without it)."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        params = kernel_shapes(code, k)
        new, pos, edits = [], 0, 0
        for m in _TY_LOOP.finditer(body):
            close = C.matching_brace(body, m.end() - 1)
            region = guarded_region(body[m.end():close], params)
            if region is None:
                continue
            ind, pind = m["ind"], m["pind"]
            inner = pind + "    "
            loop = "\n".join([f"{ind}for (unsigned int ty = 0; ty < blockDim.y; ++ty) {{",
                              *(pind + line for line in region.bounds),
                              *([f"{pind}#pragma omp simd"] if m["simd"] else []),
                              pind + RANGED_TX_LOOP,
                              *(inner + line for line in region.body.split("\n")),
                              f"{pind}}}", f"{ind}}}"])
            new.append(body[pos:m.start()] + loop)
            pos, edits = close + 1, edits + 1
        if edits:
            new.append(body[pos:])
            code = C.with_body(code, k, "".join(new))
            changed = True
    if not changed:
        return None
    if "CUDAOPT_GUARD_RANGE" in code:
        return code
    return C.with_support(code, GUARD_RANGE)


# ---------------------------------------------------------------------------------------
# launch extents as compile-time constants

def launch_constants(ctx: Context, code: str) -> str | None:
    """Where the task launches a kernel with one grid and block shape, those extents become
    `constexpr` in the kernel: thread loops get known trip counts (unrolled, vectorized, removed
    when 1), index arithmetic divides by constants. Another shape at run time stops with a message."""
    changed = False
    for k in reversed(C.kernels(code)):
        shapes = {launch.dims() for launch in ctx.launches_of(k.name)}
        if len(shapes) != 1:
            continue
        (grid, block), = shapes
        head = code[k.start:k.body_open]
        if "dim3 gridDim, dim3 blockDim," not in head:
            continue
        head = head.replace("dim3 gridDim, dim3 blockDim,", "dim3 gridDim_arg, dim3 blockDim_arg,", 1)
        dims = ", ".join(str(v) for v in grid), ", ".join(str(v) for v in block)
        guard = " || ".join(f"{n}_arg.{d} != {n}.{d}" for n in ("gridDim", "blockDim") for d in DIMS)
        prologue = (f"\n    constexpr cudaopt::Extent<{dims[0]}> gridDim{{}}; constexpr cudaopt::Extent<{dims[1]}> blockDim{{}};"
                    f"  // tools.optimize: the task's only launch shape\n"
                    f"    if ({guard})\n"
                    f"        cudacpu::unsupported(\"{k.name}: optimized for the task's launch shape only\");")
        code = code[:k.start] + head + "{" + prologue + code[k.body_open + 1:]
        changed = True
    if changed and "struct Extent {" not in code:
        code = C.with_support(code, EXTENT)
    return code if changed else None


EXTENT = """// ---- tools.optimize: launch extents as compile-time constants -----------------------------------
// Static members are constants in every scope. A `constexpr dim3` local is an object, which an
// OpenMP region shares by reference: there its members are loads, the thread loops' trip counts
// unknown and `blockIdx.x * blockDim.x + threadIdx.x` a gather (stencil_1d_shared 4x slower).
namespace cudaopt {
template <unsigned int X, unsigned int Y, unsigned int Z>
struct Extent {
  static constexpr unsigned int x = X, y = Y, z = Z;
  operator dim3() const { return dim3(X, Y, Z); }
};
}  // namespace cudaopt
"""


_SIMD_TX = re.compile(r"(?P<ty>[ \t]*for \(unsigned int ty = 0; ty < blockDim\.y; \+\+ty\)\n)(?P<ind>[ \t]*)#pragma omp simd\n")


def simd_on_y(ctx: Context, code: str) -> str | None:
    """Blocks of shape (1, n, 1): the simd loop of a region is the y loop, not the 1-trip x loop."""
    changed = False
    for k in reversed(C.kernels(code)):
        launches = ctx.launches_of(k.name)
        if not launches or any(launch.dims()[1][0] != 1 or launch.dims()[1][1] < 4 for launch in launches):
            continue
        body = k.body(code)
        new = _SIMD_TX.sub(lambda m: m["ind"][:-4] + "#pragma omp simd\n" + m["ty"], body)
        if new != body:
            code = C.with_body(code, k, new)
            changed = True
    return code if changed else None


# ---------------------------------------------------------------------------------------
# schedules and compiler options carried by the code itself

# ---------------------------------------------------------------------------------------
# min/max/fminf/fmaxf as selects g++ can vectorize (the library calls cannot be, without fast-math)

INLINE_MINMAX = """// ---- tools.optimize: min/max as vectorizable selects with the same NaN rules --------------------
// fmax(x, y): y when x is NaN, x when y is NaN, else the larger (fmin likewise). Only the sign
// of a zero result may differ from the library's (max(-0, +0)), which compares equal.
namespace cudacpu_kernels {
template <class A, class B>
inline auto max(A a, B b) -> decltype(::max(a, b)) {
  using R = decltype(::max(a, b));
  if constexpr (std::is_floating_point<R>::value) {
    R x = static_cast<R>(a), y = static_cast<R>(b);
    return (y != y || x > y) ? x : y;
  } else {
    return ::max(a, b);
  }
}
template <class A, class B>
inline auto min(A a, B b) -> decltype(::min(a, b)) {
  using R = decltype(::min(a, b));
  if constexpr (std::is_floating_point<R>::value) {
    R x = static_cast<R>(a), y = static_cast<R>(b);
    return (y != y || x < y) ? x : y;
  } else {
    return ::min(a, b);
  }
}
inline float fmaxf(float x, float y) { return (y != y || x > y) ? x : y; }
inline float fminf(float x, float y) { return (y != y || x < y) ? x : y; }
}  // namespace cudacpu_kernels
"""


def inline_minmax(ctx: Context, code: str) -> str | None:
    """Kernels that call min/max/fminf/fmaxf get exact inline versions (see INLINE_MINMAX)."""
    kernels = C.kernels(code)
    if not any(re.search(r"(?<![\w.:])(min|max|fminf|fmaxf)\s*\(", C.strip_comments(k.body(code))) for k in kernels):
        return None
    return None if "tools.optimize: min/max" in code else C.with_support(code, INLINE_MINMAX)


SMALL_GRID_THREADS = 1 << 15  # below this many CUDA threads, waking a team costs more than it saves
_PARALLEL_FOR = re.compile(r"^(?P<ind>[ \t]*)#pragma omp parallel for\b[^\n]*\n", re.M)
_PARALLEL_REGION = re.compile(r"^(?P<ind>[ \t]*)#pragma omp parallel[ \t]*\n", re.M)
_TOTAL_THREADS = "1ull * gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z"
_SMALL = "// tools.optimize: small launches on the calling thread"


def serial_small_grids(ctx: Context, code: str) -> str | None:
    """Small launches run on the calling thread without entering OpenMP at all: the parallel
    loop nest gets a serial twin taken below SMALL_GRID_THREADS CUDA threads (decided at run
    time, so large launches of the same kernel still spread over the cores). A parallel region
    with per-thread state gets an OpenMP `if` clause instead."""
    return _serial_below(ctx, code, lambda threads: SMALL_GRID_THREADS if max(threads) < SMALL_GRID_THREADS else None)


def serial_launches(ctx: Context, code: str) -> str | None:
    """The task's launches larger than SMALL_GRID_THREADS run on the calling thread too: where
    the cores share what bounds the kernel (memory bandwidth, one physical core behind two
    logical ones), waking the team costs more than the second thread saves, which only timing
    tells. Launches larger than the task's own still run in parallel."""
    return _serial_below(ctx, code, lambda threads: max(threads) + 1 if max(threads) >= SMALL_GRID_THREADS else None)


def _serial_below(ctx: Context, code: str, threshold: Callable[[list[int]], int | None]) -> str | None:
    """Each kernel's parallel loop nest with a serial twin taken below threshold(the CUDA threads
    of the kernel's launches) CUDA threads; kernels where it is None are left alone."""
    changed = False
    for k in reversed(C.kernels(code)):
        launches = ctx.launches_of(k.name)
        below = threshold([_threads(launch) for launch in launches]) if launches else None
        body = k.body(code)
        if below is None or _SMALL in body:
            continue
        new = _serial_twin(body, below)
        if new is None:
            new = _PARALLEL_REGION.sub(lambda m: f"{m[0][:-1]} if({_TOTAL_THREADS} >= {below}ull)"
                                       f"  {_SMALL}\n", body, count=1)
        if new != body:
            code = C.with_body(code, k, new)
            changed = True
    return code if changed else None


def _serial_twin(body: str, below: int) -> str | None:
    m = _PARALLEL_FOR.search(body)
    if not m:
        return None
    end = _for_statement_end(body, m.end())
    if end is None:
        return None
    nest, ind = body[m.end():end], m["ind"]
    indented = "\n".join("    " + line if line.strip() else line for line in nest.split("\n"))
    pragma = body[m.start():m.end()]
    # no other thread runs beside the serial twin: its atomics are plain loads and stores
    plain = f"{ind}    CUDA_CPU_ONE_THREAD_ATOMICS  // tools.optimize: no other thread to race\n" if "atomic" in nest else ""
    text = (f"{ind}if ({_TOTAL_THREADS} < {below}ull) {{  {_SMALL}\n{plain}"
            f"{indented}\n{ind}}} else {{\n    {pragma}{indented}\n{ind}}}")
    return body[:m.start()] + text + body[end:]


_IF_CLAUSE = re.compile(rf" if\({re.escape(_TOTAL_THREADS)} >= \d+ull\)  {_SMALL}")
_TWIN = re.compile(rf"^(?P<ind>[ \t]*)if \({re.escape(_TOTAL_THREADS)} < \d+ull\) \{{  {_SMALL}\n", re.M)


def parallel_small_grids(ctx: Context, code: str) -> str | None:
    """Undo serial_small_grids (taken with specialize) where a small launch still has enough work
    for its cores: the parallel loop nest alone, its serial twin and the OpenMP `if` clause gone.
    The threshold of serial_small_grids counts CUDA threads, not their work, so the search decides."""
    new = _IF_CLAUSE.sub("", code)
    while m := _TWIN.search(new):
        serial_end = C.matching_brace(new, m.end() - len(_SMALL) - 4)
        else_open = new.find("{", serial_end + 1)
        if not re.fullmatch(r"\s*else\s*", new[serial_end + 1:else_open]):
            return None
        else_close = C.matching_brace(new, else_open)
        parallel = new[else_open + 1:else_close].rstrip().lstrip("\n")
        lines = [line[4:] if line.strip() and line.startswith(m["ind"] + "    ") else line for line in parallel.split("\n")]
        new = new[:m.start()] + "\n".join(lines) + new[else_close + 1:]
    return new if new != code else None


def _for_statement_end(text: str, pos: int) -> int | None:
    """End offset of the `for` statement (loops nested without braces included) starting at pos."""
    m = re.match(r"\s*for\s*\(", text[pos:])
    if not m:
        return None
    depth, i = 1, pos + m.end()
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    rest = text[i:]
    stripped = rest.lstrip()
    j = i + len(rest) - len(stripped)
    while stripped.startswith("#pragma"):  # a pragma between nested loops
        nl = text.find("\n", j)
        stripped = text[nl + 1:].lstrip()
        j = nl + 1 + len(text[nl + 1:]) - len(stripped)
    if stripped.startswith("{"):
        return C.matching_brace(text, j) + 1
    if stripped.startswith("for"):
        return _for_statement_end(text, j)
    end = C.statement_end(text[j:])
    return None if end is None else j + end + 1


def _threads(launch) -> int:
    (gx, gy, gz), (bx, by, bz) = launch.dims()
    return gx * gy * gz * bx * by * bz


def dynamic_schedule(ctx: Context, code: str) -> str | None:
    """Blocks of unequal work (guards, data-dependent loops) balance better when handed out."""
    new = code.replace("collapse(3) schedule(static)", "collapse(3) schedule(dynamic, 4)")
    return new if new != code else None


def unroll_loops(ctx: Context, code: str) -> str | None:
    return _with_pragma(code, '#pragma GCC optimize("unroll-loops")')


@functools.cache
def native_cpu() -> tuple[str, str] | None:
    """(arch, tune) that `g++ -march=native` resolves to on this machine; None without g++."""
    try:
        out = subprocess.run(["g++", "-march=native", "-Q", "--help=target"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    arch, tune = (re.search(rf"^\s*-m{o}=\s+(\S+)\s*$", out, re.M) for o in ("arch", "tune"))
    return (arch[1], tune[1]) if arch and tune else None


@functools.cache
def vector_bytes() -> int:
    """The widest SIMD registers `g++ -march=native` uses here: 64 (AVX-512), 32 (AVX) or 16."""
    try:
        macros = subprocess.run(["g++", "-march=native", "-dM", "-E", "-x", "c++", "/dev/null"], capture_output=True,
                                text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 16
    return 64 if "__AVX512F__" in macros else 32 if "__AVX__" in macros else 16


def tune_cpu(ctx: Context, code: str) -> str | None:
    """Where g++ knows this CPU's instruction set but not its model, `-march=native` tunes for a
    generic x86, and with AVX-512 its vectorizer then refuses loops that mix masked and plain loads
    (TVM's guarded reads: "no vectype for stmt"); tuning for the family -march=native chose lets
    them vectorize. Placed first in the translation unit: a function whose target options differ
    from an inline helper's cannot inline it."""
    cpu = native_cpu()
    if cpu is None or cpu[0] == cpu[1] or cpu[0] in ("x86-64", "native"):
        return None
    pragma = f'#pragma GCC target("tune={cpu[0]}")'
    return None if pragma in code else f"{pragma}  // tools.optimize: -march=native tunes for a generic CPU here\n{code}"


def fast_math(ctx: Context, code: str) -> str | None:
    """Only where the configuration allows it and the task's tolerance is loose enough."""
    tol = ctx.task.tolerance
    if not ctx.fast_math_ok or tol.rtol < 1e-4:
        return None
    return _with_pragma(code, '#pragma GCC optimize("fast-math")')


def reassociate(ctx: Context, code: str) -> str | None:
    """Floating-point sums and products in another order (one chain split into vector lanes), as
    TVM's own CPU references do with rfactor; NaN and infinity keep their rules (not -ffast-math).
    Only where the task's tolerance is loose enough; the check on fresh seeds decides."""
    if ctx.task.tolerance.rtol < 1e-4:
        return None
    return _with_pragma(code, '#pragma GCC optimize("associative-math", "no-signed-zeros", "no-trapping-math")')


def _with_pragma(code: str, pragma: str) -> str | None:
    if pragma in code:
        return None
    first = code.find("// CUDA kernel")
    if first < 0:
        first = code.find("namespace cudacpu_kernels")
    if first < 0:
        return None
    return code[:first] + pragma + "\n" + code[first:]


SPECIALIZE = ("dead_exit_flags", "hoist_guards", "guarded_thread_range", "launch_constants", "inline_minmax",
              "serial_small_grids", "restrict", "vector_math")


def specialize(ctx: Context, code: str, members: tuple[str, ...] = SPECIALIZE) -> str | None:
    """The transformations that pay off together more than one by one (a guard-free thread loop
    only vectorizes with the launch extents known and min/max as selects; a small launch only
    gains once the OpenMP call is gone) applied as one variant: every one of SPECIALIZE that applies."""
    by_name = {t.name: t for t in TRANSFORMS}
    applied = 0
    for name in members:
        try:
            new = by_name[name].apply(ctx, code)
        except (ValueError, IndexError):
            new = None
        if new is not None:
            code, applied = new, applied + 1
    return code if applied >= 2 else None


def specialize_parallel(ctx: Context, code: str) -> str | None:
    """specialize without serial_small_grids: tried where specialize was not kept (a launch with few
    threads but much work per thread loses its second core when run serially)."""
    return specialize(ctx, code, tuple(name for name in SPECIALIZE if name != "serial_small_grids"))


TRANSFORMS: list[Transform] = [  # in the order tried: structural changes first, flags last
    Transform("grid_stride_flat", "grid-stride loops as one flat parallel simd loop", grid_stride_flat),
    Transform("specialize", "launch extents as constants, guard-free thread ranges, min/max as selects, small launches "
              "serial, __restrict__, vector math where the tolerance allows, together", specialize),
    Transform("specialize_parallel", "launch extents as constants, guard-free thread ranges, min/max as selects, "
              "__restrict__, vector math where the tolerance allows, together (launches stay parallel)", specialize_parallel),
    Transform("parallel_small_grids", "small launches parallel again (their serial twin from specialize gone: "
              "enough work per thread for the cores)", parallel_small_grids),
    Transform("threads_parallel", "thread loop as the parallel loop (few blocks)", threads_parallel),
    Transform("inline_minmax", "min/max/fminf/fmaxf as vectorizable selects (same NaN rules)", inline_minmax),
    Transform("serial_small_grids", "small launches run on the calling thread (OpenMP if clause)", serial_small_grids),
    Transform("serial_launches", "the task's larger launches run on the calling thread too (where the second core "
              "does not pay for waking it)", serial_launches),
    Transform("dense_exchange", "warp exchanges without round stamps where every lane writes", dense_exchange),
    Transform("launch_constants", "the task's launch extents as compile-time constants", launch_constants),
    Transform("simd_on_y", "simd over threadIdx.y for blocks of shape (1, n, 1)", simd_on_y),
    Transform("restrict", "__restrict__ on non-aliased pointer parameters", restrict_pointers),
    Transform("unroll_loops", "-funroll-loops for the kernels", unroll_loops),
    Transform("tune_cpu", "tuned for the CPU family -march=native chose (its generic tuning refuses masked loads "
              "next to plain ones)", tune_cpu),
    Transform("hoist_guards", "guards re-tested in every trip of a loop tested once", hoist_guards),
    Transform("guarded_thread_range", "regions guarded by threadIdx.x run only the admitted threads", guarded_thread_range),
    Transform("dynamic_schedule", "blocks handed out dynamically", dynamic_schedule),
    Transform("reassociate", "floating-point reductions reassociated (tolerance allows it)", reassociate, tested=True),
    Transform("fast_math", "-ffast-math for the kernels (tolerance and configuration allow it)", fast_math, tested=True),
]


def _search_order(base: list[Transform]) -> list[Transform]:
    """The search's order: launches that are matrix products or block scans replaced whole
    (matrix_products.py, block_scans.py), the barrier/shuffle patterns applied together
    (sync_transforms.py), work every block repeats done once per worker (block_invariant.py),
    small blocks merged into SIMD lanes once their shuffles are plain loops (merge_blocks.py), then
    the structural steps that pay off most (flat grid-stride loops, specialize, the CPU's own
    tuning, exit flags nobody reads, work for a few threads split off (exit_flags.py,
    thread_fission.py), shared calls, index runs: index runs leave no thread loop for shared calls,
    shared calls leave index runs the other kernels; then 64-bit subscripts), then interior blocks without
    their bound guards (full_blocks.py; after specialize, whose guard-free thread ranges a kept
    interior copy would otherwise hide: hardsigmoid_1 4x instead of 27x) and loops striding over the
    threads run trip by trip across them, then those with the same trips in every thread (both
    stride_loops.py), a thread's own copies loaded and stored once around its branches and inner
    loops (owned_stores.py; after stride_loops, whose loops it would wrap), libm calls from the
    vector library (vector_math.py; after the steps that vectorize the loops calling them), thread
    loops that compute lane and warp numbers split into warps and lanes (warp_lanes.py; after the
    steps that look for the lowering's thread loops), butterfly steps over the pairs' lower threads
    (xor_pairs.py), then the barrier/shuffle patterns one by one, then the rest."""
    from .block_invariant import BLOCK_INVARIANT
    from .block_scans import BLOCK_SCANS
    from .exit_flags import DEAD_EXIT_FLAGS
    from .full_blocks import FULL_BLOCKS
    from .index_runs import INDEX_RUNS
    from .matrix_products import MATRIX_PRODUCTS
    from .memo_calls import MEMO_CALLS
    from .merge_blocks import MERGE_BLOCKS
    from .owned_stores import OWNED_STORES
    from .stride_loops import STRIDE_LOOPS, UNIFORM_LOOPS
    from .sync_transforms import SYNC_TRANSFORMS
    from .thread_fission import GUARDED_FISSION
    from .vector_math import VECTOR_MATH
    from .warp_lanes import WARP_LANES
    from .wide_indices import WIDE_INDICES
    from .xor_pairs import XOR_PAIRS

    together = [t for t in SYNC_TRANSFORMS if t.name == "sync_together"]
    singles = [t for t in SYNC_TRANSFORMS if t.name != "sync_together"]
    head = [t for t in base if t.name in ("grid_stride_flat", "specialize", "specialize_parallel", "parallel_small_grids",
                                          "tune_cpu")]
    head += [DEAD_EXIT_FLAGS, GUARDED_FISSION, MEMO_CALLS, INDEX_RUNS, WIDE_INDICES]
    return [MATRIX_PRODUCTS, BLOCK_SCANS] + together + [BLOCK_INVARIANT, MERGE_BLOCKS] + head + [
        FULL_BLOCKS, STRIDE_LOOPS, UNIFORM_LOOPS, OWNED_STORES, VECTOR_MATH, WARP_LANES, XOR_PAIRS] + singles + [t for t in base if t not in head]


TRANSFORMS[:] = _search_order(TRANSFORMS)
