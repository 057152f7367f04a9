"""CUB's block- and warp-wide collectives in device code, rewritten before the lowering into
`__device__` helpers made of what it runs faithfully (coop_groups.py applies the rewrites):

- `BlockReduce(temp).Sum(v)`, `.Sum(v, n)`, `.Reduce(v, op)`, `.Reduce(v, op, n)` ->
  `cudacpu_cub_block_reduce<T>(v, op, n)`: every thread writes its value to a shared slot, the
  first thread combines the first n slots in thread order, and every thread reads the result
  (CUB defines it for thread 0 only); of an array of items per thread, each thread's first.
- `BlockScan(temp).ExclusiveSum(in, out)`, `InclusiveSum`, `ExclusiveScan(in, out, init, op)`,
  `ExclusiveScan(in, out, op)`, `InclusiveScan(in, out, op)`, each with an optional block
  aggregate -> `out = cudacpu_cub_block_scan<T>(in, op, init, exclusive, seeded)`, and the
  aggregate from `cudacpu_cub_block_reduce` (of the inputs, without the initial value, as CUB);
  on arrays of items per thread, each thread scans its own after the scan of the threads' totals.
- `BlockLoad(temp).Load(in, items[, valid[, default]])`, `BlockStore(temp).Store(out, items[, valid])`
  -> each thread's loop over its items, in the blocked arrangement (striped for `*_STRIPED`).
- `WarpReduce(temp).Sum(v)`, `.Reduce(v, op)` -> a butterfly of `__shfl_xor_sync` over the
  logical warp (every lane gets the result); `WarpScan`'s scans, as BlockScan's, -> a scan of
  `__shfl_up_sync` steps, its aggregate from the butterfly.

T is the class's first template argument as written. What stays of the objects (the class, its
TempStorage, the constructor) is declared by the CPU runtime's cub/block/block_reduce.cuh.
A scan of arrays of items per thread with the aggregate, and a warp reduction over fewer valid
lanes, are not rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import clang.cindex as ci

from . import frontend as fe

K = ci.CursorKind
MARKERS = {"BlockReduce", "BlockScan", "WarpReduce", "WarpScan", "BlockLoad", "BlockStore"}
_CLASS = re.compile(r"^(?:const\s+)?(?:::)?(?:cub::)?(BlockReduce|BlockScan|WarpReduce|WarpScan|BlockLoad|BlockStore)\s*<")
_ALL = "0x7fffffff"
_EVERY_ITEM = "0x7fffffffffffffffLL"

BLOCK_REDUCE = "cudacpu_cub_block_reduce"
BLOCK_SCAN = "cudacpu_cub_block_scan"
WARP_REDUCE = "cudacpu_cub_warp_reduce"
WARP_SCAN = "cudacpu_cub_warp_scan"
BLOCK_SCAN_ITEMS = "cudacpu_cub_block_scan_items"
THREAD_REDUCE = "cudacpu_cub_thread_reduce"
BLOCK_LOAD = "cudacpu_cub_block_load"
BLOCK_STORE = "cudacpu_cub_block_store"
# Thread t's item i in a blocked arrangement (BLOCK_LOAD_DIRECT, _VECTORIZE, _TRANSPOSE, ...), or a
# striped one (BLOCK_LOAD_STRIPED)
_ITEM = (f"const unsigned int t = {fe.LINEAR_THREAD}; "
         f"const long long at = striped ? (long long)i * {fe.BLOCK_THREADS} + t : (long long)t * N + i; ")
_SLOTS = (f"__shared__ T cudacpu_slots[1024]; __shared__ T cudacpu_total; "
          f"const unsigned int t = {fe.LINEAR_THREAD}, n = {fe.BLOCK_THREADS}; cudacpu_slots[t] = v; __syncthreads(); ")
HELPERS = {
    BLOCK_REDUCE: (
        f"template <class T, class Op> __device__ __forceinline__ T {BLOCK_REDUCE}(T v, Op op, int valid) {{ {_SLOTS}"
        "if (t == 0u) { T acc = cudacpu_slots[0]; "
        "for (unsigned int i = 1u; i < n && i < (unsigned int)valid; ++i) acc = op(acc, cudacpu_slots[i]); "
        "cudacpu_total = acc; } __syncthreads(); T r = cudacpu_total; __syncthreads(); return r; }"),
    BLOCK_SCAN: (
        f"template <class T, class Op> __device__ __forceinline__ T {BLOCK_SCAN}(T v, Op op, T init, bool exclusive, "
        f"bool seeded) {{ {_SLOTS}"
        "if (t == 0u) { T total = cudacpu_slots[0], carry = init; for (unsigned int i = 0u; i < n; ++i) { "
        "T x = cudacpu_slots[i]; if (i > 0u) total = op(total, x); "
        "if (exclusive) { cudacpu_slots[i] = carry; carry = (i == 0u && !seeded) ? x : op(carry, x); } "
        "else cudacpu_slots[i] = total; } } "
        "__syncthreads(); T r = cudacpu_slots[t]; __syncthreads(); return r; }"),
    WARP_REDUCE: (
        f"template <unsigned int N, class T, class Op> __device__ __forceinline__ T {WARP_REDUCE}(T v, Op op) {{ "
        "for (unsigned int o = N / 2u; o > 0u; o /= 2u) { T w = __shfl_xor_sync(0xffffffffu, v, (int)o, (int)N); "
        "v = op(v, w); } return v; }"),
    WARP_SCAN: (
        f"template <unsigned int N, class T, class Op> __device__ __forceinline__ T {WARP_SCAN}(T v, Op op, T init, "
        f"bool exclusive, bool seeded) {{ const unsigned int lane = {fe.LINEAR_THREAD} % N; "
        "for (unsigned int o = 1u; o < N; o *= 2u) { T w = __shfl_up_sync(0xffffffffu, v, o, (int)N); "
        "if (lane >= o) v = op(w, v); } "
        "T before = __shfl_up_sync(0xffffffffu, v, 1u, (int)N); "
        "return !exclusive ? v : lane == 0u ? init : seeded ? op(init, before) : before; }"),
    BLOCK_SCAN_ITEMS: (  # each thread's items in turn, after the scan of what the threads before it hold
        f"template <int N, class T, class Op> __device__ __forceinline__ void {BLOCK_SCAN_ITEMS}(T (&in)[N], "
        "T (&out)[N], Op op, T init, bool exclusive, bool seeded) { T total = in[0]; "
        "for (int i = 1; i < N; ++i) total = op(total, in[i]); "
        f"T carry = {BLOCK_SCAN}<T>(total, op, init, true, seeded); bool has = seeded || {fe.LINEAR_THREAD} != 0u; "
        "for (int i = 0; i < N; ++i) { T x = in[i]; if (exclusive) out[i] = has ? carry : x; "
        "carry = has ? op(carry, x) : x; has = true; if (!exclusive) out[i] = carry; } }"),
    THREAD_REDUCE: (
        f"template <int N, class T, class Op> __device__ __forceinline__ T {THREAD_REDUCE}(T (&in)[N], Op op) {{ "
        "T acc = in[0]; for (int i = 1; i < N; ++i) acc = op(acc, in[i]); return acc; }"),
    BLOCK_LOAD: (
        f"template <int N, class T, class It, class D> __device__ __forceinline__ void {BLOCK_LOAD}(It in, "
        "T (&items)[N], bool striped, long long valid, bool fill, D oob) { for (int i = 0; i < N; ++i) { "
        f"{_ITEM}if (at < valid) items[i] = in[at]; else if (fill) items[i] = static_cast<T>(oob); }} }}"),
    BLOCK_STORE: (
        f"template <int N, class T, class It> __device__ __forceinline__ void {BLOCK_STORE}(It out, T (&items)[N], "
        f"bool striped, long long valid) {{ for (int i = 0; i < N; ++i) {{ {_ITEM}if (at < valid) out[at] = items[i]; }} }}"),
}


@dataclass(frozen=True)
class Collective:
    helpers: tuple[str, ...]  # names in HELPERS the rewritten call uses, each after those it calls
    text: Callable[[], str]  # the call rewritten (rendered once every rewrite is known)


def collective_class(t: ci.Type) -> tuple[str, list[str]] | None:
    """(class name, its template arguments as written) of the CUB collective a type is, through typedefs."""
    for _ in range(8):
        if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
            t = t.get_pointee()
        for spelling in (t.get_canonical().spelling, t.spelling):
            if (m := _CLASS.match(spelling)) and "type-parameter" not in spelling:
                return m[1], fe.template_args(spelling)
        decl = t.get_declaration()
        if decl is None or decl.kind not in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL):
            return None
        t = decl.underlying_typedef_type
    return None


def cub_collective(method: str, obj: ci.Cursor, args: list[ci.Cursor],
                   render: Callable[[ci.Cursor], str]) -> Collective | None:
    """The rewrite of `obj.method(args)` where `obj` is a CUB block or warp collective; None otherwise."""
    found = collective_class(obj.type)
    if found is None or not found[1]:
        return None
    rewritten = _rewrite(found, method, args, render)
    if rewritten is None:
        return None
    # the object's type stays named, unevaluated, so that its typedef is used where it is declared
    return Collective(rewritten.helpers, lambda: f"((void)sizeof({obj.type.spelling}), {rewritten.text()})")


def _rewrite(found: tuple[str, list[str]], method: str, args: list[ci.Cursor],
             render: Callable[[ci.Cursor], str]) -> Collective | None:
    cls, targs = found
    value = targs[0]
    n = len(args)

    items = args and args[0].type.get_canonical().kind == ci.TypeKind.CONSTANTARRAY  # per thread

    def reduce(op: str, valid: str = _ALL) -> str:
        own = f"{THREAD_REDUCE}({render(args[0])}, {op})" if items else render(args[0])
        return f"{BLOCK_REDUCE}<{value}>({own}, {op}, {valid})"

    if cls == "BlockReduce":
        if items and n != 1 + (method == "Reduce"):  # no valid count for items
            return None
        helpers = (BLOCK_REDUCE, THREAD_REDUCE) if items else (BLOCK_REDUCE,)
        if method == "Sum" and n in (1, 2):
            return Collective(helpers, lambda: reduce("cub::Sum()", render(args[1]) if n == 2 else _ALL))
        if method == "Reduce" and n in (2, 3):
            return Collective(helpers, lambda: reduce(render(args[1]), render(args[2]) if n == 3 else _ALL))
        return None
    if cls in ("BlockLoad", "BlockStore"):  # moves between memory and each thread's items: no barrier needed
        striped = "true" if len(targs) > 3 and (targs[3].endswith("STRIPED") or targs[3] == "1") else "false"
        if cls == "BlockLoad" and method == "Load" and 2 <= n <= 4:
            return Collective((BLOCK_LOAD,), lambda: (
                f"{BLOCK_LOAD}({render(args[0])}, {render(args[1])}, {striped}, "
                f"{render(args[2]) if n > 2 else _EVERY_ITEM}, {'true' if n == 4 else 'false'}, "
                f"{render(args[3]) if n == 4 else value + '()'})"))
        if cls == "BlockStore" and method == "Store" and n in (2, 3):
            return Collective((BLOCK_STORE,), lambda: f"{BLOCK_STORE}({render(args[0])}, {render(args[1])}, {striped}, "
                                                      f"{render(args[2]) if n == 3 else _EVERY_ITEM})")
        return None
    width = targs[1] if len(targs) > 1 else "32"  # a warp collective's logical warp

    def warp_reduce(op: str) -> str:
        return f"{WARP_REDUCE}<{width}, {value}>({render(args[0])}, {op})"

    if cls == "WarpReduce":
        if (method, n) in (("Sum", 1), ("Reduce", 2)):
            return Collective((WARP_REDUCE,), lambda: warp_reduce("cub::Sum()" if method == "Sum" else render(args[1])))
        return None
    # BlockScan and WarpScan: (op, init, exclusive, seeded) and where the aggregate argument is, by method and arity
    forms = {("ExclusiveSum", 2): ("cub::Sum()", f"{value}()", True, True, None),
             ("ExclusiveSum", 3): ("cub::Sum()", f"{value}()", True, True, 2),
             ("InclusiveSum", 2): ("cub::Sum()", f"{value}()", False, True, None),
             ("InclusiveSum", 3): ("cub::Sum()", f"{value}()", False, True, 2),
             ("ExclusiveScan", 4): (3, 2, True, True, None),
             ("ExclusiveScan", 5): (3, 2, True, True, 4),
             ("ExclusiveScan", 3): (2, None, True, False, None),
             ("InclusiveScan", 3): (2, None, False, True, None),
             ("InclusiveScan", 4): (2, None, False, True, 3)}
    form = forms.get((method, n))
    if form is None:
        return None
    op_at, init_at, exclusive, seeded, aggregate_at = form
    block = cls == "BlockScan"
    if block and items:
        if aggregate_at is not None:
            return None

        def scan_items() -> str:
            op = render(args[op_at]) if isinstance(op_at, int) else op_at
            init = render(args[init_at]) if isinstance(init_at, int) else init_at or f"{value}()"
            return (f"{BLOCK_SCAN_ITEMS}({render(args[0])}, {render(args[1])}, {op}, static_cast<{value}>({init}), "
                    f"{str(exclusive).lower()}, {str(seeded).lower()})")

        return Collective((BLOCK_SCAN, BLOCK_SCAN_ITEMS), scan_items)  # the one it calls first
    helper = f"{BLOCK_SCAN}<{value}>" if block else f"{WARP_SCAN}<{width}, {value}>"

    def scan() -> str:
        op = render(args[op_at]) if isinstance(op_at, int) else op_at
        init = render(args[init_at]) if isinstance(init_at, int) else init_at or f"{value}({render(args[0])})"
        text = (f"({render(args[1])}) = {helper}({render(args[0])}, {op}, {init}, "
                f"{str(exclusive).lower()}, {str(seeded).lower()})")
        if aggregate_at is not None:  # first: the output may be the input
            text = f"({render(args[aggregate_at])}) = {reduce(op) if block else warp_reduce(op)}, {text}"
        return text

    helpers = (BLOCK_SCAN, BLOCK_REDUCE) if block else (WARP_SCAN, WARP_REDUCE)
    return Collective(helpers if aggregate_at is not None else helpers[:1], scan)
