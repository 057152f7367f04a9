"""The kernel's `__shared__` memory: the buffers (static, dynamic, declared in inlined
functions) that become one variable per block, and the facts about them the cuts depend on.

Part of `lowering.KernelLowering` (a mixin: its methods read and write the lowering's state)."""

from __future__ import annotations

import clang.cindex as ci

from . import frontend as fe
from .exchanges import exchanged_between_barriers
from .lowering_common import Ctx, K, child_cursors


class SharedMemory:
    @staticmethod
    def _shared_memory(kernel: ci.Cursor) -> set[int]:
        """The kernel's `__shared__` variables and the local pointers made from them (`T* b = a_shared +
        K + 2;`, and pointers made from those), by declaration hash."""
        memory: set[int] = set()
        for x in kernel.walk_preorder():
            if x.kind != K.VAR_DECL:
                continue
            if fe.is_shared(x):
                memory.add(x.hash)
            elif x.type.get_canonical().kind == ci.TypeKind.POINTER and any(
                    r.kind == K.DECL_REF_EXPR and r.referenced is not None and r.referenced.hash in memory
                    for r in x.walk_preorder()):
                memory.add(x.hash)
        return memory

    def _unsynchronized_shared(self, kernel: ci.Cursor) -> set[int]:
        """The `__shared__` variables, and the local pointers initialized from them, that threads
        exchange values through without a barrier: all those a kernel with no barrier nor warp
        intrinsic reads (a DCT's rows written, then its columns read), and in other kernels those
        a thread reads from a neighbour's slot between two barriers (tools/cuda/exchanges.py).
        Such code was written for lockstep warps, before Volta: what `volatile` says elsewhere."""
        memory = self.shared_memory
        if not memory:
            return memory
        if self._calls_sync(kernel):
            return exchanged_between_barriers(kernel, memory, self.ctx.written, self._is_sync_call)
        # Memory that is only stored to exchanges nothing.
        stores = self._store_targets(kernel)
        read = any(r.kind == K.DECL_REF_EXPR and r.referenced is not None and r.referenced.hash in memory
                   and (r.extent.start.offset, r.extent.end.offset) not in stores for r in kernel.walk_preorder())
        return memory if read else set()

    def _store_targets(self, fn: ci.Cursor) -> set[tuple[int, int]]:
        """Extents of the variables that plain assignments store through (`s[i] = v`, `*p = v`)."""
        out = set()
        for x in fn.walk_preorder():
            if x.kind == K.BINARY_OPERATOR and fe.operator_of(x) == "=":
                target = fe.strip(child_cursors(x)[0])
                while target.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.UNARY_OPERATOR, K.PAREN_EXPR, K.UNEXPOSED_EXPR) \
                        and child_cursors(target):
                    target = fe.strip(child_cursors(target)[0])
                if target.kind == K.DECL_REF_EXPR:
                    out.add((target.extent.start.offset, target.extent.end.offset))
        return out

    def _add_shared(self, s: ci.Cursor, ctx: Ctx) -> None:
        decls = [v for v in child_cursors(s) if v.kind == K.VAR_DECL]
        if len(decls) == 1:
            self.shared_as_written.add(decls[0].hash)
        for v in decls:
            key = self._shared_key(v, ctx)
            if key in self.shared:  # the same instantiation's, again: one per block
                continue
            name = v.spelling
            if name in {n for n, _, _ in self.shared.values()} or (name in self.block_names):
                name = self._fresh(name)
            self.block_names.add(name)
            self.shared[key] = (name, v, ctx)
            if v.type.kind == ci.TypeKind.INCOMPLETEARRAY or v.storage_class == ci.StorageClass.EXTERN:
                self.uses_dynamic_shared = True

    def _shared_key(self, v: ci.Cursor, ctx: Ctx | None) -> "int | tuple[int, str]":
        """Where a __shared__ declaration's variable is kept: one per instantiation of a template's
        (a helper inlined for int and for float keeps two arrays), one per declaration otherwise."""
        if ctx is None or not ctx.subst:
            return v.hash
        return (v.hash, self._subst_type(v.type.spelling, ctx))

    def _shared_entry(self, v: ci.Cursor, ctx: Ctx | None) -> "tuple[str, ci.Cursor, Ctx | None] | None":
        return self.shared.get(self._shared_key(v, ctx)) or self.shared.get(v.hash)

    def _add_shared_decl(self, v: ci.Cursor, ctx: Ctx | None) -> None:
        name = v.spelling
        if name in {n for n, _, _ in self.shared.values()}:
            name = self._fresh(name)
        self.shared[self._shared_key(v, ctx)] = (name, v, ctx)
        if v.type.kind == ci.TypeKind.INCOMPLETEARRAY:
            self.uses_dynamic_shared = True

    def _shared_window_index(self, subscript: ci.Cursor) -> tuple[int, int] | None:
        """The extent of a subscript's index where it is a 32-bit unsigned value that a subtraction or
        a complement may wrap below zero, indexing __shared__ memory (an array, or a local pointer made
        from one), else None."""
        children = child_cursors(subscript)
        if len(children) != 2 or children[1].type.get_canonical().kind != ci.TypeKind.UINT or not any(
                c.kind in (K.UNARY_OPERATOR, K.BINARY_OPERATOR) and fe.operator_of(c) in ("~", "-")
                for c in children[1].walk_preorder()):
            return None
        base = fe.strip(children[0])
        target = base.referenced if base.kind == K.DECL_REF_EXPR else None
        if target is None or not (fe.is_shared(target) or target.hash in self.shared_memory):
            return None
        return children[1].extent.start.offset, children[1].extent.end.offset
