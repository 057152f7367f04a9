"""The user's statements and expressions as text, with the lowering's rewrites applied:
per-thread references, renamed and inlined variables, returns and jumps of masked code, warp
exchanges read back.

Part of `lowering.KernelLowering` (a mixin: its methods read and write the lowering's state)."""

from __future__ import annotations

import clang.cindex as ci

from . import frontend as fe
from .lowering_common import (Ctx, K, KEYWORD_STATEMENTS, LOOPS, Var, child_cursors, classes_of, file_of, is_array_type,
                              unsupported_feature, value_type_of)
from .printer import declarator


class Rendering:
    def render(self, c: ci.Cursor, ctx: Ctx, tid: str | None, start: int | None = None, end: int | None = None) -> str:
        start = c.extent.start.offset if start is None else start
        end = c.extent.end.offset if end is None else end
        reps: list[tuple[int, int, str]] = []
        self._collect(c, ctx, tid, reps, 0, start, end)
        reps.sort()
        file = file_of(c)
        out, pos = [], start
        for s, e, text in reps:
            if s < pos:
                continue
            out.append(self.tr.text(pos, s, file))
            out.append(text)
            pos = e
        out.append(self.tr.text(pos, max(pos, end), file))
        return "".join(out)

    def _collect(self, x: ci.Cursor, ctx: Ctx, tid: str | None, reps: list, nest: int, lo: int, hi: int,
                 in_lambda: bool = False) -> None:
        s, e = x.extent.start.offset, x.extent.end.offset
        if e <= lo or s >= hi:
            return
        k = x.kind
        if k == K.CALL_EXPR and (s, e) in ctx.replacements:
            reps.append((s, e, self._replacement(ctx.replacements[(s, e)], ctx, tid)))
            return
        if ctx.this is not None and k == K.CXX_THIS_EXPR:
            reps.append((s, e, f"(&{self._object_text(ctx.this, tid)})"))
            return
        if ctx.this is not None and k == K.MEMBER_REF_EXPR and not child_cursors(x) and x.spelling:
            reps.append((s, s, self._object_text(ctx.this, tid) + "."))  # `mean` -> `(acc).mean`
        if k == K.DECL_REF_EXPR and x.referenced is not None:
            text = self._ref_text(x.referenced, ctx, tid)
            if text is not None and text != x.spelling:
                if self.tr.text(s, e, file_of(x)) != x.spelling:
                    raise unsupported_feature("variable in macro", x, f"{x.spelling} is used inside a macro expansion and "
                                       "must be rewritten (it lives across a barrier)")
                reps.append((s, e, text))
                return
            if text is not None or not child_cursors(x):
                return  # else its template arguments (`mul<A, Vec, Vec>`) may name template parameters
        # a type parameter, or a template template parameter (`Func<T>::op`) bound by inlining
        if k in (K.TYPE_REF, K.TEMPLATE_REF) and x.referenced is not None and x.referenced.hash in ctx.subst:
            reps.append((s, e, ctx.subst[x.referenced.hash]))
            return
        # an alias of an inlined method's class, named unqualified as its class's members may (`acc_t`
        # in `static_cast<acc_t>(v)`): the type it names
        if k == K.TYPE_REF and x.referenced is not None and x.referenced.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL) \
                and x.referenced.semantic_parent in classes_of(ctx.fn) \
                and self.tr.text(s, e, file_of(x)) == x.referenced.spelling \
                and not self.tr.source_of(file_of(x))[:s].rstrip().endswith(b"::"):
            reps.append((s, e, self._subst_type(x.referenced.spelling, ctx)))
            return
        if k == K.DECL_STMT and s >= lo and e <= hi and self._decl_needs_rewrite(x, ctx):
            reps.append((s, self._after_semicolon(e, x), self._render_decl(x, ctx, tid)))
            return
        if k == K.RETURN_STMT and ctx.is_kernel and tid is not None and not in_lambda:
            reps.append((s, self._after_semicolon(e, x), self._return_text(tid, nest)))
            return
        region = self._cur_region
        if k in (K.BREAK_STMT, K.CONTINUE_STMT) and nest == 0 and tid is not None and region is not None \
                and region.loop_flag is not None:
            flag, skip = region.loop_flag
            if k == K.BREAK_STMT:
                reps.append((s, self._after_semicolon(e, x), f"{{ {flag.name}[{tid}] = false; continue; }}"))
            else:
                reps.append((s, self._after_semicolon(e, x), f"{{ {skip.name}[{tid}] = true; continue; }}"))
            return
        if k == K.CALL_EXPR and fe.call_name(x) in fe.WARP_LOCAL and tid is not None:
            name = fe.call_name(x)
            reps.append((s, e, f"cudacpu::active_mask({tid}, {self.n['nthreads']})" if name == "__activemask"
                         else f"((1u << ({tid} % 32u)) - 1u)"))
            return
        if k == K.CALL_EXPR:
            d = self.tr.called_definition(x)
            if d is not None and fe.definition_key(d) in self.coord_functions \
                    or d is None and self._unresolved_reads_coordinates(x):
                self._region_sets_coords = True
        if k == K.ARRAY_SUBSCRIPT_EXPR and (index := self._shared_window_index(x)) is not None:
            # Shared memory is a 32-bit address window: `p[~i]` with an unsigned i reaches p - i - 1 on a
            # GPU, and 4 GiB past p through a 64-bit pointer.
            reps += [(index[0], index[0], "(int)("), (index[1], index[1], ")")]
        if k in KEYWORD_STATEMENTS and s >= lo:
            self._keyword_spacing(x, KEYWORD_STATEMENTS[k], reps)
        if k in LOOPS or k == K.SWITCH_STMT:
            nest += 1
        # a lambda's statements are its own: a return in it returns from it, not from the kernel
        in_lambda = in_lambda or k == K.LAMBDA_EXPR
        for ch in x.get_children():
            self._collect(ch, ctx, tid, reps, nest, lo, hi, in_lambda)

    def _keyword_spacing(self, statement: ci.Cursor, keyword: str, reps: list) -> None:
        """`if(`, `for  (` and the like as `if (`, `for (`."""
        src = self.tr.source_of(file_of(statement))
        start = statement.extent.start.offset
        after = start + len(keyword)
        if src[start:after] != keyword.encode():  # written by a macro's expansion
            return
        gap = after
        while src[gap:gap + 1] in (b" ", b"\t"):
            gap += 1
        if src[gap:gap + 1] == b"(" and src[after:gap] != b" ":
            reps.append((start, gap, keyword + " "))

    def _after_semicolon(self, end: int, c: ci.Cursor) -> int:
        """Past the `;` that follows `end` in the file of `c`, if one does."""
        src = self.tr.source_of(file_of(c))
        i = end
        while i < len(src) and src[i:i + 1] in (b" ", b"\t"):
            i += 1
        return i + 1 if src[i:i + 1] == b";" else end

    def _return_text(self, tid: str, nest: int) -> str:
        jump = "continue;"
        if nest:
            self._region_needs_label = True
            jump = f"goto {self._label};"
        if self.exit_flags:
            return f"{{ {self.n['exited']}[{tid}] = true; {jump} }}"
        return jump if not nest else f"{{ {jump} }}"

    def _ref_text(self, ref: ci.Cursor, ctx: Ctx, tid: str | None) -> str | None:
        if ref.kind == K.TEMPLATE_NON_TYPE_PARAMETER:
            return ctx.subst.get(ref.hash)
        if (entry := self._shared_entry(ref, ctx)) is not None:
            return entry[0]
        var = self.lookup(ref, ctx)
        return var.ref(tid) if var is not None else None

    def _decl_needs_rewrite(self, decl: ci.Cursor, ctx: Ctx) -> bool:
        for v in child_cursors(decl):
            if v.kind != K.VAR_DECL:
                continue
            var = self.lookup(v, ctx)
            if var is not None and (var.promoted or var.block_level or var.drop_decl or var.name != v.spelling):
                return True
        return False

    def _render_decl(self, decl: ci.Cursor, ctx: Ctx, tid: str | None, only: Var | None = None,
                     block: bool = False) -> str:
        """A declaration statement with per-thread, hoisted or renamed variables."""
        parts = []
        for v in child_cursors(decl):
            if v.kind != K.VAR_DECL:
                continue
            var = self.lookup(v, ctx)
            if var is None or (only is not None and var is not only):
                continue
            if (var.block_level and not block or var.drop_decl) and only is None:
                continue
            parts.append(self._render_var(v, var, ctx, tid))
        return " ".join(p for p in parts if p)

    def _render_var(self, v: ci.Cursor, var: Var, ctx: Ctx, tid: str | None) -> str:
        init = self._var_init(v)
        init_text = self.render(init, ctx, tid) if init is not None else None
        name_end = v.location.offset + len(v.spelling)
        tail = self.render(v, ctx, tid, start=name_end, end=v.extent.end.offset).strip()
        if tail.startswith("("):  # `unsigned int w(n / 32);`: libclang's extent ends before its `)`
            tail += ")" * (tail.count("(") - tail.count(")"))
        if var.promoted:
            ref = var.ref(tid)
            if init_text is None:
                if tail.startswith(("(", "{")):  # a functional cast of the type as written fails for `unsigned int`
                    return f"{ref} = std::remove_reference_t<decltype({ref})>{tail};"
                return ""
            if is_array_type(var.type):
                tmp = self._fresh("init")
                return (f"{{ const {declarator(var.type, tmp)} = {init_text}; "
                        f"std::memcpy(&{ref}, &{tmp}, sizeof({tmp})); }}")
            return var.bind(tid, init_text)
        if init_text is not None:  # a lambda's type has no spelling
            return f"{'auto ' + var.name if '(lambda at ' in var.type else declarator(var.type, var.name)} = {init_text};"
        if is_array_type(var.type):
            return f"{declarator(var.type, var.name)};"
        return f"{declarator(var.type, var.name)}{(' ' + tail) if tail else ''};"

    def _replacement(self, rep: tuple, ctx: Ctx, tid: str | None) -> str:
        if rep[0] == "var":
            return rep[1].ref(tid)
        if rep[0] == "text":
            return rep[1]
        _, site, call, name, args = rep
        w, t = self.n["warp"], tid
        a = [self.render(x, ctx, tid) for x in args]  # the value itself is never rendered here
        base = name[:-5] if name.endswith("_sync") else name
        if name.startswith("__syncthreads_"):
            count = f"cudacpu::block_count({w}, {site})"
            return {"__syncthreads_count": count,
                    "__syncthreads_and": f"({count} == cudacpu::block_participants({w}, {site}))",
                    "__syncthreads_or": f"({count} != 0)"}[name]
        mask = a[0] if name.endswith("_sync") else "0xffffffffu"
        if base in ("__ballot", "__any", "__all"):
            return f"cudacpu::{base[2:]}({w}, {site}, {t}, {mask})"
        value_type = self._exchange_type(call, args, ctx)
        if base == "__match_any":
            return f"cudacpu::match_any<{value_type}>({w}, {site}, {t}, {mask})"
        if base == "__match_all":
            return f"cudacpu::match_all<{value_type}>({w}, {site}, {t}, {mask}, {a[2]})"
        if base.startswith("__reduce_"):
            op = {"add": "a + b", "min": "b < a ? b : a", "max": "a < b ? b : a"}[base.split("_")[3]]
            return f"cudacpu::warp_reduce<{value_type}>({w}, {site}, {t}, {mask}, [](auto a, auto b) {{ return {op}; }})"
        rest = a[2:] if name.endswith("_sync") else a[1:]
        return f"cudacpu::{base[2:]}<{value_type}>({w}, {site}, {t}, {', '.join(rest)})"

    def _exchange_type(self, call: ci.Cursor, args: list[ci.Cursor], ctx: Ctx) -> str:
        t = call.type.spelling
        if fe.call_name(call).startswith("__match_"):  # returns a lane mask: the type exchanged is the value's
            t = ""
        if t and "dependent" not in t:
            return value_type_of(self._subst_type(t, ctx))
        value = args[1] if fe.call_name(call).endswith("_sync") else args[0]
        return value_type_of(self._arg_type(value, ctx))
