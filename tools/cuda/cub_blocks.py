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
- `BlockRadixSort(temp).Sort(keys[, values][, begin_bit[, end_bit]])`, `SortDescending`,
  `SortBlockedToStriped`, `SortDescendingBlockedToStriped` -> the tile in shared slots, ranked by
  thread 0 in stable 8-bit counting passes over CUB's radix order of the keys (sign bit flipped for
  signed keys; for floats the sign bit, or every bit of a negative one, -0.0 as +0.0), each thread
  reading back its items blocked or striped.
- `BlockExchange(temp).StripedToBlocked(in, out)` (or in place), `BlockedToStriped`,
  `WarpStripedToBlocked`, `BlockedToWarpStriped`, `ScatterToBlocked(in, out, ranks)`,
  `ScatterToStriped` -> each thread's items written to their places in a shared tile and, after a
  barrier, read back from the places of the other arrangement.
- `BlockDiscontinuity(temp).FlagHeads(flags, input, op[, tile_predecessor_item])`, `FlagTails`,
  `FlagHeadsAndTails` -> each thread's first and last items in shared slots, and each item's flag
  from op on it and its neighbour (the tile's first head and last tail set, or from the item given).
- `BlockAdjacentDifference(temp).SubtractLeft(in, out, op[, tile_predecessor_item])`,
  `SubtractLeftPartialTile(in, out, op, valid[, predecessor])`, `SubtractRight(in, out, op[,
  tile_successor_item])`, `SubtractRightPartialTile(in, out, op, valid)` -> the same shared slots
  of each thread's first and last items, each output op(item, neighbour) (as CUB, the tile's first
  or last item, and the items past the valid ones, copied where no neighbour is given).
- `BlockHistogram(temp).InitHistogram(hist)` -> each thread zeroes the bins of its stride (no barrier,
  as CUB); `.Composite(items, hist)` -> each item counted into its bin with an atomic add, then a
  barrier; `.Histo(items, hist)` -> the bins zeroed, a barrier, then Composite.
- `WarpReduce(temp).Sum(v)`, `.Reduce(v, op)` -> a butterfly of `__shfl_xor_sync` over the
  logical warp (every lane gets the result); `WarpScan`'s scans, as BlockScan's, -> a scan of
  `__shfl_up_sync` steps, its aggregate from the butterfly.

T is the class's first template argument as written. What stays of the objects (the class, its
TempStorage, the constructor) is declared by the CPU runtime's cub/block/*.cuh.
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
MARKERS = {"BlockReduce", "BlockScan", "WarpReduce", "WarpScan", "BlockLoad", "BlockStore", "BlockRadixSort",
           "BlockExchange", "BlockDiscontinuity", "BlockAdjacentDifference", "BlockHistogram"}
_CLASS = re.compile(r"^(?:const\s+)?(?:::)?(?:cub::)?(" + "|".join(sorted(MARKERS, key=len, reverse=True)) + r")\s*<")
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
RADIX_BITS = "cudacpu_cub_radix_bits"
BLOCK_RADIX_SORT = "cudacpu_cub_block_radix_sort"
BLOCK_EXCHANGE = "cudacpu_cub_block_exchange"
BLOCK_SCATTER = "cudacpu_cub_block_scatter"
BLOCK_FLAGS = "cudacpu_cub_block_flags"
BLOCK_DIFFERENCE = "cudacpu_cub_block_adjacent_difference"
HISTOGRAM_INIT = "cudacpu_cub_histogram_init"
HISTOGRAM_ADD = "cudacpu_cub_histogram_add"
# Each thread's first and last items in shared slots, for its neighbours (THREADS: the class's block)
_ENDS = ("__shared__ T_ cudacpu_firsts[THREADS_]; __shared__ T_ cudacpu_lasts[THREADS_]; "
         f"const unsigned int t = {fe.LINEAR_THREAD}, n = {fe.BLOCK_THREADS}; "
         "cudacpu_firsts[t] = in[0]; cudacpu_lasts[t] = in[N_ - 1]; __syncthreads(); ")
# Where thread t's item i lies in the tile, by arrangement: 0 blocked, 1 striped, 2 warp-striped (each
# warp of 32 threads its own 32 * N items, striped over its lanes)
_AT = ("((a) == 0 ? (int)t * N_ + (i) : (a) == 1 ? (i) * (int)n + (int)t "
       ": (int)(t / 32u) * 32 * N_ + (i) * 32 + (int)(t % 32u))")
# Thread t's item i in a blocked arrangement (BLOCK_LOAD_DIRECT, _VECTORIZE, _TRANSPOSE, ...), or a
# striped one (BLOCK_LOAD_STRIPED)
_ITEM = (f"const unsigned int t = {fe.LINEAR_THREAD}; "
         f"const long long at = striped ? (long long)i * {fe.BLOCK_THREADS} + t : (long long)t * N_ + i; ")
_SLOTS = (f"__shared__ T_ cudacpu_slots[1024]; __shared__ T_ cudacpu_total; "
          f"const unsigned int t = {fe.LINEAR_THREAD}, n = {fe.BLOCK_THREADS}; cudacpu_slots[t] = v; __syncthreads(); ")
HELPERS = {
    BLOCK_REDUCE: (
        f"template <class T_, class Op_> __device__ __forceinline__ T_ {BLOCK_REDUCE}(T_ v, Op_ op, int valid) {{ {_SLOTS}"
        "if (t == 0u) { T_ acc = cudacpu_slots[0]; "
        "for (unsigned int i = 1u; i < n && i < (unsigned int)valid; ++i) acc = op(acc, cudacpu_slots[i]); "
        "cudacpu_total = acc; } __syncthreads(); T_ r = cudacpu_total; __syncthreads(); return r; }"),
    BLOCK_SCAN: (
        f"template <class T_, class Op_> __device__ __forceinline__ T_ {BLOCK_SCAN}(T_ v, Op_ op, T_ init, bool exclusive, "
        f"bool seeded) {{ {_SLOTS}"
        "if (t == 0u) { T_ total = cudacpu_slots[0], carry = init; for (unsigned int i = 0u; i < n; ++i) { "
        "T_ x = cudacpu_slots[i]; if (i > 0u) total = op(total, x); "
        "if (exclusive) { cudacpu_slots[i] = carry; carry = (i == 0u && !seeded) ? x : op(carry, x); } "
        "else cudacpu_slots[i] = total; } } "
        "__syncthreads(); T_ r = cudacpu_slots[t]; __syncthreads(); return r; }"),
    WARP_REDUCE: (
        f"template <unsigned int N_, class T_, class Op_> __device__ __forceinline__ T_ {WARP_REDUCE}(T_ v, Op_ op) {{ "
        "for (unsigned int o = N_ / 2u; o > 0u; o /= 2u) { T_ w = __shfl_xor_sync(0xffffffffu, v, (int)o, (int)N_); "
        "v = op(v, w); } return v; }"),
    WARP_SCAN: (
        f"template <unsigned int N_, class T_, class Op_> __device__ __forceinline__ T_ {WARP_SCAN}(T_ v, Op_ op, T_ init, "
        f"bool exclusive, bool seeded) {{ const unsigned int lane = {fe.LINEAR_THREAD} % N_; "
        "for (unsigned int o = 1u; o < N_; o *= 2u) { T_ w = __shfl_up_sync(0xffffffffu, v, o, (int)N_); "
        "if (lane >= o) v = op(w, v); } "
        "T_ before = __shfl_up_sync(0xffffffffu, v, 1u, (int)N_); "
        "return !exclusive ? v : lane == 0u ? init : seeded ? op(init, before) : before; }"),
    BLOCK_SCAN_ITEMS: (  # each thread's items in turn, after the scan of what the threads before it hold
        f"template <int N_, class T_, class Op_> __device__ __forceinline__ void {BLOCK_SCAN_ITEMS}(T_ (&in)[N_], "
        "T_ (&out)[N_], Op_ op, T_ init, bool exclusive, bool seeded) { T_ total = in[0]; "
        "for (int i = 1; i < N_; ++i) total = op(total, in[i]); "
        f"T_ carry = {BLOCK_SCAN}<T_>(total, op, init, true, seeded); bool has = seeded || {fe.LINEAR_THREAD} != 0u; "
        "for (int i = 0; i < N_; ++i) { T_ x = in[i]; if (exclusive) out[i] = has ? carry : x; "
        "carry = has ? op(carry, x) : x; has = true; if (!exclusive) out[i] = carry; } }"),
    THREAD_REDUCE: (
        f"template <int N_, class T_, class Op_> __device__ __forceinline__ T_ {THREAD_REDUCE}(T_ (&in)[N_], Op_ op) {{ "
        "T_ acc = in[0]; for (int i = 1; i < N_; ++i) acc = op(acc, in[i]); return acc; }"),
    BLOCK_LOAD: (
        f"template <int N_, class T_, class It_, class D_> __device__ __forceinline__ void {BLOCK_LOAD}(It_ in, "
        "T_ (&items)[N_], bool striped, long long valid, bool fill, D_ oob) { for (int i = 0; i < N_; ++i) { "
        f"{_ITEM}if (at < valid) items[i] = in[at]; else if (fill) items[i] = static_cast<T_>(oob); }} }}"),
    BLOCK_STORE: (
        f"template <int N_, class T_, class It_> __device__ __forceinline__ void {BLOCK_STORE}(It_ out, T_ (&items)[N_], "
        f"bool striped, long long valid) {{ for (int i = 0; i < N_; ++i) {{ {_ITEM}if (at < valid) out[at] = items[i]; }} }}"),
    RADIX_BITS: (  # CUB's radix order of a key: its bits, twiddled so that unsigned order is numeric order
        "template <class K_> __device__ __forceinline__ unsigned long long " + RADIX_BITS + "(K_ key, bool descending) { "
        "unsigned long long b = 0ull; __builtin_memcpy(&b, &key, sizeof(K_)); "
        "const unsigned long long sign = 1ull << (8u * sizeof(K_) - 1u); "
        "const unsigned long long all = sizeof(K_) == 8u ? ~0ull : (1ull << (8u * sizeof(K_))) - 1ull; "
        "if ((K_)0.5 != (K_)0) { b = (b & sign) ? (~b & all) : (b | sign); if (b == (~sign & all)) b = sign; } "  # -0 as +0
        "else if ((K_)(-1) < (K_)0) b ^= sign; "
        "return descending ? (~b & all) : b; }"),
    BLOCK_RADIX_SORT: (  # the tile's keys (and values) in shared slots, ranked by thread 0 in stable 8-bit passes
        "template <int CAP_, int N_, class K_, class V_> __device__ __forceinline__ void " + BLOCK_RADIX_SORT + "("
        "K_ (&keys)[N_], V_ (&values)[N_], bool with_values, int begin_bit, int end_bit, bool descending, bool striped) { "
        "__shared__ K_ cudacpu_sort_keys[CAP_]; __shared__ V_ cudacpu_sort_values[CAP_]; "
        "__shared__ unsigned long long cudacpu_sort_digits[CAP_]; __shared__ int cudacpu_sort_order[CAP_]; "
        "__shared__ int cudacpu_sort_spare[CAP_]; "
        f"const unsigned int t = {fe.LINEAR_THREAD}, n = {fe.BLOCK_THREADS}; "
        "for (int i = 0; i < N_; ++i) { cudacpu_sort_keys[t * N_ + i] = keys[i]; "
        "if (with_values) cudacpu_sort_values[t * N_ + i] = values[i]; } "
        "__syncthreads(); "
        "if (t == 0u) { const int total = (int)n * N_; "
        "const int end = end_bit < 0 ? (int)(8u * sizeof(K_)) : end_bit, width = end - begin_bit; "
        "for (int j = 0; j < total; ++j) { "
        "unsigned long long d = width <= 0 ? 0ull : " + RADIX_BITS + "<K_>(cudacpu_sort_keys[j], descending) >> begin_bit; "
        "cudacpu_sort_digits[j] = width >= 64 || width <= 0 ? d : d & ((1ull << width) - 1ull); "
        "cudacpu_sort_order[j] = j; } "
        "for (int shift = 0; shift < width; shift += 8) { unsigned int count[257]; "
        "for (int c = 0; c < 257; ++c) count[c] = 0u; "
        "for (int j = 0; j < total; ++j) ++count[((cudacpu_sort_digits[cudacpu_sort_order[j]] >> shift) & 255ull) + 1u]; "
        "for (int c = 0; c < 256; ++c) count[c + 1] += count[c]; "
        "for (int j = 0; j < total; ++j) { const int k = cudacpu_sort_order[j]; "
        "cudacpu_sort_spare[count[(cudacpu_sort_digits[k] >> shift) & 255ull]++] = k; } "
        "for (int j = 0; j < total; ++j) cudacpu_sort_order[j] = cudacpu_sort_spare[j]; } } "
        "__syncthreads(); "
        "for (int i = 0; i < N_; ++i) { const int k = cudacpu_sort_order[striped ? i * (int)n + (int)t : (int)t * N_ + i]; "
        "keys[i] = cudacpu_sort_keys[k]; if (with_values) values[i] = cudacpu_sort_values[k]; } "
        "__syncthreads(); }"),
    BLOCK_EXCHANGE: (  # every thread's items to their places in the tile, then each thread's back from its own
        "template <int CAP_, int N_, class T_, class U_> __device__ __forceinline__ void " + BLOCK_EXCHANGE + "("
        "T_ (&in)[N_], U_ (&out)[N_], int from, int to) { __shared__ T_ cudacpu_exchange[CAP_]; "
        f"const unsigned int t = {fe.LINEAR_THREAD}, n = {fe.BLOCK_THREADS}; "
        "for (int i = 0; i < N_; ++i) cudacpu_exchange[" + _AT.replace("(a)", "from") + "] = in[i]; "
        "__syncthreads(); "
        "for (int i = 0; i < N_; ++i) out[i] = cudacpu_exchange[" + _AT.replace("(a)", "to") + "]; "
        "__syncthreads(); }"),
    BLOCK_SCATTER: (  # every item to the place its rank names, then each thread's back, blocked or striped
        "template <int CAP_, int N_, class T_, class U_, class R_> __device__ __forceinline__ void " + BLOCK_SCATTER + "("
        "T_ (&in)[N_], U_ (&out)[N_], R_ (&ranks)[N_], int to) { __shared__ T_ cudacpu_exchange[CAP_]; "
        f"const unsigned int t = {fe.LINEAR_THREAD}, n = {fe.BLOCK_THREADS}; "
        "for (int i = 0; i < N_; ++i) cudacpu_exchange[ranks[i]] = in[i]; "
        "__syncthreads(); "
        "for (int i = 0; i < N_; ++i) out[i] = cudacpu_exchange[" + _AT.replace("(a)", "to") + "]; "
        "__syncthreads(); }"),
    BLOCK_FLAGS: (  # an item flagged where op(its predecessor, it) (heads) or op(it, its successor) (tails)
        "template <int THREADS_, int N_, class F_, class T_, class Op_> __device__ __forceinline__ void " + BLOCK_FLAGS + "("
        "F_ (&heads)[N_], F_ (&tails)[N_], T_ (&in)[N_], Op_ op, bool want_heads, bool want_tails, bool has_pred, T_ pred, "
        "bool has_succ, T_ succ) { " + _ENDS +
        "bool h[N_], e[N_]; "
        "for (int i = 0; i < N_; ++i) { "
        "h[i] = i > 0 ? (bool)op(in[i - 1], in[i]) : t > 0u ? (bool)op(cudacpu_lasts[t - 1u], in[0]) "
        ": has_pred ? (bool)op(pred, in[0]) : true; "
        "e[i] = i < N_ - 1 ? (bool)op(in[i], in[i + 1]) : t + 1u < n ? (bool)op(in[N_ - 1], cudacpu_firsts[t + 1u]) "
        ": has_succ ? (bool)op(in[N_ - 1], succ) : true; } "
        "__syncthreads(); "
        "for (int i = 0; i < N_; ++i) { if (want_heads) heads[i] = h[i]; if (want_tails) tails[i] = e[i]; } }"),
    BLOCK_DIFFERENCE: (  # op(item, its left or right neighbour); items past the valid ones, and the tile's
        # first (left) or last valid one (right) without the item beyond it, copied
        "template <int THREADS_, int N_, class T_, class U_, class Op_> __device__ __forceinline__ void " + BLOCK_DIFFERENCE +
        "(T_ (&in)[N_], U_ (&out)[N_], Op_ op, bool left, long long valid, bool has_edge, T_ edge) { " + _ENDS +
        "T_ x[N_]; for (int i = 0; i < N_; ++i) x[i] = in[i]; "
        "if (valid < 0) valid = (long long)n * N_; "
        "for (int i = 0; i < N_; ++i) { const long long p = (long long)t * N_ + i; "
        "if (left) out[i] = p >= valid ? x[i] : i > 0 ? op(x[i], x[i - 1]) : t > 0u ? op(x[0], cudacpu_lasts[t - 1u]) "
        ": has_edge ? op(x[0], edge) : x[0]; "
        "else out[i] = p >= valid - 1 ? (has_edge && p == valid - 1 ? op(x[i], edge) : x[i]) "
        ": i < N_ - 1 ? op(x[i], x[i + 1]) : op(x[N_ - 1], cudacpu_firsts[t + 1u]); } "
        "__syncthreads(); }"),
    HISTOGRAM_INIT: (
        "template <int THREADS_, int BINS_, class C_> __device__ __forceinline__ void " + HISTOGRAM_INIT + "(C_* hist) { "
        f"for (int b = (int){fe.LINEAR_THREAD}; b < BINS_; b += THREADS_) hist[b] = (C_)0; }}"),
    HISTOGRAM_ADD: (  # after the bins are zeroed (and a barrier), when `zero`
        "template <int THREADS_, int BINS_, int N_, class T_, class C_> __device__ __forceinline__ void " + HISTOGRAM_ADD +
        "(T_ (&items)[N_], C_* hist, bool zero) { if (zero) { " + HISTOGRAM_INIT + "<THREADS_, BINS_>(hist); "
        "__syncthreads(); } for (int i = 0; i < N_; ++i) atomicAdd(hist + items[i], (C_)1); __syncthreads(); }"),
}


def _items(arg: ci.Cursor) -> bool:
    """Whether an argument is an array of a thread's items (its size a template's parameter or not)."""
    return arg.type.get_canonical().kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY)


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

    items = bool(args) and _items(args[0])  # per thread

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
    if cls == "BlockRadixSort":
        return _radix_sort(targs, method, args, render)
    if cls == "BlockExchange":
        return _exchange(targs, method, args, render)
    if cls == "BlockDiscontinuity":
        return _discontinuity(targs, method, args, render)
    if cls == "BlockAdjacentDifference":
        return _adjacent_difference(targs, method, args, render)
    if cls == "BlockHistogram":
        return _histogram(targs, method, args, render)
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


_SORTS = {"Sort": (False, False), "SortDescending": (True, False), "SortBlockedToStriped": (False, True),
          "SortDescendingBlockedToStriped": (True, True)}


def _tile(targs: list[str], items_at: int, dims_at: tuple[int, int]) -> str:
    """The items of a block's tile: its threads (the class's block dimensions) times each thread's items."""
    dims = [targs[1]] + [targs[i] for i in dims_at if i < len(targs)]
    return " * ".join(f"({d})" for d in dims + [targs[items_at]])


def _radix_sort(targs: list[str], method: str, args: list[ci.Cursor],
                render: Callable[[ci.Cursor], str]) -> Collective | None:
    """`BlockRadixSort(temp).Sort(keys[, values][, begin_bit[, end_bit]])` and its descending and
    blocked-to-striped forms: a stable sort of the tile's keys by their bits [begin_bit, end_bit) in
    CUB's order (signed keys by their flipped sign bit, floats by their flipped sign or all bits,
    -0 as +0), each thread's items blocked (or striped) in the result."""
    if method not in _SORTS or len(targs) < 3 or not args:
        return None
    descending, striped = _SORTS[method]
    paired = len(args) > 1 and _items(args[1])
    bits = args[2:] if paired else args[1:]
    if len(bits) > 2:
        return None
    cap = _tile(targs, 2, (8, 9))

    def text() -> str:
        keys = render(args[0])
        values = render(args[1]) if paired else keys
        begin = render(bits[0]) if bits else "0"
        end = render(bits[1]) if len(bits) == 2 else "-1"
        return (f"{BLOCK_RADIX_SORT}<{cap}>({keys}, {values}, {str(paired).lower()}, {begin}, {end}, "
                f"{str(descending).lower()}, {str(striped).lower()})")

    return Collective((RADIX_BITS, BLOCK_RADIX_SORT), text)


_EXCHANGES = {"StripedToBlocked": (1, 0), "BlockedToStriped": (0, 1), "WarpStripedToBlocked": (2, 0),
              "BlockedToWarpStriped": (0, 2)}
_SCATTERS = {"ScatterToBlocked": 0, "ScatterToStriped": 1}


def _exchange(targs: list[str], method: str, args: list[ci.Cursor],
              render: Callable[[ci.Cursor], str]) -> Collective | None:
    """`BlockExchange(temp).StripedToBlocked(in, out)` (or in place) and the other rearrangements of
    the tile between blocked, striped and warp-striped; `ScatterToBlocked(in, out, ranks)` and
    `ScatterToStriped`: each item to its rank's place in the tile."""
    if len(targs) < 3 or not args or not all(_items(a) for a in args):
        return None
    cap = _tile(targs, 2, (4, 5))
    if method in _EXCHANGES and len(args) in (1, 2):
        source, target = _EXCHANGES[method]
        return Collective((BLOCK_EXCHANGE,), lambda: (
            f"{BLOCK_EXCHANGE}<{cap}>({render(args[0])}, {render(args[-1])}, {source}, {target})"))
    if method in _SCATTERS and len(args) in (2, 3):
        return Collective((BLOCK_SCATTER,), lambda: (
            f"{BLOCK_SCATTER}<{cap}>({render(args[0])}, {render(args[-2])}, {render(args[-1])}, {_SCATTERS[method]})"))
    return None


def _threads(targs: list[str], dims_at: tuple[int, int]) -> str:
    """The threads of the class's block: its dimensions' product."""
    return " * ".join(f"({targs[i]})" for i in (1, *dims_at) if i < len(targs))


def _discontinuity(targs: list[str], method: str, args: list[ci.Cursor],
                   render: Callable[[ci.Cursor], str]) -> Collective | None:
    """`BlockDiscontinuity(temp).FlagHeads(flags, input, op[, tile_predecessor_item])`, `FlagTails(flags,
    input, op[, tile_successor_item])` and `FlagHeadsAndTails(heads[, predecessor], tails[, successor],
    input, op)`: each item's flag from op on it and its neighbour in the tile (the next thread's first
    item, the previous thread's last); the tile's first head and last tail set, or from the item given."""
    n = len(args)
    heads = tails = pred = succ = None
    if method == "FlagHeads" and n in (3, 4):
        heads, items, op = args[:3]
        pred = args[3] if n == 4 else None
    elif method == "FlagTails" and n in (3, 4):
        tails, items, op = args[:3]
        succ = args[3] if n == 4 else None
    elif method == "FlagHeadsAndTails" and 4 <= n <= 6:
        rest = list(args)
        heads = rest.pop(0)
        if not _items(rest[0]):
            pred = rest.pop(0)
        tails = rest.pop(0)
        if len(rest) == 3:
            succ = rest.pop(0)
        if len(rest) != 2:
            return None
        items, op = rest
    else:
        return None
    if not _items(items) or not all(_items(f) for f in (heads, tails) if f is not None):
        return None
    threads = _threads(targs, (2, 3))

    def text() -> str:
        first = render(heads if heads is not None else tails)
        second = render(tails if tails is not None else heads)
        source = render(items)
        return (f"{BLOCK_FLAGS}<{threads}>({first}, {second}, {source}, {render(op)}, "
                f"{str(heads is not None).lower()}, {str(tails is not None).lower()}, "
                f"{str(pred is not None).lower()}, {render(pred) if pred is not None else source + '[0]'}, "
                f"{str(succ is not None).lower()}, {render(succ) if succ is not None else source + '[0]'})")

    return Collective((BLOCK_FLAGS,), text)


# (left, the valid count's argument, the edge item's argument), by method and arity
_DIFFERENCES = {("SubtractLeft", 3): (True, None, None), ("SubtractLeft", 4): (True, None, 3),
                ("SubtractLeftPartialTile", 4): (True, 3, None), ("SubtractLeftPartialTile", 5): (True, 3, 4),
                ("SubtractRight", 3): (False, None, None), ("SubtractRight", 4): (False, None, 3),
                ("SubtractRightPartialTile", 4): (False, 3, None)}


def _adjacent_difference(targs: list[str], method: str, args: list[ci.Cursor],
                         render: Callable[[ci.Cursor], str]) -> Collective | None:
    """`BlockAdjacentDifference(temp).SubtractLeft(in, out, op[, tile_predecessor_item])`,
    `SubtractLeftPartialTile(in, out, op, valid[, tile_predecessor_item])`, `SubtractRight(in, out,
    op[, tile_successor_item])` and `SubtractRightPartialTile(in, out, op, valid)`: each output
    op(item, its neighbour in the tile), the output may be the input."""
    form = _DIFFERENCES.get((method, len(args)))
    if form is None or not _items(args[0]) or not _items(args[1]):
        return None
    left, valid_at, edge_at = form
    threads = _threads(targs, (2, 3))

    def text() -> str:
        source = render(args[0])
        valid = f"(long long)({render(args[valid_at])})" if valid_at is not None else "-1LL"
        edge = render(args[edge_at]) if edge_at is not None else source + "[0]"
        return (f"{BLOCK_DIFFERENCE}<{threads}>({source}, {render(args[1])}, {render(args[2])}, "
                f"{str(left).lower()}, {valid}, {str(edge_at is not None).lower()}, {edge})")

    return Collective((BLOCK_DIFFERENCE,), text)


def _histogram(targs: list[str], method: str, args: list[ci.Cursor],
               render: Callable[[ci.Cursor], str]) -> Collective | None:
    """`BlockHistogram<T, BLOCK_DIM_X, ITEMS_PER_THREAD, BINS, ALGORITHM, BLOCK_DIM_Y, BLOCK_DIM_Z>(temp)`:
    `InitHistogram(hist)`, `Composite(items, hist)` and `Histo(items, hist)` (InitHistogram, a barrier,
    Composite). Either algorithm counts alike; the atomic one is what runs."""
    if len(targs) < 4:
        return None
    threads, bins = _threads(targs, (5, 6)), targs[3]
    if method == "InitHistogram" and len(args) == 1:
        return Collective((HISTOGRAM_INIT,), lambda: f"{HISTOGRAM_INIT}<{threads}, {bins}>({render(args[0])})")
    if method in ("Histo", "Composite") and len(args) == 2 and _items(args[0]):
        return Collective((HISTOGRAM_INIT, HISTOGRAM_ADD), lambda: (
            f"{HISTOGRAM_ADD}<{threads}, {bins}>({render(args[0])}, {render(args[1])}, "
            f"{str(method == 'Histo').lower()})"))
    return None
