"""The kernel's body cut into regions at every barrier and warp exchange: the block-level
structure (branches and loops that contain cuts, masked branches and loops for thread-dependent
conditions, lockstep stores of warp-synchronous code).

Part of `lowering.KernelLowering` (a mixin: its methods read and write the lowering's state)."""

from __future__ import annotations

import re

import clang.cindex as ci

from . import frontend as fe
from .lowering_common import (BAny, BCheck, BGridSync, BIf, BJump, BLoop, BReset, BScope, Ctx, K, LOOPS, LoweringUnsupported,
                              Region, Var, child_cursors, early_return_condition, for_parts, if_parts, stmt_list,
                              unsupported_feature, while_parts)


class RegionSplitting:
    def _lockstep_store(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list) -> bool:
        """`v[i] op= e` on volatile memory as lockstep threads run it: every thread reads its
        operands (one region), then every thread stores (the next). False where `s` is no such store."""
        bare = fe.strip(s)
        if bare.kind not in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            return False
        op = fe.operator_of(bare)
        parts = child_cursors(bare)
        if len(parts) != 2 or not op.endswith("=") or op in ("==", "!=", "<=", ">=") or not self._volatile(parts[0]):
            return False
        lhs, rhs = parts
        value_type = re.sub(r"\bvolatile\b", "", lhs.type.spelling).strip()
        if not value_type or re.search(r"\bauto\b|dependent|<|\[", value_type):
            return False
        tmp = Var(name=self._fresh("lockstep_value"), type=self._subst_type(value_type, ctx), cursor=None, ctx=ctx,
                  synthetic=True, promoted=True, order=len(self.vars))
        self.vars.append(tmp)
        self.cut(out)
        self.region(out, masks).items.append(("lockread", tmp, lhs, op, rhs, ctx))
        self.cut(out)
        self.region(out, masks).items.append(("store", lhs, tmp, ctx))
        self.cut(out)
        return True

    def region(self, out: list, masks: tuple) -> Region:
        if out and isinstance(out[-1], Region) and not out[-1].closed and out[-1].masks == masks:
            return out[-1]
        r = Region(id=len(self.regions), masks=masks, loop_flag=self.loop_flags[-1] if self.loop_flags else None)
        self.regions.append(r)
        out.append(r)
        return r

    def cut(self, out: list) -> None:
        if out and isinstance(out[-1], Region):
            out[-1].closed = True

    def lower_body(self) -> None:
        self.has_return = bool(fe.returns_of(fe.body_of(self.kernel)))
        self.lower_seq(stmt_list(fe.body_of(self.kernel)), self.ctx, (), self.items, in_loop=False)

    def lower_seq(self, stmts: list[ci.Cursor], ctx: Ctx, masks: tuple, out: list, in_loop: bool) -> None:
        for s in stmts:
            self.lower_stmt(s, ctx, masks, out, in_loop)

    def lower_stmt(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list, in_loop: bool) -> None:
        while s.kind in (K.UNEXPOSED_STMT, getattr(K, "ATTRIBUTED_STMT", K.UNEXPOSED_STMT)) and self.contains_sync(s):
            inner = [c for c in child_cursors(s) if c.kind.is_statement()]
            if len(inner) != 1:
                break
            s = inner[0]  # `#pragma unroll` around a loop with barriers: the loop is hoisted anyway
        k = s.kind
        if k == K.DECL_STMT and any(fe.is_shared(v) for v in child_cursors(s)):
            self._add_shared(s, ctx)
            return
        if k == K.ASM_STMT:
            raise unsupported_feature("inline PTX asm", s, "inline assembly (asm) has no CPU meaning")
        if k == K.RETURN_STMT and ctx.is_kernel:
            self.has_return = True
        block_level = self.contains_sync(s) or (in_loop and self._escapes(s))
        if not block_level:
            if k == K.NULL_STMT:
                return
            self.region(out, masks).items.append(("stmt", s, ctx))
            return
        if k in (K.BREAK_STMT, K.CONTINUE_STMT):
            if masks:
                raise unsupported_feature("break in divergent code", s, "break/continue of a loop with barriers under a "
                                   "thread-dependent condition")
            self.cut(out)
            out.append(BJump("break" if k == K.BREAK_STMT else "continue"))
            return
        if k == K.COMPOUND_STMT:
            inner: list = []
            self.cut(out)
            self.lower_seq(child_cursors(s), ctx, masks, inner, in_loop)
            self.cut(inner)
            out.append(BScope(inner))
            return
        if k == K.IF_STMT:
            self._lower_if(s, ctx, masks, out, in_loop, if_parts(s))
            return
        if (choice := fe.strip(s)).kind == K.CONDITIONAL_OPERATOR:
            # `c ? __syncthreads() : __syncwarp();` is `if (c) ... else ...`
            cond, then, orelse = child_cursors(choice)
            self._lower_if(s, ctx, masks, out, in_loop, (cond, then, orelse, False))
            return
        if k in LOOPS:
            self._lower_loop(s, ctx, masks, out)
            return
        if k in (K.SWITCH_STMT, K.LABEL_STMT, K.GOTO_STMT, K.CASE_STMT, K.DEFAULT_STMT):
            if not self._calls_sync(s) and not (in_loop and self._escapes(s)):
                # only volatile memory made it block-level: the whole switch runs for every
                # thread before the next statement, lockstep at the switch's granularity
                self.region(out, masks).items.append(("stmt", s, ctx))
                self.cut(out)
                return
            raise unsupported_feature("barrier in switch", s, "a barrier or warp intrinsic inside a switch/goto")
        self._lower_sync_statement(s, ctx, masks, out)

    def _branch_mask(self, cond: ci.Cursor, ctx: Ctx, tainted: bool, masks: tuple, out: list) -> Var:
        """Each thread's value of a thread-dependent condition, kept for the regions it masks."""
        mask = Var(name=self._fresh("took_branch"), type="bool", cursor=None, ctx=ctx, synthetic=True, branch=True,
                   promoted=True, tainted=tainted, order=len(self.vars))
        self.vars.append(mask)
        self.region(out, masks).items.append(("assign", mask, (cond, ctx)))
        self.cut(out)
        return mask

    def _lower_guarded(self, stmts: list[ci.Cursor], ctx: Ctx, masks: tuple, out: list) -> None:
        """The statements of an inlined void function, where `if (c) return;` leaves the rest to the
        threads for which c is false (at block level where c is uniform)."""
        for i, s in enumerate(stmts):
            cond = early_return_condition(s)
            if cond is None:
                self.lower_stmt(s, ctx, masks, out, in_loop=False)
                continue
            kind, tainted = self.expr_class(cond, ctx)
            if kind == "uniform" and not masks:
                self.cut(out)
                rest: list = []
                self._lower_guarded(stmts[i + 1:], ctx, masks, rest)
                self.cut(rest)
                out.append(BIf((cond, ctx), [], rest))
            else:
                mask = self._branch_mask(cond, ctx, tainted, masks, out)
                self._lower_guarded(stmts[i + 1:], ctx, masks + ((mask, False),), out)
                self.cut(out)
            return

    def _lower_if(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list, in_loop: bool,
                  parts: tuple[ci.Cursor, ci.Cursor, ci.Cursor | None, bool]) -> None:
        """An if (or a ?: statement) around code with barriers: `parts` are its condition, branches and
        whether it has an init-statement."""
        cond, then, orelse, has_init = parts
        branches_sync = any(x is not None and (self.contains_sync(x) or (in_loop and self._escapes(x)))
                            for x in (then, orelse))
        if not branches_sync:  # only the condition synchronizes: an exchange statement
            self._lower_sync_statement(s, ctx, masks, out)
            return
        if has_init or self._calls_sync(cond):  # (volatile reads are evaluated into the branch's mask)
            raise unsupported_feature("barrier in condition", s, "an if with an init-statement or a warp intrinsic in its "
                               "condition around code with barriers")
        kind, tainted = self.expr_class(cond, ctx)
        if kind == "uniform" and not masks:
            self.cut(out)
            then_items: list = []
            self.lower_seq(stmt_list(then), ctx, masks, then_items, in_loop)
            self.cut(then_items)
            else_items = None
            if orelse is not None:
                else_items = []
                self.lower_seq(stmt_list(orelse), ctx, masks, else_items, in_loop)
                self.cut(else_items)
            out.append(BIf((cond, ctx), then_items, else_items))
            return
        if in_loop and any(x is not None and self._escapes(x) for x in (then, orelse)):
            raise unsupported_feature("break in divergent code", s, "break/continue under a thread-dependent condition in a "
                               "loop with barriers")
        mask = self._branch_mask(cond, ctx, tainted, masks, out)
        self.lower_seq(stmt_list(then), ctx, masks + ((mask, True),), out, in_loop)
        self.cut(out)
        if orelse is not None:
            self.lower_seq(stmt_list(orelse), ctx, masks + ((mask, False),), out, in_loop)
            self.cut(out)

    def _has_barrier(self, c: ci.Cursor) -> bool:
        for call in fe.calls_in(c):
            if fe.call_name(call) in fe.BARRIERS:
                return True
            d = self._sync_definition(call)
            if d is not None and self._has_barrier(d):
                return True
        return False

    def _lower_loop(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list) -> None:
        if s.kind == K.FOR_STMT:
            init, cond, inc, body = for_parts(s)
            kind = "for"
        elif s.kind == K.WHILE_STMT:
            (cond, body), init, inc, kind = while_parts(s), None, None, "while"
        elif s.kind == K.DO_STMT:
            ch = child_cursors(s)
            body, cond, init, inc, kind = ch[0], ch[-1], None, None, "do"
        else:
            raise unsupported_feature("range-for with barriers", s, "a range-based for containing barriers")
        for part in (init, cond, inc):
            if part is not None and self._calls_sync(part):
                raise unsupported_feature("warp intrinsic in loop header", s, "a warp intrinsic in a loop header")
        loop_vars: list[Var] = []
        if init is not None and init.kind == K.DECL_STMT:
            loop_vars = [self.lookup(v, ctx) for v in child_cursors(init) if v.kind == K.VAR_DECL]
        # The loop runs once per block: its variables are block-uniform when the header is
        # (assignments to them in the header allowed) and the body does not assign them.
        own = {v.cursor.hash for v in loop_vars if v.cursor is not None}
        inits = [v.init[0] for v in loop_vars if v.init is not None]
        for var in loop_vars:
            var.kind, var.block_level = "uniform", True
        parts = [p for p in (init, cond, inc) if p is not None and p.kind != K.DECL_STMT] + inits
        uniform = all(self.expr_class(p, ctx, allow_assign=own)[0] == "uniform" for p in parts)
        if uniform and body is not None and own & self._written(body):
            uniform = False
        if uniform:
            mark_regions, mark_out = len(self.regions), len(out)
            try:
                self.cut(out)
                items: list = []
                self.lower_seq(stmt_list(body), ctx, masks, items, in_loop=True)
                self.cut(items)
                out.append(BLoop(kind, (init, ctx) if init is not None else None, (cond, ctx) if cond is not None else None,
                                 (inc, ctx) if inc is not None else None, items))
                return
            except LoweringUnsupported as exc:
                if exc.feature != "break in divergent code":
                    raise
                del self.regions[mark_regions:]
                del out[mark_out:]
        for var in loop_vars:
            var.kind, var.block_level = "none", False
        self._lower_masked_loop(kind, init, cond, inc, body, ctx, masks, out)

    def _lower_masked_loop(self, kind, init, cond, inc, body, ctx: Ctx, masks: tuple, out: list) -> None:
        """A loop whose trip count may differ between threads: every thread keeps a flag
        `in_loop[tid]`; the block iterates while some thread is still in the loop and each
        region of the body skips the threads that left it (break clears the flag)."""
        tainted = any(self.expr_class(p, ctx)[1] for p in (init, cond) if p is not None)
        flag = Var(name=self._fresh("in_loop"), type="bool", cursor=None, ctx=ctx, synthetic=True, promoted=True,
                   tainted=tainted, order=len(self.vars))
        self.vars.append(flag)
        self.cut(out)
        out.append(BReset(flag))
        r = self.region(out, masks)
        if init is not None:
            r.items.append(("stmt", init, ctx) if init.kind == K.DECL_STMT else ("expr", init, ctx))
        r.items.append(("set", flag, "true"))
        self.cut(out)
        loop: list = []

        def condition() -> None:
            if cond is not None:
                self.region(loop, masks).items.append(("loopcond", flag, (cond, ctx)))
                self.cut(loop)
            loop.append(BAny(flag))

        skip = None
        if self._has_own_continue(body):  # `continue` skips the rest of the iteration
            skip = Var(name=self._fresh("skipped"), type="bool", cursor=None, ctx=ctx, synthetic=True, promoted=True,
                       order=len(self.vars))
            self.vars.append(skip)
            loop.append(BReset(skip))
        if kind != "do":
            condition()
        self.loop_flags.append((flag, skip))
        body_masks = masks + ((flag, True),) + (((skip, False),) if skip is not None else ())
        try:
            self.lower_seq(stmt_list(body), ctx, body_masks, loop, in_loop=False)
        finally:
            self.loop_flags.pop()
        self.cut(loop)
        if inc is not None:
            self.region(loop, masks + ((flag, True),)).items.append(("expr", inc, ctx))
            self.cut(loop)
        if kind == "do":
            condition()
        out.append(BLoop("while", None, None, None, loop))

    def _has_own_continue(self, body: ci.Cursor | None) -> bool:
        def visit(x: ci.Cursor) -> bool:
            if x.kind == K.CONTINUE_STMT:
                return True
            return x.kind not in LOOPS and any(visit(ch) for ch in x.get_children())

        return body is not None and visit(body)

    def _lower_sync_statement(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list) -> None:
        """An expression/declaration/if whose own expressions call barriers, warp intrinsics or
        synchronizing device functions."""
        calls = self._own_sync_calls(s, skip_stmts=True)
        bare = fe.strip(s) if s.kind != K.DECL_STMT else s
        if len(calls) == 1 and bare.kind == K.CALL_EXPR and (calls[0].extent.start.offset, calls[0].extent.end.offset) == (
                bare.extent.start.offset, bare.extent.end.offset):
            name = fe.call_name(calls[0])
            if name in ("__syncthreads", "__syncwarp", fe.GRID_SYNC):
                self.cut(out)
                if name == fe.GRID_SYNC:
                    self.grid_sync = True
                    out.append(BGridSync())
                elif name == "__syncthreads" and any(m.branch and m.tainted for m, _ in masks):
                    # Under a branch on threadIdx (a loop's uneven trips are the masked loop's
                    # own business): say at run time where the threads did not agree.
                    out.append(BCheck(masks, f"{self.tr.filename}:{s.location.line}"))
                return
        lockstep = self._volatile(s)
        exchanges = self._lower_sync_calls(calls, ctx, masks, out)
        if lockstep and not exchanges and self._lockstep_store(s, ctx, masks, out):
            return
        if exchanges:
            self._exchange(exchanges, ctx, masks, out)
        self.region(out, masks).items.append(("stmt", s, ctx))
        if lockstep:
            self.cut(out)

    def _lower_sync_calls(self, calls: list[ci.Cursor], ctx: Ctx, masks: tuple, out: list) -> list:
        """Inlines the synchronizing device functions among `calls`; returns the warp exchanges
        (warp intrinsics, counting barriers) left to `_exchange`."""
        exchanges = []
        for call in calls:
            name = fe.call_name(call)
            if name in fe.WARP_EXCHANGE or name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or"):
                exchanges.append(call)
            elif name in ("__syncthreads", "__syncwarp", fe.GRID_SYNC):
                raise unsupported_feature("barrier in expression", call, "a barrier used inside an expression")
            else:
                self._inline(call, ctx, masks, out)
        return exchanges

    def _exchange(self, exchanges: list[ci.Cursor], ctx: Ctx, masks: tuple, out: list) -> None:
        """Every lane puts its value for each exchange, at the end of the current region; the
        statement that reads the results runs after the cut."""
        r = self.region(out, masks)
        for call in exchanges:
            site = self.sites
            self.sites += 1
            args = [a for a in child_cursors(call)[1:] if a.extent.start.offset < a.extent.end.offset]
            name = fe.call_name(call)
            value = self._exchange_value(call, name, args)
            r.begins.append(site)
            r.items.append(("put", site, value, ctx))
            ctx.replacements[(call.extent.start.offset, call.extent.end.offset)] = ("exchange", site, call, name, args)
        self.cut(out)

    def _exchange_value(self, call: ci.Cursor, name: str, args: list[ci.Cursor]):
        if name in ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or", "__ballot", "__any", "__all"):
            return ("pred", args[0])
        if name in ("__ballot_sync", "__any_sync", "__all_sync"):
            return ("pred", args[1])
        if name in ("__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"):
            return ("value", args[0])
        return ("value", args[1])
