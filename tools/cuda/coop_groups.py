"""Cooperative groups (`#include <cooperative_groups.h>`) in device code, rewritten into the
CUDA primitives that the lowering already runs faithfully, before it runs.

The groups are recognised by their libclang types (the parse shim declares them); each
operation on one becomes:

- `grid_group` (`this_grid()`): `sync()`/`cg::sync(g)` -> `cudacpu_grid_sync()`, a barrier of the
  whole grid that the lowering splits the kernel at (its blocks run on threads of their own and
  wait for each other there); `thread_rank()`, `size()`, `block_rank()`, `num_blocks()`,
  `block_index()`, `group_dim()` -> the grid's linear indices and extents.
- `thread_block`: `sync()`/`cg::sync(g)` -> `__syncthreads()`; `thread_rank()` -> the linear
  thread index; `size()`/`num_threads()` -> the block's thread count; `group_index()`,
  `thread_index()`, `group_dim()`/`dim_threads()` -> blockIdx, threadIdx, blockDim.
- `thread_block_tile<N>` (`tiled_partition<N>(g)`, and `tiled_partition(g, n)` with a literal
  n): `sync()` -> `__syncwarp()`; `thread_rank()` -> linear index % N; `size()` -> N;
  `meta_group_rank()`/`meta_group_size()` -> the tile's place in the group partitioned;
  `shfl*` -> `__shfl*_sync(..., N)`; `any`/`all`/`ballot` -> the votes restricted to the tile's
  lanes (the ballot shifted down to the tile's bits); `cg::reduce(tile, v, op)` with
  plus/less/greater/bit_and/bit_or/bit_xor, or with a `__device__` function of the program
  (`cg::reduce(warp, v, combine)`, on any value type) -> a butterfly of `__shfl_xor_sync` over the
  tile (log2 N steps, every lane gets the result), as a `__device__` helper the lowering inlines.

- `coalesced_group`: `coalesced_threads()` records the lanes of the warp that call it together,
  which the lockstep lowering knows as the lanes taking part in a warp exchange
  (`__ballot_sync(full, 1)`), in the group value; `thread_rank()` and `size()` count them,
  `shfl(v, rank)` reads the lane of that rank, `any`/`all` vote among them (the
  warp-aggregated atomic idiom).

Group objects themselves stay as written (empty values in the CPU runtime's
cooperative_groups.h), also where they are passed to `__device__` functions. What is not
rewritten (coalesced groups, a `thread_group` of unknown size, a reduction with another kind of
operator: a functor object or a lambda) is left as written and reported by the lowering as unsupported, named by
`frontend.cooperative_groups_feature`.

CUB's block and warp collectives (`cub::BlockReduce`, `BlockScan`, `WarpReduce`) are rewritten
in the same walk, into the helpers of cub_blocks.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import clang.cindex as ci

from . import frontend as fe
from .cub_blocks import HELPERS as CUB_HELPERS
from .cub_blocks import MARKERS as CUB_MARKERS
from .cub_blocks import cub_collective

K = ci.CursorKind
NAMESPACE = fe.COOPERATIVE_GROUPS
# Names whose presence in a file means it may use cooperative groups (the rewrite is skipped otherwise).
MARKERS = {"cooperative_groups", "this_thread_block", "tiled_partition", "thread_block", "thread_block_tile",
           "thread_group", "this_grid", "grid_group"}
LINEAR = fe.LINEAR_THREAD
BLOCK_SIZE = fe.BLOCK_THREADS
BLOCK_RANK = "((unsigned long long)(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x)"
GRID_BLOCKS = "((unsigned long long)gridDim.x * gridDim.y * gridDim.z)"
FULL = "0xffffffffu"
REDUCE_OPS = {"plus": "v + w", "less": "w < v ? w : v", "greater": "v < w ? w : v",
              "bit_and": "v & w", "bit_or": "v | w", "bit_xor": "v ^ w"}


# A coalesced group: the lanes of the caller's warp that made it together (a warp exchange's
# participants), kept in the group value (the runtime's and the shim's coalesced_group).
COALESCED = f"cooperative_groups::coalesced_group{{__ballot_sync({FULL}, 1)}}"
LANES = "cudacpu_lanes"
NTH_LANE = "cudacpu_cg_nth_lane"


@dataclass(frozen=True)
class Group:
    kind: str  # "grid", "block", "tile" or "coalesced"
    size: str | None = None  # a tile's thread count as C++ text (`32`, `N`)
    parent: "Group | None" = None  # the group a tile was partitioned from (None: the block)

    @property
    def rank(self) -> str:
        if self.kind == "grid":
            return f"({BLOCK_RANK} * {BLOCK_SIZE} + {LINEAR})"
        return LINEAR if self.kind == "block" else f"({LINEAR} % {self.n})"

    @property
    def count(self) -> str:
        if self.kind == "grid":
            return f"({GRID_BLOCKS} * {BLOCK_SIZE})"
        return BLOCK_SIZE if self.kind == "block" else self.n

    @property
    def barrier(self) -> str:
        return {"grid": f"{fe.GRID_SYNC}()", "block": "__syncthreads()"}.get(self.kind, "__syncwarp()")

    @property
    def n(self) -> str:
        """The tile's size as an unsigned C++ expression."""
        assert self.size is not None
        return f"{self.size}u" if self.size.isdigit() else f"((unsigned int)({self.size}))"

    def lane_mask(self) -> str:
        """The tile's lanes within its warp, as a bit mask."""
        if self.size == "32":
            return FULL
        return f"({FULL} >> (32u - {self.n}) << {self.offset()})"

    def offset(self) -> str:
        """The lane of the warp where the caller's tile starts."""
        return f"({LINEAR} % 32u / {self.n} * {self.n})"


def _group_class(t: ci.Type) -> str | None:
    """The name of the cooperative-groups class a type is (through references and const)."""
    if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
        t = t.get_pointee()
    decl = t.get_declaration()
    if decl is None or decl.kind is None or not decl.spelling:
        return None
    parent = decl.semantic_parent
    if parent is None or parent.kind != K.NAMESPACE or parent.spelling != NAMESPACE:
        return None
    return decl.spelling


def _group_from_spelling(spelling: str) -> Group | None:
    words = spelling.replace("const ", "").replace("&", "").strip()
    name = words.split("<")[0].strip().split("::")[-1]
    if name == "thread_block":
        return Group("block")
    if name == "grid_group":
        return Group("grid")
    if name == "coalesced_group":
        return Group("coalesced")
    if name == "thread_block_tile":
        args = fe.template_args(words)
        if not args:
            return None
        size = args[0].rstrip("uU") if args[0].rstrip("uU").isdigit() else args[0]
        parent = _group_from_spelling(args[1]) if len(args) > 1 and args[1] != "void" else None
        return Group("tile", size, parent if parent is not None and parent.kind == "tile" else None)
    return None


def tile_size_argument(param: ci.Type, arg: ci.Type, name: str) -> str | None:
    """The value of the template parameter `name` deduced from passing a tile of type `arg` for
    a parameter `thread_block_tile<name>` (the lowering inlines such templates); None otherwise."""
    if _group_class(param) != "thread_block_tile" or _group_class(arg) != "thread_block_tile":
        return None
    p = _group_from_spelling((param.get_pointee() if param.kind == ci.TypeKind.LVALUEREFERENCE else param).spelling)
    a = _group_from_spelling((arg.get_pointee() if arg.kind == ci.TypeKind.LVALUEREFERENCE else arg).get_canonical().spelling)
    if p is None or a is None or p.size != name or a.size is None or not a.size.isdigit():
        return None
    return f"{a.size}u"


def _strip(c: ci.Cursor) -> ci.Cursor:
    while c.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) or (c.kind == K.CALL_EXPR and c.referenced is not None
                                                          and c.referenced.kind == K.CONSTRUCTOR):
        children = list(c.get_children())
        if len(children) != 1:
            break
        c = children[0]
    return c


def _int_literal(c: ci.Cursor) -> str | None:
    tokens = [t.spelling for t in _strip(c).get_tokens()]
    if len(tokens) == 1 and tokens[0].rstrip("uUlL").isdigit():
        return tokens[0].rstrip("uUlL")
    return None




class _Rewriter:
    def __init__(self, tr: fe.Translation):
        self.tr = tr
        self.sites: dict[tuple[int, int], Callable[[], str]] = {}
        self.helpers: dict[str, str] = {}  # name -> definition
        self.helper_at: dict[str, int] = {}  # name -> the offset where it goes

    # ---- what a group expression is --------------------------------------------------

    def group(self, expr: ci.Cursor, depth: int = 0) -> Group | None:
        if depth > 8:
            return None
        e = _strip(expr)
        if e.kind == K.CALL_EXPR and e.referenced is not None and e.referenced.kind == K.FUNCTION_DECL \
                and e.spelling == "tiled_partition":
            args = list(e.get_children())[1:]
            if len(args) == 2:  # tiled_partition(g, n): a thread_group of n threads
                n = _int_literal(args[1])
                parent = self.group(args[0], depth + 1)
                if n is None or parent is None or int(n) > 32 or int(n) & (int(n) - 1):
                    return None
                return Group("tile", n, parent if parent.kind == "tile" else None)
            if len(args) == 1:
                found = self._group_of_type(e.type)
                parent = self.group(args[0], depth + 1)
                if found is not None and parent is not None:
                    return Group("tile", found.size, parent if parent.kind == "tile" else None)
                return found
        found = self._group_of_type(e.type)
        if e.kind == K.DECL_REF_EXPR and e.referenced is not None and e.referenced.kind == K.VAR_DECL:
            if found is None or (found.kind == "tile" and found.parent is None):
                # `cg::thread_group g = cg::tiled_partition(block, 16)`, `cg::thread_block_tile<4> t =
                # cg::tiled_partition<4>(tile32)`: the initializer says what the type does not.
                init = [ch for ch in e.referenced.get_children() if ch.kind.is_expression()]
                if init:
                    from_init = self.group(init[-1], depth + 1)
                    if from_init is not None:
                        return from_init
        return found

    def _group_of_type(self, t: ci.Type) -> Group | None:
        name = _group_class(t)
        if name not in ("grid_group", "thread_block", "thread_block_tile", "coalesced_group"):
            return None
        if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
            t = t.get_pointee()
        spelling = t.get_canonical().spelling
        if "parameter-" in spelling or "type-parameter" in spelling:
            spelling = t.spelling
        if name == "thread_block_tile" and "<" not in spelling:
            spelling = t.spelling
        g = _group_from_spelling(spelling)
        if g is not None and g.kind == "tile" and g.size is not None and g.size.isdigit():
            n = int(g.size)
            if n == 0 or n > 32 or n & (n - 1):
                return None
        return g

    # ---- rewriting -------------------------------------------------------------------

    def render(self, c: ci.Cursor) -> str:
        return self._text(c.extent.start.offset, c.extent.end.offset)

    def _text(self, start: int, end: int) -> str:
        if (start, end) in self.sites:
            return self.sites[(start, end)]()
        out, pos = [], start
        for (s, e), build in sorted(self.sites.items(), key=lambda item: (item[0][0], -item[0][1])):
            if s < pos or e > end:
                continue
            out.append(self.tr.text(pos, s))
            out.append(build())
            pos = e
        out.append(self.tr.text(pos, end))
        return "".join(out)

    def call(self, call: ci.Cursor, top: int) -> None:
        self.top = top
        children = list(call.get_children())
        if not children:
            return
        ref = call.referenced
        head = children[0]
        args = children[1:]
        member = head if head.kind == K.MEMBER_REF_EXPR else None
        if member is None and head.kind == K.UNEXPOSED_EXPR:
            inner = list(head.get_children())
            member = inner[0] if len(inner) == 1 and inner[0].kind == K.MEMBER_REF_EXPR else None
        if member is not None:
            objects = list(member.get_children())
            if len(objects) != 1:
                return
            g = self.group(objects[0])
            method = member.spelling or fe.member_name(member, objects[0])
            if g is not None:
                self._method(call, g, method, args, objects[0])
            elif (found := cub_collective(method, objects[0], args, self.render)) is not None:
                for helper in found.helpers:
                    self.helpers[helper] = CUB_HELPERS[helper]
                    self.helper_at[helper] = min(self.helper_at.get(helper, top), top)
                self._site(call, found.text)
            return
        if ref is not None and ref.kind == K.FUNCTION_DECL and ref.spelling == "coalesced_threads" \
                and ref.semantic_parent is not None and ref.semantic_parent.spelling == NAMESPACE:
            self._site(call, lambda: COALESCED)
            return
        if ref is None or ref.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) or ref.semantic_parent is None \
                or ref.semantic_parent.spelling != NAMESPACE or not args:
            return
        g = self.group(args[0])
        if g is None:
            return
        name = ref.spelling
        if name == "sync":
            self._site(call, lambda: g.barrier)
        elif name == "thread_rank":
            self._site(call, lambda: g.rank)
        elif name == "group_size":
            self._site(call, lambda: g.count)
        elif name == "reduce" and g.kind == "tile" and len(args) == 3:
            self._reduce(call, g, args, top)

    def _site(self, call: ci.Cursor, build: Callable[[], str]) -> None:
        self.sites[(call.extent.start.offset, call.extent.end.offset)] = build

    def _method(self, call: ci.Cursor, g: Group, name: str, args: list[ci.Cursor], obj: ci.Cursor) -> None:
        if g.kind == "coalesced":
            self._coalesced_method(call, obj, name, args)
            return
        block = g.kind == "block"
        simple = {
            "sync": g.barrier,
            "thread_rank": g.rank,
            "size": g.count,
            "num_threads": g.count,
        }
        if g.kind == "grid":
            simple.update(block_rank=BLOCK_RANK, num_blocks=GRID_BLOCKS, block_index="blockIdx", group_dim="gridDim",
                          dim_blocks="gridDim", is_valid="true")
        elif block:
            simple.update(group_index="blockIdx", thread_index="threadIdx", group_dim="blockDim", dim_threads="blockDim")
        else:
            parent = g.parent
            if parent is None:
                simple["meta_group_rank"] = f"({LINEAR} / {g.n})"
                simple["meta_group_size"] = f"(({BLOCK_SIZE} + {g.n} - 1u) / {g.n})"
            else:
                simple["meta_group_rank"] = f"({LINEAR} % {parent.n} / {g.n})"
                simple["meta_group_size"] = f"({parent.n} / {g.n})"
        if name in simple and not args:
            text = simple[name]
            self._site(call, lambda: text)
            return
        if g.kind in ("grid", "block"):
            return
        shuffles = {"shfl": "__shfl_sync", "shfl_down": "__shfl_down_sync", "shfl_up": "__shfl_up_sync",
                    "shfl_xor": "__shfl_xor_sync"}
        if name in shuffles and len(args) == 2:
            self._site(call, lambda: f"{shuffles[name]}({FULL}, {self.render(args[0])}, {self.render(args[1])}, {g.n})")
        elif name in ("any", "all") and len(args) == 1:
            self._site(call, lambda: f"__{name}_sync({g.lane_mask()}, {self.render(args[0])})")
        elif name == "ballot" and len(args) == 1:
            if g.size == "32":
                self._site(call, lambda: f"__ballot_sync({FULL}, {self.render(args[0])})")
            else:
                self._site(call, lambda: f"(__ballot_sync({g.lane_mask()}, {self.render(args[0])}) >> {g.offset()})")

    def _coalesced_method(self, call: ci.Cursor, obj: ci.Cursor, name: str, args: list[ci.Cursor]) -> None:
        def lanes() -> str:
            return f"({self.render(obj)}).{LANES}"

        simple = {"thread_rank": lambda: f"((unsigned int)__popc({lanes()} & __lanemask_lt()))",
                  "size": lambda: f"((unsigned int)__popc({lanes()}))",
                  "num_threads": lambda: f"((unsigned int)__popc({lanes()}))",
                  "meta_group_rank": lambda: "0u", "meta_group_size": lambda: "1u"}
        if name in simple and not args:
            self._site(call, simple[name])
        elif name in ("any", "all") and len(args) == 1:
            self._site(call, lambda: f"__{name}_sync({lanes()}, {self.render(args[0])})")
        elif name == "shfl" and len(args) == 2:
            self.helpers[NTH_LANE] = (
                f"__device__ __forceinline__ int {NTH_LANE}(unsigned int lanes, unsigned int rank) {{ "
                "for (int lane = 0; lane < 32; ++lane) if ((lanes >> lane) & 1u) { if (rank == 0u) return lane; --rank; } "
                "return 0; }")
            self.helper_at[NTH_LANE] = min(self.helper_at.get(NTH_LANE, self.top), self.top)
            self._site(call, lambda: f"__shfl_sync({FULL}, {self.render(args[0])}, "
                                     f"{NTH_LANE}({lanes()}, (unsigned int)({self.render(args[1])})))")

    def _reduce(self, call: ci.Cursor, g: Group, args: list[ci.Cursor], top: int) -> None:
        op_type = _strip(args[2]).type
        op = _group_class(op_type)
        if op not in REDUCE_OPS:
            self._reduce_by_function(call, g, args, top)
            return
        t = op_type.get_pointee() if op_type.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE) else op_type
        value_type = t.get_template_argument_type(0).spelling if t.get_num_template_arguments() == 1 else ""
        if not value_type:
            value_args = fe.template_args(t.spelling)
            value_type = value_args[0].strip() if len(value_args) == 1 else ""
        if not value_type:
            return
        self._butterfly(call, g, args, top, f"cudacpu_cg_reduce_{op}", REDUCE_OPS[op], value_type)

    def _reduce_by_function(self, call: ci.Cursor, g: Group, args: list[ci.Cursor], top: int) -> None:
        """`cg::reduce(tile, v, op)` with `op` a `__device__` function of the program (a struct's
        combination, as an online softmax's max-and-sum): the same butterfly, combining with it."""
        fn = _function_named(args[2])
        value_type = _strip(args[1]).type.get_canonical().spelling
        if fn is None or not value_type:
            return
        self._butterfly(call, g, args, top, f"cudacpu_cg_reduce_by_{fn.spelling}", f"{fn.spelling}(v, w)", value_type)

    def _butterfly(self, call: ci.Cursor, g: Group, args: list[ci.Cursor], top: int, helper: str, combine: str,
                   value_type: str) -> None:
        """The reduction as a `__device__` helper: log2 N steps of `__shfl_xor_sync` over the tile,
        each lane combining its value `v` with its partner's `w`; every lane gets the result."""
        self.helpers[helper] = (
            f"template <unsigned int N_, class T_> __device__ __forceinline__ T_ {helper}(T_ v) {{ "
            f"for (unsigned int o = N_ / 2u; o > 0u; o /= 2u) {{ T_ w = __shfl_xor_sync({FULL}, v, (int)o, (int)N_); "
            f"v = {combine}; }} return v; }}")
        self.helper_at[helper] = min(self.helper_at.get(helper, top), top)
        self._site(call, lambda: f"{helper}<{g.n}, {value_type}>({self.render(args[1])})")


def _function_named(arg: ci.Cursor) -> ci.Cursor | None:
    """The function an operand names (`reduce_op`, `&reduce_op`), if it names one."""
    arg = _strip(arg)
    if arg.kind == K.UNARY_OPERATOR and next(arg.get_tokens(), None) is not None \
            and next(arg.get_tokens()).spelling == "&":
        arg = _strip(next(arg.get_children()))
    target = arg.referenced if arg.kind == K.DECL_REF_EXPR else None
    return target if target is not None and target.kind == K.FUNCTION_DECL else None


def _helper_place(tr: fe.Translation, tops: list[ci.Cursor], first: ci.Cursor) -> int | None:
    """Where a helper can go without moving any line: before the function that first needs it
    (its line is rewritten as a whole), or at the end of an earlier top-level declaration's line."""
    if first.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE):
        return first.extent.start.offset
    i = next(n for n, t in enumerate(tops) if t.extent.start.offset == first.extent.start.offset)
    for prev in reversed(tops[:i]):
        end = prev.extent.end.offset
        line_end = tr.source.find(b"\n", end)
        rest = tr.source[end: line_end if line_end >= 0 else len(tr.source)].decode()
        if rest.strip() in ("", ";"):
            return line_end if line_end >= 0 else len(tr.source)
        return None
    return None


def rewrite_cooperative_groups(tr: fe.Translation) -> str | None:
    """The file's text with the cooperative-group operations and CUB collectives of its device code
    rewritten into barriers and warp intrinsics; None where there are none."""
    if not tr.identifiers & (MARKERS | CUB_MARKERS):
        return None
    rw = _Rewriter(tr)
    tops = [top for top in tr.tu.cursor.get_children() if tr.in_main(top)]
    for top in tops:
        for c in top.walk_preorder():
            if c.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE) or not c.is_definition() \
                    or not (fe.is_kernel(c) or fe.is_device(c)):
                continue
            body = fe.body_of(c)
            if body is None:
                continue
            for x in body.walk_preorder():
                if x.kind == K.CALL_EXPR and tr.in_main(x):
                    rw.call(x, top.extent.start.offset)
    if not rw.sites:
        return None
    edits = fe.SourceEdits(tr)
    by_top = {t.extent.start.offset: t for t in tops}
    placed: dict[int, list[str]] = {}
    for helper, top in rw.helper_at.items():
        where = _helper_place(tr, tops, by_top[top])
        if where is None:  # no place that keeps the lines: the reductions stay as written (reported)
            rw.sites = {k: b for k, b in rw.sites.items() if helper not in b()}
            continue
        placed.setdefault(where, []).append(rw.helpers[helper])
    for where, texts in placed.items():
        edits.replace(where, where, " ".join(texts) + " ")
    outer = []
    for (s, e) in sorted(rw.sites, key=lambda k: (k[0], -k[1])):
        if outer and s < outer[-1][1]:
            continue  # inside one already taken: rendered as part of it
        outer.append((s, e))
    for s, e in outer:
        edits.replace(s, e, rw.sites[(s, e)]())
    return edits.apply() if edits.edits else None
