"""What the lowering reads from the kernel's cursors: barriers and warp intrinsics
reached, the variables of the kernel and of inlined calls, which of them are uniform, recomputable
or thread-dependent, and (`analyze`) which live across a cut: kept per thread, recomputed, or
declared once per block.

Part of `lowering.KernelLowering` (a mixin: its methods read and write the lowering's state)."""

from __future__ import annotations

import re

import clang.cindex as ci

from . import frontend as fe
from .lowering_common import (BIf, BLoop, BScope, Ctx, K, LOOPS, LoweringUnsupported, RECORDS, Region,
                              STATEMENT_EXPRESSION, SYNC_CALLS, Var, captures_by_value, child_cursors, class_aliases,
                              declaration_of, file_of, template_parameters, cursor_tokens, unsupported_feature, value_type_of)


class Analysis:
    def _written(self, fn: ci.Cursor) -> set[int]:
        out: set[int] = set()

        def root(c: ci.Cursor) -> None:
            c = fe.strip(c)
            while True:
                if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
                    out.add(c.referenced.hash)
                    return
                ch = child_cursors(c)
                if c.kind == K.MEMBER_REF_EXPR and ch and not any(t.spelling == "->" for t in cursor_tokens(c)):
                    c = fe.strip(ch[0])
                elif c.kind == K.ARRAY_SUBSCRIPT_EXPR and ch and fe.strip(ch[0]).type.kind == ci.TypeKind.CONSTANTARRAY:
                    c = fe.strip(ch[0])  # an element of a local array: the array is written
                elif c.kind in (K.CSTYLE_CAST_EXPR, K.UNEXPOSED_EXPR, K.PAREN_EXPR) and ch:
                    c = fe.strip(ch[-1])
                else:
                    return

        for c in fn.walk_preorder():
            ch = child_cursors(c)
            if c.kind == K.BINARY_OPERATOR and ch and fe.operator_of(c) == "=":
                root(ch[0])
            elif c.kind == K.COMPOUND_ASSIGNMENT_OPERATOR and ch:
                root(ch[0])
            elif c.kind == K.UNARY_OPERATOR and ch and fe.operator_of(c) in ("++", "--", "&"):
                root(ch[0])
            elif c.kind == K.CALL_EXPR and len(ch) >= 2 and ch[1].kind in (K.DECL_REF_EXPR, K.UNEXPOSED_EXPR):
                name = ch[1].spelling or next((x.spelling for x in ch[1].walk_preorder() if x.spelling), "")
                if name.startswith("operator") and (name.endswith("=") and name[-2:] not in ("==", "<=", ">=", "!=")
                                                    or name.endswith(("++", "--"))):
                    root(ch[0])
            if c.kind == K.CALL_EXPR:
                for ptypes in self._parameter_types(c):
                    for ptype, arg in zip(ptypes, ch[1:]):
                        if ptype.kind == ci.TypeKind.LVALUEREFERENCE and not ptype.get_pointee().is_const_qualified():
                            root(arg)
        return out

    @staticmethod
    def _parameter_types(call: ci.Cursor) -> list[list[ci.Type]]:
        """The parameter types of the functions a call may run: its callee's, or, for a call the
        parse leaves dependent (`f(v, n)` with `v` of a template's type), those of each function
        template or overload so named. A non-const reference among them writes its argument."""
        target = fe.callee(call)
        if target is not None and target.kind == K.FUNCTION_DECL:
            return [list(target.type.argument_types())]
        candidates = [target] if target is not None and target.kind == K.FUNCTION_TEMPLATE else []
        named = child_cursors(call)[:1]  # the callee's name: the overloads it names, not the arguments'
        candidates += [d for c in named for x in c.walk_preorder() if x.kind == K.OVERLOADED_DECL_REF
                       for d in fe.overloads(x) if d.kind == K.FUNCTION_TEMPLATE]
        return [[p.type for p in child_cursors(d) if p.kind == K.PARM_DECL] for d in candidates]

    def _is_builtin(self, ref: ci.Cursor) -> bool:
        return ref.spelling in fe.BUILTIN_VARS and not self.tr.in_main(ref)

    def contains_sync(self, c: ci.Cursor) -> bool:
        key = (c.extent.start.offset, c.extent.end.offset)
        if key not in self._sync_cache:
            self._sync_cache[key] = self._calls_sync(c) or self._volatile(c)
        return self._sync_cache[key]

    def _calls_sync(self, c: ci.Cursor) -> bool:
        """Calls a barrier, a warp intrinsic or a device function with either (volatile memory aside)."""
        return any(self._is_sync_call(x) for x in fe.calls_in(c))

    def _volatile(self, c: ci.Cursor) -> bool:
        """Reads or writes volatile memory (through a local pointer or a volatile __shared__
        array), or the shared memory of a kernel without barriers: warp-synchronous code written
        for lockstep warps, run here one statement at a time for the whole block, each store's
        value computed by every thread before any stores it."""
        for x in c.walk_preorder():
            if x.kind == K.DECL_REF_EXPR and x.referenced is not None and x.referenced.kind in (K.VAR_DECL, K.PARM_DECL) \
                    and ("volatile" in x.referenced.type.spelling or x.referenced.hash in self.lockstep_memory):
                return True
        return False

    def _is_sync_call(self, call: ci.Cursor) -> bool:
        return fe.call_name(call) in SYNC_CALLS or self._sync_definition(call) is not None

    def _sync_definition(self, call: ci.Cursor) -> ci.Cursor | None:
        """The function or method with barriers or warp intrinsics that a call runs: the one the parse
        names, or for a method of an object of a template's type (`op.shfl(v)`) the one such method of
        the project by that name."""
        d = self.tr.called_definition(call)
        if d is not None:
            return d if fe.definition_key(d) in self.sync_functions else None
        if not self.tr.unresolved_call(call):
            return None
        found = [m for m in self.tr.named_candidates(call) if fe.definition_key(m) in self.sync_functions]
        return found[0] if len(found) == 1 else None

    def _unresolved_reads_coordinates(self, call: ci.Cursor) -> bool:
        """Whether a call the parse cannot name (a functor's operator(), a lambda: fe.unresolved_call)
        may read the thread coordinates. Where the kernel's launches name the functor's class, its
        operator() says; else it may: they are set, a cost only where it does not. A barrier in
        such code would need inlining, which the lowering does for named functions only."""
        key = (call.extent.start.offset, call.extent.end.offset)
        if key not in self._unresolved_cache:
            reads = False
            if self.tr.unresolved_call(call):
                named = call.referenced is None and self.tr.named_candidates(call)
                ops = named or self.tr.functors_launched(self.kernel, call)
                if any(self._calls_sync(op) for op in ops):
                    raise unsupported_feature("barriers in a functor", call, f"{fe.call_name(call)}(...) calls an operator() "
                                       "with barriers or warp intrinsics, which the lowering cannot inline")
                keys = [fe.definition_key(op) for op in ops]  # a lambda's is not among the members
                reads = not ops or any(k in self.coord_functions or k not in self.tr.members and k not in
                                       self.tr.functions for k in keys)
            self._unresolved_cache[key] = reads
        return self._unresolved_cache[key]

    def _own_sync_calls(self, c: ci.Cursor, skip_stmts: bool) -> list[ci.Cursor]:
        """Sync calls of a statement's own expressions (not of its sub-statements), outermost first."""
        out: list[ci.Cursor] = []

        def visit(x: ci.Cursor, top: bool) -> None:
            if not top and skip_stmts and x.kind.is_statement() and x.kind not in (K.DECL_STMT,):
                return
            if x.kind == K.CALL_EXPR and self._is_sync_call(x):
                outer = (x.extent.start.offset, x.extent.end.offset)
                for inner in fe.calls_in(x):
                    if self._is_sync_call(inner) and (inner.extent.start.offset, inner.extent.end.offset) != outer:
                        raise unsupported_feature("nested warp intrinsics", x, "a barrier, warp intrinsic or synchronizing call "
                                           "inside the arguments of another one")
                out.append(x)
                return
            for ch in x.get_children():
                visit(ch, False)

        visit(c, True)
        return out

    def _escapes(self, c: ci.Cursor) -> bool:
        """Contains a break/continue that leaves `c` (targets an enclosing loop)."""

        def visit(x: ci.Cursor, in_loop: bool, in_switch: bool) -> bool:
            if x.kind == K.BREAK_STMT:
                return not (in_loop or in_switch)
            if x.kind == K.CONTINUE_STMT:
                return not in_loop
            loop = in_loop or x.kind in LOOPS
            sw = in_switch or x.kind == K.SWITCH_STMT
            return any(visit(ch, loop, sw) for ch in x.get_children())

        return visit(c, False, False)

    def lookup(self, ref: ci.Cursor, ctx: Ctx) -> Var | None:
        """The Var of a local variable (or inlined parameter); None for globals/kernel params."""
        if ref is None or ref.kind not in (K.VAR_DECL, K.PARM_DECL):
            return None
        c: Ctx | None = ctx
        while c is not None:
            if ref.hash in c.vars:
                return c.vars[ref.hash]
            c = c.parent
        if ref.kind == K.PARM_DECL or fe.is_shared(ref) or not self._is_local(ref, ctx) \
                or self._in_statement_expression(ref, ctx):
            return None
        return self._new_var(ref, ctx)

    def _in_statement_expression(self, decl: ci.Cursor, ctx: Ctx) -> bool:
        """Declared inside a GNU statement expression (`({ int _x = a; _x < b ? _x : b; })`, as
        min/max macros write it): scoped to the expression, which keeps it as written."""
        key = fe.definition_key(ctx.fn)
        if key not in self._statement_expressions:
            self._statement_expressions[key] = [(x.extent.start.offset, x.extent.end.offset)
                                                for x in ctx.fn.walk_preorder() if x.kind == STATEMENT_EXPRESSION]
        at = decl.extent.start.offset
        return any(start < at < end for start, end in self._statement_expressions[key])

    def _is_local(self, ref: ci.Cursor, ctx: Ctx) -> bool:
        if file_of(ref) != file_of(ctx.fn):
            return False
        ext = ctx.fn.extent
        return ext.start.offset <= ref.extent.start.offset and ref.extent.end.offset <= ext.end.offset

    def _new_var(self, decl: ci.Cursor, ctx: Ctx, name: str | None = None) -> Var:
        var = Var(name=name or (ctx.prefix + decl.spelling), type=self._subst_type(decl.type.spelling, ctx),
                  cursor=decl, ctx=ctx, order=len(self.vars))
        ctx.vars[decl.hash] = var
        self.vars.append(var)
        init = self._var_init(decl)
        if init is not None:
            var.init = (init, ctx)
            is_array = decl.type.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY)
            if decl.hash not in ctx.written and (not is_array or decl.type.element_type.is_const_qualified()):
                var.kind, var.tainted = self.expr_class(init, ctx)
            else:
                var.tainted = self.expr_class(init, ctx)[1]
        return var

    def _var_init(self, decl: ci.Cursor) -> ci.Cursor | None:
        toks = cursor_tokens(decl)
        names = [i for i, t in enumerate(toks) if t.spelling == decl.spelling and t.extent.start.offset == decl.location.offset]
        if not names:
            return None
        eq, depth = None, 0
        for t in toks[names[0] + 1:]:
            if t.spelling in ("[", "("):
                depth += 1
            elif t.spelling in ("]", ")"):
                depth -= 1
            elif depth <= 0 and t.spelling in (",", ";", "{"):
                break
            elif depth <= 0 and t.spelling == "=":
                eq = t.extent.end.offset
                break
        if eq is None:
            return None
        for ch in child_cursors(decl):
            if ch.extent.start.offset >= eq:
                return ch
        return None

    def _constants(self, fn: ci.Cursor) -> dict[str, ci.Cursor]:
        """The const locals of a function by name (those a type may name: `T a[N]`)."""
        key = fe.definition_key(fn)
        if key not in self._constant_locals:
            body = fe.body_of(fn)
            self._constant_locals[key] = {d.spelling: d for d in (body.walk_preorder() if body is not None else ())
                                          if d.kind == K.VAR_DECL and d.type.is_const_qualified()}
        return self._constant_locals[key]

    def _subst_type(self, text: str, ctx: Ctx) -> str:
        """A type (or an alias declaration) as `ctx` spells it: its template arguments in the place of
        its template parameters, and an inlined function's constants by their new names
        (`float[NUM_ROWS]` -> `float[body_2_NUM_ROWS]`). An inlined method's class's aliases are
        outside their class there: they are spelled as the types they name."""
        if aliases := class_aliases(ctx.fn):
            names = re.compile(r"(?<!::)(?<!\.)(?<!->)\b(" + "|".join(map(re.escape, aliases)) + r")\b")
            for _ in range(8):  # an alias that names another (`using pair_t = Pair<acc_t>;`)
                text, found = names.subn(lambda m: aliases[m.group(1)], text)
                if not found:
                    break
        for name, decl in self._constants(ctx.fn).items():
            if re.search(rf"\b{re.escape(name)}\b", text) and (var := self.lookup(decl, ctx)) is not None \
                    and var.name != name:
                text = re.sub(rf"\b{re.escape(name)}\b", var.name, text)
        if not ctx.subst:
            return text
        for c in template_parameters(ctx.fn):
            if c.kind in (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER) and c.hash in ctx.subst:
                text = re.sub(rf"\b{re.escape(c.spelling)}\b", ctx.subst[c.hash], text)
            elif c.kind == K.TEMPLATE_NON_TYPE_PARAMETER and c.hash in ctx.subst:
                text = re.sub(rf"\b{re.escape(c.spelling)}\b", f"({ctx.subst[c.hash]})", text)
        return text

    def expr_class(self, expr: ci.Cursor, ctx: Ctx, allow_assign: set[int] = frozenset()) -> tuple[str, bool]:
        """('uniform' | 'remat' | 'none', tainted) of an expression; assignments to the
        variables in `allow_assign` (a loop's own variables in its header) are allowed."""
        rank = {"uniform": 0, "remat": 1, "none": 2}
        worst, tainted = "uniform", False

        def bump(kind: str) -> None:
            nonlocal worst
            if rank[kind] > rank[worst]:
                worst = kind

        lambda_bodies: list[tuple[int, int]] = []  # what they do happens where they are called
        for c in expr.walk_preorder():
            k = c.kind
            if any(lo < c.extent.start.offset and c.extent.end.offset <= hi for lo, hi in lambda_bodies):
                continue
            if k == K.LAMBDA_EXPR and not captures_by_value(c):
                # a lambda of references only is the same wherever it is made again
                bump("remat")
                lambda_bodies.append((c.extent.start.offset, c.extent.end.offset))
                continue
            if k == K.DECL_REF_EXPR:
                ref = c.referenced
                if ref is None:
                    continue
                if self._is_builtin(ref):
                    if ref.spelling == "threadIdx":
                        bump("remat")
                        tainted = True
                    continue
                if ref.kind == K.PARM_DECL and ctx.is_kernel:
                    if ref.hash in ctx.written:
                        bump("none")
                    continue
                if ref.kind in (K.VAR_DECL, K.PARM_DECL):
                    var = self.lookup(ref, ctx)
                    if var is not None:
                        bump(var.kind)
                        tainted = tainted or var.tainted
                    elif fe.is_shared(ref):
                        bump("none")
                    elif not (fe.is_constant(ref) or ref.type.is_const_qualified()):
                        bump("none")
            elif k in (K.MEMBER_REF_EXPR, K.CXX_THIS_EXPR) and ctx.this is not None and \
                    (k == K.CXX_THIS_EXPR or not child_cursors(c)):
                kind, taint = self.expr_class(ctx.this[0], ctx.this[1])  # a member of the inlined method's object
                bump(kind)
                tainted = tainted or taint
            elif k == K.CALL_EXPR:
                name = fe.call_name(c)
                target = fe.callee(c)
                # the project's code (also where the parse cannot name which: `B::Tid()`, B a template's
                # parameter) may read the thread's coordinates or have effects: per thread
                if name in SYNC_CALLS or name in fe.ATOMICS or name in fe.WARP_LOCAL or (
                        target is not None and (self.tr.in_main(target) or fe.in_project_header(target))) or (
                        target is None and (self.tr.called_definition(c) is not None or self.tr.unresolved_call(c))):
                    bump("none")
            elif k == K.ARRAY_SUBSCRIPT_EXPR:
                base = fe.strip(child_cursors(c)[0]) if child_cursors(c) else None
                ref = base.referenced if base is not None and base.kind == K.DECL_REF_EXPR else None
                if ref is None or not fe.is_constant(ref):
                    bump("none")
            elif k == K.UNARY_OPERATOR and fe.operator_of(c) in ("*", "&"):
                bump("none")
            elif (k == K.UNARY_OPERATOR and fe.operator_of(c) in ("++", "--")) or (k == K.BINARY_OPERATOR and fe.operator_of(c) == "=") \
                    or k == K.COMPOUND_ASSIGNMENT_OPERATOR:
                target = fe.strip(child_cursors(c)[0]) if child_cursors(c) else None
                if target is None or target.kind != K.DECL_REF_EXPR or target.referenced is None \
                        or target.referenced.hash not in allow_assign:
                    bump("none")
            elif k in (K.CXX_NEW_EXPR, K.CXX_DELETE_EXPR, K.LAMBDA_EXPR):
                bump("none")
            elif k == K.MEMBER_REF_EXPR and any(t.spelling == "->" for t in cursor_tokens(c)):
                bump("none")
        return worst, tainted

    def analyze(self) -> None:
        for r in self.regions:
            for item in r.items:
                self._scan_item(item, r)
            for mask, _ in r.masks:
                mask.regions.add(r.id)
        self._scan_block(self.items)
        for var in sorted(self.vars, key=lambda v: v.order):
            if var.block_level:
                if var.decl_region is not None:
                    self.regions[var.decl_region].hoisted.append(var)
                continue
            if var.promoted:
                continue
            others = var.regions - {var.decl_region}
            if not others:
                continue
            if var.kind in ("uniform", "remat") and var.init is not None:
                for rid in sorted(others):
                    self._add_remat(var, self.regions[rid])
                var.drop_decl = True  # decided below
            else:
                var.promoted = True
        for r in self.regions:
            r.hoisted = self._in_dependency_order(r.hoisted)
        # A recomputed variable's original declaration is dead when its own region does not
        # use it (counting uses in the initializers of other dead declarations as none).
        candidates = [v for v in self.vars if v.drop_decl]
        dropped: set[int] = set()
        changed = True
        while changed:
            changed = False
            for var in candidates:
                if id(var) in dropped or var.ref_counts.get(var.decl_region, 0) > 0:  # type: ignore[arg-type]
                    continue
                dropped.add(id(var))
                changed = True
                for dep in self._variables_named(*var.init):  # type: ignore[misc]
                    if var.decl_region in dep.ref_counts:
                        dep.ref_counts[var.decl_region] -= 1
        for var in candidates:
            var.drop_decl = id(var) in dropped
        # Nor is a copy recomputed in a region where only such dead declarations read it.
        for r in self.regions:
            kept: list[Var] = []
            for var in reversed(r.remat):
                if var.ref_counts.get(r.id, 1) > 0 or any(var in self._variables_named(*v.init) for v in kept):
                    kept.append(var)
            r.remat = kept[::-1]
        taken = set(self.block_names) | set(self.n.values())
        for var in sorted(self.vars, key=lambda v: v.order):
            if var.promoted or var.block_level:
                if var.name in taken:
                    var.name = self._fresh(var.name)
                taken.add(var.name)
                if var.promoted and re.search(r"\bauto\b|dependent", var.type):
                    var.type = self._initializer_type(var) or var.type
                if var.promoted and re.search(r"\bauto\b|dependent", var.type):
                    raise unsupported_feature("per-thread auto variable", var.cursor or self.kernel,
                                       f"variable {var.name} lives across a barrier but its type ({var.type}) is not known")
                if var.promoted and "(lambda at " in var.type:
                    raise unsupported_feature("per-thread lambda", var.cursor or self.kernel,
                                       f"lambda {var.name} copies values ([=], [x]) and is used across a barrier; "
                                       "a lambda cannot be stored per thread (capture by reference, [&], or define "
                                       "it after the barrier)")

    def _in_dependency_order(self, hoisted: list[Var]) -> list[Var]:
        """A region's block-level declarations, each after those its initializer reads: variables are
        numbered as first looked up, and a loop's header (`for (int i = start; ...)`) is looked up
        before the declarations above it (`int factor = ...; int start = factor * blockIdx.x;`)."""
        pending = {id(v): v for v in hoisted}
        ordered: list[Var] = []

        def place(var: Var) -> None:
            if pending.pop(id(var), None) is None:
                return
            if var.init is not None:
                for dep in self._variables_named(*var.init):
                    place(dep)
            ordered.append(var)

        for var in hoisted:
            place(var)
        return ordered

    def _initializer_type(self, var: Var) -> str | None:
        """The type an `auto` variable (or one the parse leaves dependent) of an inlined template
        takes from its initializer, with the template's arguments bound: a warp exchange's value
        (`auto v = __shfl_down_sync(m, x, i)` with `x` a `T`), a variable, member, element or pointer
        sum. None where the initializer does not tell it."""
        if var.init is None or var.cursor is None or var.cursor.kind != K.VAR_DECL:
            return None
        init, ctx = var.init
        s = fe.strip(init)
        try:
            if s.kind == K.CALL_EXPR and fe.call_name(s) in fe.WARP_EXCHANGE:
                args = [a for a in child_cursors(s)[1:] if a.extent.start.offset < a.extent.end.offset]
                t = self._exchange_type(s, args, ctx)
            else:
                t = value_type_of(self._arg_type(init, ctx))
        except LoweringUnsupported:
            return None
        return None if not t or re.search(r"\bauto\b|dependent|\(lambda at ", t) else t

    def _add_remat(self, var: Var, region: Region) -> None:
        if var in region.remat:
            return
        init, ictx = var.init  # type: ignore[misc]
        for c in init.walk_preorder():
            if c.kind == K.DECL_REF_EXPR:
                dep = self.lookup(c.referenced, ictx)
                if dep is None or dep.block_level:
                    continue
                if dep.promoted or dep.kind == "none" or dep.init is None:
                    dep.promoted = True  # referenced from a lambda made again here: the thread's own copy
                else:
                    self._add_remat(dep, region)
        region.remat.append(var)  # after its dependencies

    def _scan_item(self, item: tuple, r: Region) -> None:
        tag = item[0]
        if tag == "stmt":
            self._scan(item[1], item[2], r)
        elif tag in ("decl", "assign"):
            var, (init, ictx) = item[1], item[2]
            if tag == "decl" and var.decl_region is None:
                var.decl_region = r.id
            var.regions.add(r.id)
            self._scan(init, ictx, r)
        elif tag == "put":
            self._scan(item[2][1], item[3], r)
        elif tag == "expr":
            self._scan(item[1], item[2], r)
        elif tag == "loopcond":
            item[1].regions.add(r.id)
            self._scan(item[2][0], item[2][1], r)
        elif tag == "set":
            item[1].regions.add(r.id)
        elif tag == "lockread":
            _, tmp, lhs, op, rhs, ctx = item
            tmp.regions.add(r.id)
            if op != "=":
                self._scan(lhs, ctx, r)
            self._scan(rhs, ctx, r)
        elif tag == "store":
            item[2].regions.add(r.id)
            self._scan(item[1], item[3], r)

    def _scan(self, c: ci.Cursor, ctx: Ctx, r: Region | None) -> list[Var]:
        found: list[Var] = []

        def visit(x: ci.Cursor) -> None:
            rep = ctx.replacements.get((x.extent.start.offset, x.extent.end.offset)) if x.kind == K.CALL_EXPR else None
            if rep is not None:
                if rep[0] == "var":
                    found.append(rep[1])
                    if r is not None:
                        rep[1].ref_counts[r.id] = rep[1].ref_counts.get(r.id, 0) + 1
                elif rep[0] == "exchange":  # the read side uses the arguments but the value
                    _, _, call, name, args = rep
                    value = self._exchange_value(call, name, args)[1]
                    for a in args:
                        if a is not value and a.extent.start.offset != value.extent.start.offset:
                            visit(a)
                return
            if x.kind == K.VAR_DECL:
                var = self.lookup(x, ctx)
                if var is not None:
                    if var.decl_region is None and r is not None and not var.block_level:
                        var.decl_region = r.id
                    found.append(var)
                elif fe.is_shared(x) and self._shared_entry(x, ctx) is None:
                    self._add_shared_decl(x, ctx)
            elif x.kind == K.DECL_REF_EXPR and x.referenced is not None:
                ref = x.referenced
                var = self.lookup(ref, ctx)
                if var is not None:
                    found.append(var)
                    if r is not None:
                        var.ref_counts[r.id] = var.ref_counts.get(r.id, 0) + 1
                elif fe.is_shared(ref) and self._shared_entry(ref, ctx) is None:
                    self._add_shared_decl(ref, None)
            elif x.kind == K.CALL_EXPR:
                d = self.tr.called_definition(x)
                if d is not None and fe.definition_key(d) in self.coord_functions:
                    self.uses_coord_functions = True
                elif d is None and self._unresolved_reads_coordinates(x):
                    self.uses_coord_functions = True
                if fe.call_name(x) in fe.UNSUPPORTED_CALLS:
                    feature = fe.UNSUPPORTED_CALLS[fe.call_name(x)]
                    raise unsupported_feature(feature, x, f"{fe.call_name(x)}: {feature} are not supported")
                if cg := self._cooperative_groups_feature(x, ctx):
                    raise unsupported_feature(cg, x, f"{cg} is not supported (the rest of cooperative groups is)")
                if any(t.spelling == "<<<" for t in cursor_tokens(x)):
                    raise unsupported_feature("dynamic parallelism", x, "a kernel launch inside a kernel")
            elif x.kind == K.ASM_STMT:
                raise unsupported_feature("inline PTX asm", x, "inline assembly (asm) has no CPU meaning")
            elif self._is_member_of_object(x, ctx):
                found.extend(self._scan(ctx.this[0], ctx.this[1], r))  # a member of an inlined method's object
            for ch in x.get_children():
                visit(ch)

        visit(c)
        if r is not None:
            for var in found:
                var.regions.add(r.id)
        return found

    def _cooperative_groups_feature(self, call: ci.Cursor, ctx: Ctx) -> str | None:
        """fe.cooperative_groups_feature, where a call named like a group's operation on an object of
        a template parameter's type (`op.shfl_down(v, o)`) is one when the object's type, as the code
        that made the object declares it, is a group's, and is the project's method so named when
        it is another class."""
        found = fe.group_call_on_template_type(call)
        if found is not None:
            decl = declaration_of(self._object_type((found[1], ctx, False))[0])
            if decl.kind in RECORDS:
                return fe.group_call_feature(found[0]) if fe.in_cooperative_groups(decl) else None
        return fe.cooperative_groups_feature(call, self.tr)

    def _is_member_of_object(self, x: ci.Cursor, ctx: Ctx) -> bool:
        """`this`, or a member named alone (`width`), in an inlined method: a use of its object."""
        return ctx.this is not None and (x.kind == K.CXX_THIS_EXPR or x.kind == K.MEMBER_REF_EXPR
                                         and not child_cursors(x) and bool(x.spelling))

    def _variables_named(self, expr: ci.Cursor, ctx: Ctx) -> list[Var]:
        """The variables an expression names, once per mention: by name, and as the object of an inlined
        method whose members it reads."""
        named = []
        for c in expr.walk_preorder():
            if c.kind == K.DECL_REF_EXPR and (var := self.lookup(c.referenced, ctx)) is not None:
                named.append(var)
            elif self._is_member_of_object(c, ctx):
                named += self._variables_named(ctx.this[0], ctx.this[1])
        return named

    def _scan_block(self, items: list) -> None:
        for it in items:
            if isinstance(it, BScope):
                self._scan_block(it.items)
            elif isinstance(it, BIf):
                self._need_block_level(it.cond)
                self._scan_block(it.then)
                if it.orelse is not None:
                    self._scan_block(it.orelse)
            elif isinstance(it, BLoop):
                for part in (it.init, it.cond, it.inc):
                    if part is not None:
                        self._need_block_level(part)
                self._scan_block(it.body)

    def _need_block_level(self, part: tuple[ci.Cursor, Ctx]) -> None:
        for var in self._scan(part[0], part[1], None):
            self._mark_block_level(var, part[0])

    def _mark_block_level(self, var: Var, where: ci.Cursor) -> None:
        if var.block_level:
            return
        if var.kind != "uniform" or var.init is None:
            raise unsupported_feature("barrier in thread-dependent control flow", where,
                               f"control flow around a barrier depends on {var.name}, which may differ between threads")
        var.block_level = True
        init, ictx = var.init
        for dep in self._scan(init, ictx, None):
            self._mark_block_level(dep, init)
