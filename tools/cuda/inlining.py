"""`__device__` functions and methods that contain barriers or warp intrinsics, inlined into
the kernel's regions: their parameters bound, their template arguments deduced or given.

Part of `lowering.KernelLowering` (a mixin: its methods read and write the lowering's state)."""

from __future__ import annotations

import re

import clang.cindex as ci

from . import frontend as fe
from .coop_groups import tile_size_argument
from .lowering_common import (ARRAY_TYPES, Ctx, K, RECORDS, TEMPLATE_PARAMETERS, Var, child_cursors, decayed,
                              declaration_of, default_argument, early_return_condition, array_element_type, outer_extent,
                              stmt_list, template_parameters, cursor_tokens, top_level_arguments, unqualified_pointer,
                              unsupported_feature, value_type_of, written_template_arguments)


class Inlining:
    def _inline(self, call: ci.Cursor, ctx: Ctx, masks: tuple, out: list) -> None:
        if fe.group_call_on_template_type(call) and (cg := self._cooperative_groups_feature(call, ctx)):
            # named like the project's method, on an object that is a group
            raise unsupported_feature(cg, call, f"{cg} is not supported (the rest of cooperative groups is)")
        fn = self._sync_definition(call)
        if fn is None:
            raise unsupported_feature("synchronizing call", call, f"call of {fe.call_name(call)} (barriers inside) whose "
                               "definition is not in this file")
        depth, c = 0, ctx
        while c is not None:
            depth += fe.definition_key(c.fn) == fe.definition_key(fn)
            c = c.parent
        if depth:
            raise unsupported_feature("recursion", call, f"recursive synchronizing function {fn.spelling}")
        body = stmt_list(fe.body_of(fn))
        result_type = fn.result_type.spelling
        tail = body[-1] if body and body[-1].kind == K.RETURN_STMT else None
        guarding = {r.extent.start.offset for s in body if result_type == "void" and early_return_condition(s)
                    is not None for r in fe.returns_of(s)}  # `if (c) return;`: _lower_guarded's
        returns = [r for r in fe.returns_of(fe.body_of(fn)) if r.extent.start.offset not in guarding]
        if len(returns) > 1 or (returns and (tail is None or returns[0] != tail)):
            raise unsupported_feature("early return in synchronizing function", call, f"{fn.spelling} returns before its end; "
                               "only a final return, and `if (...) return;` at the top level of a void function, "
                               "are supported in functions with barriers")
        callee_ctx = Ctx(fn=fn, parent=ctx, prefix=self._fresh(fn.spelling) + "_")
        callee_ctx.written = self._written(fn)
        if fn.kind == K.CXX_METHOD and not fn.is_static_method():
            callee_ctx.this = self._object_of(call, ctx)
        self.inlined.append(callee_ctx)
        args = child_cursors(call)[1:]
        params = fe.params_of(fn)
        while args and args[-1].extent.start.file is None:  # a default argument, as clang fills it in
            args = args[:-1]
        defaults = [default_argument(p) for p in params[len(args):]]
        if len(args) > len(params) or any(d is None for d in defaults):
            raise unsupported_feature("default arguments", call, f"call of {fn.spelling} with default arguments")
        self._bind_templates(fn, call, params, args, ctx, callee_ctx)
        # an argument left out is the parameter's default, evaluated where the function is
        bound = [(a, ctx) for a in args] + [(d, callee_ctx) for d in defaults]
        for p, (a, actx) in zip(params, bound):
            array = p.type.get_pointee() if p.type.kind == ci.TypeKind.LVALUEREFERENCE else p.type
            if p.type.kind == ci.TypeKind.LVALUEREFERENCE and array.kind not in ARRAY_TYPES \
                    and not array.is_const_qualified():
                target = fe.strip(a)
                var = self.lookup(target.referenced, actx) if target.kind == K.DECL_REF_EXPR else None
                if var is None:
                    raise unsupported_feature("reference parameter", call, f"argument of reference parameter {p.spelling} "
                                       "is not a local variable")
                callee_ctx.vars[p.hash] = var
                continue
            var = self._new_var(p, callee_ctx)
            # An array parameter, or a reference to an array, is a pointer to the caller's array.
            var.type = decayed(self._subst_type(array.spelling, callee_ctx)) if array.kind in ARRAY_TYPES \
                else value_type_of(var.type)
            var.init = (a, actx)
            var.kind, var.tainted = ("none", False) if p.hash in callee_ctx.written else self.expr_class(a, actx)
            self.region(out, masks).items.append(("decl", var, (a, actx)))
        self._lower_guarded(body[:-1] if tail is not None else body, callee_ctx, masks, out)
        if tail is not None and result_type != "void":
            value = child_cursors(tail)[0]
            if exchanges := self._lower_sync_calls(self._own_sync_calls(value, skip_stmts=True), callee_ctx, masks, out):
                self._exchange(exchanges, callee_ctx, masks, out)  # `return __shfl_xor_sync(...)`
            res = Var(name=self._fresh(fn.spelling + "_result"), type=value_type_of(self._subst_type(result_type, callee_ctx)),
                      cursor=None, ctx=callee_ctx, synthetic=True, order=len(self.vars))
            self.vars.append(res)
            self.region(out, masks).items.append(("decl", res, (value, callee_ctx)))
            ctx.replacements[(call.extent.start.offset, call.extent.end.offset)] = ("var", res)
        else:
            ctx.replacements[(call.extent.start.offset, call.extent.end.offset)] = ("text", "(void)0")

    def _object_of(self, call: ci.Cursor, ctx: Ctx) -> tuple[ci.Cursor, Ctx, bool]:
        """The object whose method a call runs (`acc.add(v)`, `p->add(v)`, `add(v)` inside another
        inlined method): an expression without side effects, which the inlined body names again
        wherever it reads a member."""
        member = next(call.get_children(), None)
        base = next(member.get_children(), None) if member is not None and member.kind == K.MEMBER_REF_EXPR else None
        if base is None or fe.strip(base).kind == K.CXX_THIS_EXPR:
            if ctx.this is None:
                raise unsupported_feature("method call", call, f"{fe.call_name(call)}(...): the object of a method with "
                                   "barriers or warp intrinsics is not known")
            return ctx.this
        arrow = any(t.spelling == "->" for t in cursor_tokens(member)
                    if base.extent.end.offset <= t.extent.start.offset)
        if any(x.kind in (K.CALL_EXPR, K.CXX_NEW_EXPR, K.LAMBDA_EXPR) or
               (x.kind in (K.UNARY_OPERATOR, K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR)
                and fe.operator_of(x) in ("=", "++", "--")) or x.kind == K.COMPOUND_ASSIGNMENT_OPERATOR
               for x in base.walk_preorder()):
            raise unsupported_feature("method of a temporary", call, f"{fe.call_name(call)}(...) is called on an object "
                               "made or changed by the call's own expression; inlining it needs a named object")
        return base, ctx, arrow

    def _object_text(self, this: tuple[ci.Cursor, Ctx, bool], tid: str | None) -> str:
        base, ctx, arrow = this
        text = self.render(base, ctx, tid)
        return f"(*{text})" if arrow else f"({text})"

    def _bind_templates(self, fn, call, params, args, ctx: Ctx, callee_ctx: Ctx) -> None:
        """Binds the template parameters of an inlined function, and of the class template it is a
        static member of (`Dot<float, 4>::dot(a)`): as written, deduced from the arguments, or by
        default."""
        written = written_template_arguments(call)
        owner = fn.semantic_parent
        if owner is not None and owner.kind == K.CLASS_TEMPLATE and callee_ctx.this is not None:
            # a method of an object: its class's arguments are those of the object's type, spelled
            # by the function that declares the object
            given, object_ctx = self._class_arguments(callee_ctx.this, owner, call)
            self._bind_given(template_parameters(owner), given, call, owner, object_ctx, callee_ctx)
        elif owner is not None and owner.kind == K.CLASS_TEMPLATE:
            if len(written) < 2:
                raise unsupported_feature("template deduction", call, f"cannot tell the template arguments of "
                                   f"{owner.spelling} in this call of {fn.spelling}")
            self._bind_given(template_parameters(owner), written[-2], call, owner, ctx, callee_ctx)
        own = [c for c in fn.get_children() if c.kind in TEMPLATE_PARAMETERS]
        self._bind_given(own, written[-1], call, fn, ctx, callee_ctx, deduce_from=list(zip(params, args)))

    def _object_type(self, this: tuple[ci.Cursor, Ctx, bool]) -> tuple[ci.Type, Ctx]:
        """The type of an object as the code that made it declares it: through the parameters of
        inlined functions to their callers' arguments, aliases and references; with the Ctx that
        spells it."""
        base, ctx, arrow = this
        for _ in range(8):  # a parameter of an inlined function: the argument's type, as its caller declared it
            ref = fe.strip(base).referenced if fe.strip(base).kind == K.DECL_REF_EXPR else None
            var = self.lookup(ref, ctx) if ref is not None and ref.kind == K.PARM_DECL else None
            if var is None or var.init is None or var.init[1] is ctx:
                break
            base, ctx = var.init
        t = base.type.get_pointee() if arrow else base.type
        for _ in range(8):
            decl = t.get_declaration()
            if decl.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL):
                t = decl.underlying_typedef_type
                continue
            if t.kind in (ci.TypeKind.LVALUEREFERENCE, ci.TypeKind.RVALUEREFERENCE):
                t = t.get_pointee()
                continue
            break
        return t, ctx

    def _class_arguments(self, this: tuple[ci.Cursor, Ctx, bool], owner: ci.Cursor,
                         use: ci.Cursor) -> tuple[list[str], Ctx]:
        """The template arguments of the class template `owner` that an object's type names, through
        its aliases (`using Op = Ops<T, int>;`), as the function that declares the object spells them;
        with that function's Ctx."""
        t, ctx = self._object_type(this)
        text = re.sub(r"^(const|volatile)\s+", "", t.spelling.strip())
        name, _, rest = text.partition("<")
        if name.split("::")[-1].strip() != owner.spelling or not rest.endswith(">"):
            raise unsupported_feature("template deduction", use, f"cannot tell the template arguments of {owner.spelling} "
                               f"from the type {t.spelling} of the object in {' '.join(t.spelling for t in cursor_tokens(use))}")
        count = t.get_num_template_arguments()
        if count > 0 and all(t.get_template_argument_type(i).kind != ci.TypeKind.INVALID for i in range(count)):
            args = [t.get_template_argument_type(i).spelling for i in range(count)]
        else:  # a dependent type, or values among the arguments: as spelled
            args = top_level_arguments(rest[:-1])
        return [a.strip() for a in args], ctx

    def _member_type(self, member: ci.Cursor, ctx: Ctx) -> str | None:
        """The type of a data member of an object (`acc.mean`) where the parse leaves it dependent:
        the member's declared type, the template parameters of its class (`S mean;` in `Data<S>`)
        bound to the arguments of the object's type (`Data<float>`); None where the object's class
        is not known."""
        base = child_cursors(member)[0]
        arrow = any(t.spelling == "->" for t in cursor_tokens(member) if base.extent.end.offset <= t.extent.start.offset)
        t, _ = self._object_type((base, ctx, arrow))
        record = declaration_of(t)
        name = member.spelling or cursor_tokens(member)[-1].spelling
        field = next((f for f in child_cursors(record) if f.kind == K.FIELD_DECL and f.spelling == name), None) \
            if record.kind in RECORDS else None
        if field is None:
            return None
        params = {c.spelling: i for i, c in enumerate(c for c in child_cursors(record) if c.kind in TEMPLATE_PARAMETERS)}
        if not params:
            return field.type.spelling
        given, object_ctx = self._class_arguments((base, ctx, arrow), record, member)
        args = [self._subst_type(a, object_ctx) for a in given]
        return re.sub(r"\b\w+\b", lambda m: args[params[m.group()]] if m.group() in params else m.group(),
                      field.type.spelling)

    def _bind_given(self, tparams: list[ci.Cursor], given: list[str], call, template, ctx: Ctx, callee_ctx: Ctx,
                    deduce_from: list[tuple[ci.Cursor, ci.Cursor]] = ()) -> None:
        if len(given) > len(tparams) and not any(t.spelling == "..." for tp in tparams for t in tp.get_tokens()):
            raise unsupported_feature("template deduction", call, f"{len(given)} template arguments for the "
                               f"{len(tparams)} parameters of {template.spelling} that the lowering reads")
        for tp, text in zip(tparams, given):
            callee_ctx.subst[tp.hash] = self._subst_type(text, ctx)  # `f<blockSize>` inside a template inlined too
        for tp in tparams[len(given):]:
            deduced = self._deduced(tp, deduce_from, ctx)
            if deduced is None:
                deduced = self._template_default(tp, callee_ctx)
            if deduced is None:
                raise unsupported_feature("template deduction", call, f"cannot deduce {tp.spelling} of {template.spelling}")
            callee_ctx.subst[tp.hash] = deduced

    def _deduced(self, tp: ci.Cursor, params_args: list[tuple[ci.Cursor, ci.Cursor]], ctx: Ctx) -> str | None:
        """A template parameter's argument as the call's arguments give it: `T` from a `T *`, `T &` or
        `const T (&)[N]` parameter, `N` from that array's extent or a cooperative-groups tile's size."""
        for p, a in params_args:
            array = p.type.get_pointee() if p.type.kind == ci.TypeKind.LVALUEREFERENCE else None
            if array is not None and array.kind in ARRAY_TYPES:  # `const Vec (&q)[N]`
                atype = self._array_type(a, ctx)
                if tp.kind == K.TEMPLATE_NON_TYPE_PARAMETER and any(
                        c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.hash == tp.hash
                        for c in p.walk_preorder()):
                    if (extent := outer_extent(atype)) is not None:
                        return extent
                if tp.kind == K.TEMPLATE_TYPE_PARAMETER and \
                        re.fullmatch(rf"(const\s+)?{re.escape(tp.spelling)}", array.element_type.spelling):
                    return re.sub(r"^const\s+", "", array_element_type(atype).strip())
                continue
            if tp.kind != K.TEMPLATE_TYPE_PARAMETER:
                if (size := tile_size_argument(p.type, a.type, tp.spelling)) is not None:  # `thread_block_tile<N> g`
                    return size
                continue
            ptype = unqualified_pointer(p.type.spelling)
            if re.search(rf"\b{re.escape(tp.spelling)}\b", ptype):
                atype = unqualified_pointer(self._arg_type(a, ctx))
                if re.fullmatch(rf"(const\s+)?{re.escape(tp.spelling)}(\s*&)?", ptype):
                    return value_type_of(atype)
                if re.fullmatch(rf"(const\s+)?{re.escape(tp.spelling)}\s*\*", ptype) and atype.rstrip().endswith("*"):
                    return re.sub(r"^const\s+", "", atype.rstrip()[:-1].strip())
        return None

    def _template_default(self, tparam: ci.Cursor, callee_ctx: Ctx) -> str | None:
        """A template parameter's default argument (`int P = 0`, `class T = float`), in terms of the
        parameters bound before it; None where it has none."""
        tokens = [t.spelling for t in cursor_tokens(tparam)]
        if "=" not in tokens:
            return None
        text = " ".join(tokens[tokens.index("=") + 1:])
        return self._subst_type(text, callee_ctx) if tparam.kind == K.TEMPLATE_TYPE_PARAMETER \
            else f"({self._subst_type(text, callee_ctx)})"

    def _array_type(self, a: ci.Cursor, ctx: Ctx) -> str:
        """An array argument's type with its extent, also where it is an inlined function's own
        reference-to-array parameter (declared as a pointer)."""
        s = fe.strip(a)
        var = self.lookup(s.referenced, ctx) if s.kind == K.DECL_REF_EXPR else None
        if var is not None and var.cursor is not None and var.cursor.kind == K.PARM_DECL \
                and var.cursor.type.kind == ci.TypeKind.LVALUEREFERENCE \
                and var.cursor.type.get_pointee().kind in ARRAY_TYPES:
            return self._subst_type(var.cursor.type.get_pointee().spelling, var.ctx)
        return self._arg_type(a, ctx)

    def _arg_type(self, a: ci.Cursor, ctx: Ctx) -> str:
        t = a.type.spelling
        s = fe.strip(a)
        var = self.lookup(s.referenced, ctx) if s.kind == K.DECL_REF_EXPR else None
        if var is not None:  # as the lowering declares it (`T[body_N]`)
            return var.type
        if "dependent" in t or not t:
            if s.kind == K.DECL_REF_EXPR and s.referenced is not None:
                return self._subst_type(s.referenced.type.spelling, ctx)
            if s.kind == K.MEMBER_REF_EXPR and child_cursors(s) and (member := self._member_type(s, ctx)) is not None:
                return member
            if s.kind == K.ARRAY_SUBSCRIPT_EXPR and child_cursors(s):
                return array_element_type(self._arg_type(child_cursors(s)[0], ctx))
            ch = child_cursors(s)
            operands = ch if s.kind == K.BINARY_OPERATOR and fe.operator_of(s) in ("+", "-") else \
                [ch[0], ch[2]] if s.kind == K.CALL_EXPR and len(ch) == 3 and \
                [t.spelling for t in cursor_tokens(ch[1])] in (["+"], ["-"]) else []
            if len(operands) == 2:  # pointer arithmetic (`rows + offset`, dependent or not): the pointer's type
                left = self._arg_type(operands[0], ctx)
                return left if unqualified_pointer(left).endswith("*") else self._arg_type(operands[1], ctx)
            raise unsupported_feature("template deduction", a, "cannot tell the type of a dependent argument")
        return self._subst_type(t, ctx)
