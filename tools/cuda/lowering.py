"""MCUDA-style lowering of one CUDA kernel to readable C++ with OpenMP.

Convention of the output: kernel `K(params)` becomes, in `namespace cudacpu_kernels`,

    template <...as written...>
    void K(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, params...)

It runs the grid's blocks as `#pragma omp for collapse(3)` over (z, y, x) and, inside a block,
the threads as loops (x fastest). The kernel body is cut at every barrier (`__syncthreads`,
`__syncwarp`) and at every warp intrinsic into *regions*; each region is one loop over the
block's threads ("deep fission": a loop or `if` that contains a barrier is hoisted out of the
thread loop and its body cut the same way). Inside a thread loop `threadIdx`/`blockIdx` are
`const uint3` locals, so the kernel text is kept as written.

- Variables that live across a cut are stored per thread (`cudacpu::PerThread<T> v` and
  `v[tid]`), unless they can be recomputed (a single assignment from thread coordinates,
  parameters and constants: then the declaration is repeated). Block-uniform variables that a
  hoisted loop or branch reads are declared once per block.
- A branch with a thread-dependent condition that contains a warp intrinsic is run *masked*:
  the condition is stored per thread and each region of its body skips the threads that did
  not take it. A `__syncthreads` under such a condition synchronizes the threads that reached
  it; where some but not all threads of a block did (undefined in CUDA), the run says so on
  stderr, naming the barrier's file and line. A loop with barriers whose trip count may differ between threads runs masked
  too (`in_loop[tid]`, cleared by the condition or by `break`) while some thread is in it.
- `return` makes the thread inactive for the rest of the kernel (`exited[tid]`), never ends
  the loop over threads.
- A warp intrinsic is a warp-level exchange: in the region before the cut every lane puts its
  value in a `cudacpu::WarpExchange` slot; in the region after, lanes read their source lane.
  A source lane that did not take part (beyond the block, masked, exited: undefined in CUDA)
  reads as zero; a source outside the `width` segment gives the caller's own value (as CUDA).
- Warp-synchronous code of old (memory accessed through `volatile` pointers or arrays, no
  barrier) runs one statement at a time for the whole block, which is what lockstep warps gave
  it; a store to volatile memory is two steps, every thread computing its value before any
  thread stores it (lockstep lanes read their operands together).
- `__device__` functions that contain barriers or warp intrinsics are inlined (their variables
  prefixed with the function's name); others are kept as written.
- Whatever cannot be lowered faithfully raises `LoweringUnsupported` (feature, file, line).
"""

from __future__ import annotations

import re

import clang.cindex as ci

from . import frontend as fe
from . import kernel_ir as ir
from . import printer
from .frontend import Translation
from .inlining import Inlining
from .lowering_analysis import Analysis
from .lowering_common import (BAny, BCheck, BGridSync, BIf, BJump, BLoop, BReset, BScope, Ctx, K, KEYWORD_STATEMENTS,
                              LOWERING_NAMES, LoweringUnsupported, PRELUDE, Region, Var, ENDS_IN_SEMICOLON,
                              array_parts, child_cursors, file_of, spins_on_global_memory, cursor_tokens)
from .printer import declarator
from .region_splitting import RegionSplitting
from .rendering import Rendering
from .shared_memory import SharedMemory

# What other modules take from here: the support code, the lowering's own names, the keywords it respaces.
__all__ = ["KEYWORD_STATEMENTS", "K", "KernelLowering", "LOWERING_NAMES", "LoweringUnsupported", "PRELUDE"]


class KernelLowering(Analysis, RegionSplitting, Inlining, SharedMemory, Rendering):
    """One kernel's lowering: `lower_body` cuts it into regions (region_splitting.py, inlining.py),
    `analyze` decides what crosses the cuts (lowering_analysis.py, shared_memory.py), `build_ir`
    renders its statements (rendering.py) into the IR that printer.py prints."""

    def __init__(self, tr: Translation, kernel: ci.Cursor, sync_functions: set[fe.DefinitionKey], coord_functions: set[fe.DefinitionKey]):
        self.tr = tr
        self.kernel = kernel
        self.sync_functions = sync_functions  # offsets of device functions with barriers / warp intrinsics
        self.coord_functions = coord_functions  # ... that read thread coordinates
        self.ctx = Ctx(fn=kernel)
        self.ctx.written = self._written(kernel)
        self.inlined: list[Ctx] = []  # each inlined call of a __device__ function
        self.hoisted_aliases: set[int] = set()  # typedef and using statements declared above the block loop
        self.regions: list[Region] = []
        self.items: list = []
        self.vars: list[Var] = []
        self.shared: dict[int | tuple[int, str], tuple[str, ci.Cursor, Ctx | None]] = {}
        self.sites = 0
        self.site_types: dict[int, str] = {}
        self.has_return = False
        self.used_names: set[str] = set(tr.identifiers)
        self.block_names: set[str] = {p.spelling for p in fe.params_of(kernel)}
        self.uses_coord_functions = False
        self.n = {n: self._fresh(n) for n in LOWERING_NAMES}
        self._sync_cache: dict[tuple[int, int], bool] = {}
        self._unresolved_cache: dict[tuple[int, int], bool] = {}  # _unresolved_reads_coordinates
        self._statement_expressions: dict[fe.DefinitionKey, list[tuple[int, int]]] = {}
        self._constant_locals: dict[fe.DefinitionKey, dict[str, ci.Cursor]] = {}
        self.shared_memory = self._shared_memory(kernel)
        self.lockstep_memory = self._unsynchronized_shared(kernel)
        self.waits_on_blocks = spins_on_global_memory(kernel)
        self.grid_sync = False  # region splitting met a grid.sync()
        self.loop_flags: list[tuple] = []  # masked loops being lowered, innermost last
        self.uses_dynamic_shared = False
        self.shared_as_written: set[int] = set()  # shared declarations re-emitted as written
        self.exit_flags = False  # returned threads are remembered in `exited[tid]`
        # State of the region being built (build_ir renders its statements).
        self._cur_region: Region | None = None
        self._region_sets_coords = False
        self._region_needs_label = False
        self._label = ""

    def _fresh(self, base: str) -> str:
        name, i = base, 2
        while name in self.used_names:
            name, i = f"{base}_{i}", i + 1
        self.used_names.add(name)
        return name

    def _compile_time_declarations(self) -> list[str]:
        """The `constexpr`, alias and `using` declarations at the top of the kernel's body and of each
        inlined function's: the per-thread, shared and recomputed declarations, in any region,
        may name them (`float x[kNChunks][kNElts]`, `vec_t`, an inlined function's `N`). Aliases
        keep their names; an inlined function's constants take its prefix."""
        aliases = (K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL, K.NAMESPACE_ALIAS, K.USING_DIRECTIVE, K.USING_DECLARATION)
        lines = []
        for ctx in (self.ctx, *self.inlined):
            body = fe.body_of(ctx.fn)
            for d in child_cursors(body) if body is not None else []:
                parts = child_cursors(d)
                if d.kind != K.DECL_STMT or not parts:
                    continue
                as_written = self.tr.text(d.extent.start.offset, self._after_semicolon(d.extent.end.offset, d),
                                          file_of(d)).strip()
                if all(v.kind in aliases for v in parts):
                    lines.append(as_written if ctx is self.ctx else self._subst_type(as_written, ctx))
                    self.hoisted_aliases.add(d.hash)  # not declared again where it was written
                elif any(t.spelling == "constexpr" for t in d.get_tokens()):
                    lines += [as_written] if ctx is self.ctx else [
                        self._decl_text(var, None) for v in parts if (var := self.lookup(v, ctx)) is not None]
        return lines

    def build_ir(self) -> ir.Kernel:
        """The lowered kernel as IR. Every decision that reads a cursor is taken here; the leaves
        (the user's statements and expressions) are rendered in the order the printer prints them,
        since rendering names fresh temporaries."""
        n = self.n
        self.exit_flags = self.has_return and len(self.regions) > 1
        self._symbols: dict[int, ir.Symbol] = {}
        kernel = ir.Kernel(name=self.kernel.spelling, names=ir.Names(**n),
                           sets_coordinates=self.uses_coord_functions, spins_on_blocks=self.waits_on_blocks,
                           grid_sync=self.grid_sync)
        if self.exit_flags:
            kernel.exit_flags = ir.PerThread(ir.Symbol(n["exited"], "bool", per_thread=True), "bool")
        # what is declared outside a thread loop (split or shared) may name them
        kernel.compile_time = self._compile_time_declarations() if len(self.regions) > 1 or self.shared else []
        kernel.body = self._block_nodes(self.items)
        kernel.per_thread = [ir.PerThread(self._symbol(v), v.per_thread_type())
                             for v in sorted(self.vars, key=lambda v: v.order) if v.promoted]
        if self.sites:
            kernel.warp_exchange = ir.WarpExchange(ir.Symbol(n["warp"], "cudacpu::WarpExchange"), self.sites)
        if self.uses_dynamic_shared:
            kernel.dynamic_shared = ir.DynamicSharedStorage(ir.Symbol(n["dynamic_shared"], "cudacpu::SharedBuffer"))
        kernel.shared = self._shared_buffers("\n".join(printer.print_nodes(kernel.body, kernel)))
        self._signature(kernel)
        return kernel

    def _symbol(self, var: Var) -> ir.Symbol:
        """The IR's symbol of a variable: one per variable, shared by every node that names it."""
        sym = self._symbols.get(id(var))
        if sym is None:
            sym = self._symbols[id(var)] = ir.Symbol(var.name, var.type, per_thread=var.promoted,
                                                    reference=var.promoted and var.reference)
        return sym

    def _signature(self, kernel: ir.Kernel) -> None:
        """The template header, the name and the parameters, as the kernel wrote them."""
        k = self.kernel
        if k.kind == K.FUNCTION_TEMPLATE:
            toks = cursor_tokens(k)
            depth = 0
            for t in toks[1:]:
                depth += t.spelling == "<"
                depth -= t.spelling == ">"
                depth -= 2 * (t.spelling == ">>")
                if depth <= 0:
                    kernel.template_header = self.tr.text(k.extent.start.offset, t.extent.end.offset) + "\n"
                    break
        if k.kind == K.FUNCTION_DECL and self.tr.text(k.extent.start.offset, k.location.offset).lstrip().startswith("template"):
            # An explicit specialization: `template <> __global__ void k<__half>(...)`.
            kernel.template_header = "template <>\n"
            kernel.name = self.tr.text(k.location.offset, self._paren_of_params(k)).strip()
        params = fe.params_of(k)
        kernel.parameters = [ir.Symbol(p.spelling, p.type.spelling) for p in params]
        if params:
            kernel.parameters_as_written = self.tr.text(params[0].extent.start.offset, params[-1].extent.end.offset)

    def _paren_of_params(self, fn: ci.Cursor) -> int:
        """Where the parameter list's `(` of a function declaration is."""
        depth = 0
        for t in cursor_tokens(fn):
            if t.extent.start.offset < fn.location.offset:
                continue
            depth += t.spelling == "<"
            depth -= t.spelling == ">"
            depth -= 2 * (t.spelling == ">>")
            if t.spelling == "(" and depth <= 0:
                return t.extent.start.offset
        return fn.location.offset + len(fn.spelling)

    def _shared_buffers(self, body_text: str) -> list[ir.SharedBuffer]:
        """The `__shared__` variables the body names (in `body_text`, the printed body), one per block."""
        out = []
        for name, v, ctx in self.shared.values():
            if not re.search(rf"\b{re.escape(name)}\b", body_text):
                continue
            if v.type.kind == ci.TypeKind.INCOMPLETEARRAY or v.storage_class == ci.StorageClass.EXTERN:
                elem = v.type.element_type.spelling if v.type.kind == ci.TypeKind.INCOMPLETEARRAY else v.type.spelling
                elem = self._subst_type(elem, ctx) if ctx is not None else elem
                out.append(ir.SharedBuffer(ir.Symbol(name, f"{elem} *"), elem, dynamic=True))
                continue
            type_text = self._subst_type(v.type.spelling, ctx) if ctx is not None else v.type.spelling
            if v.hash in self.shared_as_written and ctx is not None and not ctx.subst:
                text_v = self.render(v, ctx, None)
                text_v = re.sub(r"\b(__shared__|static|extern)\s*", "", text_v).strip()
                if name != v.spelling:
                    text_v = re.sub(rf"\b{re.escape(v.spelling)}\b", name, text_v, count=1)
            else:
                text_v = declarator(type_text, name)
            elem, extents = array_parts(type_text)
            out.append(ir.SharedBuffer(ir.Symbol(name, type_text), elem, extents=extents, declaration=text_v))
        return out

    def _block_nodes(self, items: list) -> list:
        out: list = []
        for it in items:
            if isinstance(it, Region):
                out.append(self._region_node(it))
            elif isinstance(it, BScope):
                out.append(ir.Scope(self._block_nodes(it.items)))
            elif isinstance(it, BIf):
                cond = self._block_text(it.cond)
                then = self._block_nodes(it.then)
                out.append(ir.If(cond, then, self._block_nodes(it.orelse) if it.orelse is not None else None))
            elif isinstance(it, BLoop):
                cond = self._block_text(it.cond) if it.cond is not None else None
                init = inc = None
                if it.kind == "for":
                    init = self._block_text(it.init) if it.init is not None else None
                    inc = self._block_text(it.inc) if it.inc is not None else None
                out.append(ir.Loop(it.kind, init, cond, inc, self._block_nodes(it.body)))
            elif isinstance(it, BJump):
                out.append(ir.Jump(it.kind))
            elif isinstance(it, BReset):
                out.append(ir.ResetFlag(self._symbol(it.flag)))
            elif isinstance(it, BCheck):
                out.append(ir.BarrierCheck(self._masks(it.masks), it.where))
            elif isinstance(it, BGridSync):
                out.append(ir.GridBarrier())
            elif isinstance(it, BAny):
                out.append(ir.AnyThread(self._symbol(it.flag)))
        return out

    def _masks(self, masks: tuple) -> list[ir.Mask]:
        return [ir.Mask(self._symbol(mask), polarity) for mask, polarity in masks]

    def _block_text(self, part: tuple[ci.Cursor, Ctx]) -> str:
        c, ctx = part
        text = self._render_decl(c, ctx, None, block=True) if c.kind == K.DECL_STMT else self.render(c, ctx, None)
        return " ".join(text.split())

    def _region_node(self, r: Region) -> ir.Region:
        tid = self.n["tid"]
        self._region_sets_coords = False
        self._region_needs_label = False
        self._label = f"next_thread_{r.id}"
        self._cur_region = r
        node = ir.Region(r.id)
        node.recomputed = [self._decl_text(var, tid) for var in r.remat]
        for item in r.items:
            thread_node = self._thread_node(item, tid)
            if thread_node is not None:
                node.items.append(thread_node)
        node.needs_label = self._region_needs_label
        node.sets_coordinates = self._region_sets_coords
        loop_flags = [it[1] for it in r.items if it[0] == "loopcond"]  # checked by the loop's own condition
        node.guards = self._masks(tuple((mask, polarity) for mask, polarity in r.masks if mask not in loop_flags))
        node.hoisted = [self._decl_text(var, None) for var in r.hoisted]
        node.exchange_begins = list(r.begins)
        return node

    def _decl_text(self, var: Var, tid: str | None) -> str:
        init, ictx = var.init  # type: ignore[misc]
        if var.cursor is not None and var.cursor.kind == K.VAR_DECL:
            return self._render_var(var.cursor, var, var.ctx, tid)
        return f"{declarator(var.type, var.name)} = {self.render(init, ictx, tid)};"

    def _thread_node(self, item: tuple, tid: str):
        tag = item[0]
        if tag == "stmt":
            s, ctx = item[1], item[2]
            if s.hash in self.hoisted_aliases:
                return None
            text = self.render(s, ctx, tid)
            if not text.strip():
                return None
            end = s.extent.end.offset
            # An expression (`d[i] = {x, y}`, a lambda), a declaration or a jump ends in `;` even after a `}`.
            needs_semicolon = s.kind.is_expression() or s.kind in ENDS_IN_SEMICOLON
            if s.kind != K.COMPOUND_STMT and not text.rstrip().endswith((";",) if needs_semicolon else (";", "}")):
                text += self.tr.text(end, self._after_semicolon(end, s), file_of(s)).strip() or ";"
            return ir.Statement(text, s.extent.start.column)
        if tag in ("decl", "assign"):
            var, (init, ictx) = item[1], item[2]
            if tag == "decl" and var.drop_decl:
                return None
            value = self.render(init, ictx, tid)
            return (ir.Declare if tag == "decl" else ir.Assign)(self._symbol(var), value)
        if tag == "expr":
            return ir.Statement(self.render(item[1], item[2], tid) + ";", item[1].extent.start.column)
        if tag == "set":
            return ir.SetFlag(self._symbol(item[1]), item[2])
        if tag == "loopcond":
            flag, (cond, cctx) = item[1], item[2]
            return ir.LoopCondition(self._symbol(flag), " ".join(self.render(cond, cctx, tid).split()))
        if tag == "lockread":
            _, tmp, lhs, op, rhs, ctx = item
            value = " ".join(self.render(rhs, ctx, tid).split())
            if op != "=":
                value = f"({' '.join(self.render(lhs, ctx, tid).split())}) {op[:-1]} ({value})"
            return ir.LockstepLoad(self._symbol(tmp), value)
        if tag == "store":
            return ir.LockstepStore(" ".join(self.render(item[1], item[3], tid).split()), self._symbol(item[2]))
        if tag == "put":
            site, (kind, value), ctx = item[1], item[2], item[3]
            v = self.render(value, ctx, tid)
            intrinsic = self._site_call(site, ctx)
            if kind == "pred":
                return ir.ExchangePut(site, fe.call_name(intrinsic[0]), v, None)
            return ir.ExchangePut(site, fe.call_name(intrinsic[0]), v, self._exchange_type(*intrinsic, ctx))
        raise AssertionError(tag)

    def _site_call(self, site: int, ctx: Ctx) -> tuple[ci.Cursor, list[ci.Cursor]]:
        """The warp intrinsic of an exchange site and its arguments."""
        for rep in ctx.replacements.values():
            if rep[0] == "exchange" and rep[1] == site:
                return rep[2], rep[4]
        raise AssertionError(site)
