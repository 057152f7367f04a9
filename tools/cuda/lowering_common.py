"""What the parts of the kernel lowering share: its constants, its working structures (variables,
inlining contexts, regions and block-level items) and small cursor and type-text utilities."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from . import frontend as fe

K = ci.CursorKind
ENDS_IN_SEMICOLON = (K.DECL_STMT, K.RETURN_STMT, K.DO_STMT, K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT)
# The lowered kernels' support code: a runtime header, so that a port can also include it by name.
PRELUDE = (Path(__file__).parent / "runtime" / "include" / "cuda_cpu" / "lowering_support.h").read_text()
LOOPS = (K.FOR_STMT, K.WHILE_STMT, K.DO_STMT, K.CXX_FOR_RANGE_STMT)
# Statements whose keyword the lowering prints with one space before the parenthesis, however the
# kernel wrote it: readers of the lowered code (the optimizer's passes) then see one spelling.
KEYWORD_STATEMENTS = {K.IF_STMT: "if", K.FOR_STMT: "for", K.WHILE_STMT: "while", K.SWITCH_STMT: "switch"}
STATEMENT_EXPRESSION = K.from_id(121)  # GNU `({ ... })`: libclang names no constant for it (StmtExpr)
SYNC_CALLS = fe.BARRIERS | fe.WARP_SYNC | fe.WARP_EXCHANGE


class LoweringUnsupported(Exception):
    """A construct the lowering cannot translate faithfully."""

    def __init__(self, feature: str, line: int, message: str, file: str | None = None):
        super().__init__(message)
        self.feature, self.line, self.message, self.file = feature, line, message, file


def unsupported_feature(feature: str, cursor: ci.Cursor | None, message: str) -> LoweringUnsupported:
    if cursor is None:
        return LoweringUnsupported(feature, 0, message)
    return LoweringUnsupported(feature, cursor.location.line, message, file_of(cursor))


# ---------------------------------------------------------------------------------------
def file_of(c: ci.Cursor) -> str | None:
    """The file whose bytes `c`'s offsets index: the file parsed, or a project header whose
    device function is inlined."""
    return c.extent.start.file.name if c.extent.start.file is not None else None


def array_element_type(array: str) -> str:
    """The type of `a[i]` for `a` of type `array`: `float (*)[4]` -> `float [4]`,
    `float [2][4]` -> `float [4]`, `const T *` -> `const T`."""
    array = array.strip()
    pointer_to_array = re.fullmatch(r"(.*?)\s*\(\*\)\s*(\[.*\])", array)
    if pointer_to_array:
        return f"{pointer_to_array.group(1)} {pointer_to_array.group(2)}"
    dims = re.fullmatch(r"(.*?)\s*\[[^\]]*\]\s*(\[.*\])?", array)
    if dims:
        return f"{dims.group(1)} {dims.group(2)}" if dims.group(2) else dims.group(1)
    if array.endswith("*"):
        return array[:-1].strip()
    raise LoweringUnsupported("template deduction", 0, f"cannot tell the element type of {array}")


ARRAY_TYPES = (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.DEPENDENTSIZEDARRAY,
               ci.TypeKind.VARIABLEARRAY)


def outer_extent(array: str) -> str | None:
    """The outermost extent of an array type: `float [2][4]` -> `2`; None for a non-array."""
    dims = re.fullmatch(r"[^\[]*\[([^\]]+)\].*", array.strip(), re.S)
    return dims.group(1).strip() if dims and "(*" not in array else None


TEMPLATE_PARAMETERS = (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER)
RECORDS = (K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION)


def template_parameters(fn: ci.Cursor) -> list[ci.Cursor]:
    """A function's template parameters, after those of the class template it is a member of."""
    owner = fn.semantic_parent
    outer = template_parameters(owner) if owner is not None and owner.kind == K.CLASS_TEMPLATE else []
    return outer + [c for c in fn.get_children() if c.kind in TEMPLATE_PARAMETERS]


def declaration_of(t: ci.Type) -> ci.Cursor:
    """The declaration of a type, also of a template parameter's type as an instantiation binds it."""
    decl = t.get_declaration()
    return decl if decl.kind != K.NO_DECL_FOUND else t.get_canonical().get_declaration()


def classes_of(fn: ci.Cursor) -> list[ci.Cursor]:
    """The class a method belongs to and the classes around it, innermost first; none for a function
    outside classes."""
    classes, owner = [], fn.semantic_parent
    while owner is not None and owner.kind in RECORDS:
        classes.append(owner)
        owner = owner.semantic_parent
    return classes


def class_aliases(fn: ci.Cursor) -> dict[str, str]:
    """The aliases (`using acc_t = Data<S>;`, `typedef float value_t;`) that a method's classes
    declare, by name, as the types they name (in the classes' template parameters)."""
    return {d.spelling: d.underlying_typedef_type.spelling for cls in reversed(classes_of(fn))
            for d in child_cursors(cls) if d.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL)}


def default_argument(param: ci.Cursor) -> ci.Cursor | None:
    """The expression after `=` in a parameter's declaration, if it has one."""
    exprs = [c for c in param.get_children() if c.kind.is_expression()]
    return exprs[-1] if exprs else None


def top_level_arguments(text: str) -> list[str]:
    """A type's template arguments as clang spells them (`float, Pair<float, int>, 4`), split at
    the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    return parts + [text[start:].strip()] if text.strip() else parts


def written_template_arguments(call: ci.Cursor) -> list[list[str]]:
    """The template arguments written in a call's callee, one list per `::`-separated name:
    `Dot<float, 4>::dot<2>(a)` -> [["float", "4"], ["2"]], `f(x)` -> [[]]."""
    names: list[list[str]] = [[]]
    depth, nesting, arg = 0, 0, []
    for tok in cursor_tokens(call):
        s = tok.spelling
        if depth == 0:
            if s == "(":
                break
            if s == "::":
                names.append([])
            elif s == "<":
                depth, arg = 1, []
            continue
        if s in ("(", "[", "{"):
            nesting += 1
        elif s in (")", "]", "}"):
            nesting -= 1
        elif nesting == 0 and s == "<":
            depth += 1
        elif nesting == 0 and s in (">", ">>"):
            closing = min(len(s), depth)
            if depth - closing == 0:
                arg += [">"] * (closing - 1)  # `f<A<int>>`: the inner one's
                names[-1].append(" ".join(arg))
                depth = 0
                continue
            depth -= closing
        elif nesting == 0 and depth == 1 and s == ",":
            names[-1].append(" ".join(arg))
            arg = []
            continue
        arg.append(s)
    return names


def decayed(array: str) -> str:
    """The pointer an array parameter is: `float[A][B]` -> `float (*)[B]`, `float[A]` -> `float *`."""
    dims = re.fullmatch(r"(.*?)\s*\[[^\]]*\]\s*(\[.*\])?", array.strip())
    if dims is None:
        return array
    return f"{dims.group(1)} (*){dims.group(2)}" if dims.group(2) else f"{dims.group(1)} *"


# Variables and inlining contexts


@dataclass(eq=False)
class Var:
    name: str
    type: str
    cursor: ci.Cursor | None  # VAR_DECL / PARM_DECL, None when synthetic
    ctx: "Ctx"
    init: tuple[ci.Cursor, "Ctx"] | None = None
    kind: str = "none"  # uniform | remat | none: what the initializer allows
    tainted: bool = False  # derived from threadIdx
    block_level: bool = False
    promoted: bool = False
    synthetic: bool = False
    branch: bool = False  # the per-thread flag of an if's condition
    regions: set[int] = field(default_factory=set)
    ref_counts: dict[int, int] = field(default_factory=dict)  # region -> references (reads/writes)
    decl_region: int | None = None
    drop_decl: bool = False  # recomputed where used, the original declaration is dead
    order: int = 0

    @property
    def reference(self) -> bool:
        """An lvalue reference (`int& r = s[t];`): kept per thread as the address it binds to."""
        return bool(re.search(r"[^&]&\s*$", self.type))

    def ref(self, tid: str | None) -> str:
        if self.promoted:
            assert tid is not None, f"per-thread variable {self.name} read at block level"
            return f"(*{self.name}[{tid}])" if self.reference else f"{self.name}[{tid}]"
        return self.name

    def bind(self, tid: str | None, value: str) -> str:
        """The per-thread copy takes its initial value (a reference: its address)."""
        if self.reference:
            return f"{self.name}[{tid}] = &({value});"
        return f"{self.ref(tid)} = {value};"

    def per_thread_type(self) -> str:
        if self.reference:
            return re.sub(r"\s*&\s*$", "", self.type) + " *"  # const stays: it is the referenced object's
        return value_type_of(self.type)


@dataclass(eq=False)
class Ctx:
    """The kernel, or one inlined call of a __device__ function."""

    fn: ci.Cursor
    parent: "Ctx | None" = None
    prefix: str = ""
    vars: dict[int, Var] = field(default_factory=dict)
    subst: dict[int, str] = field(default_factory=dict)  # template parameter decl hash -> text
    replacements: dict[tuple[int, int], object] = field(default_factory=dict)
    written: set[int] = field(default_factory=set)
    # An inlined method's object: (its expression, the caller's Ctx, reached through a pointer)
    this: "tuple[ci.Cursor, Ctx, bool] | None" = None

    @property
    def is_kernel(self) -> bool:
        return self.parent is None


# Block-level items
@dataclass(eq=False)
class Region:
    id: int
    masks: tuple
    items: list = field(default_factory=list)
    closed: bool = False
    begins: list[int] = field(default_factory=list)  # exchange sites opened before the loop
    loop_flag: tuple | None = None  # innermost masked loop: (in_loop, skipped) flags for break/continue
    hoisted: list[Var] = field(default_factory=list)
    remat: list[Var] = field(default_factory=list)


@dataclass(eq=False)
class BScope:
    items: list


@dataclass(eq=False)
class BIf:
    cond: tuple[ci.Cursor, Ctx]
    then: list
    orelse: list | None


@dataclass(eq=False)
class BLoop:
    kind: str  # for | while | do
    init: tuple[ci.Cursor, Ctx] | None
    cond: tuple[ci.Cursor, Ctx] | None
    inc: tuple[ci.Cursor, Ctx] | None
    body: list


@dataclass(eq=False)
class BJump:
    kind: str  # break | continue


@dataclass(eq=False)
class BReset:
    """Clear a per-thread flag for every thread."""

    flag: Var


@dataclass(eq=False)
class BCheck:
    """A barrier under conditions that may differ between threads: count the threads (not
    exited) that reached it; where some but not all did, say so, naming the barrier's line."""

    masks: tuple
    where: str


@dataclass(eq=False)
class BGridSync:
    """Cooperative groups' grid.sync(): every block of the grid waits here for the others."""


@dataclass(eq=False)
class BAny:
    """Leave a masked loop when no thread is still in it."""

    flag: Var


# ---------------------------------------------------------------------------------------
# Small cursor utilities


def cursor_tokens(c: ci.Cursor) -> list[ci.Token]:
    return list(c.get_tokens())


def captures_by_value(lambda_expr: ci.Cursor) -> bool:
    """A lambda whose capture list (`[=]`, `[x]`, `[this]`, `[&, x]`) copies a value."""
    tokens = [t.spelling for t in cursor_tokens(lambda_expr)]
    if not tokens or tokens[0] != "[" or "]" not in tokens:
        return True
    items, item = [], []
    for t in tokens[1:tokens.index("]")]:
        if t == ",":
            items.append(item)
            item = []
        else:
            item.append(t)
    items.append(item)
    return any(part and part[0] != "&" for part in items)


def child_cursors(c: ci.Cursor) -> list[ci.Cursor]:
    return list(c.get_children())


def _paren_close(c: ci.Cursor) -> tuple[int, list[int]]:
    """Offset of the `)` closing the statement's header and of the `;` at its top level."""
    depth, semis = 0, []
    for t in cursor_tokens(c):
        s = t.spelling
        if s in ("(", "[", "{"):
            depth += 1
        elif s in (")", "]", "}"):
            depth -= 1
            if depth == 0 and s == ")":
                return t.extent.start.offset, semis
        elif s == ";" and depth == 1:
            semis.append(t.extent.start.offset)
    return c.extent.end.offset, semis


def stmt_list(c: ci.Cursor | None) -> list[ci.Cursor]:
    if c is None:
        return []
    return child_cursors(c) if c.kind == K.COMPOUND_STMT else [c]


def spins_on_global_memory(kernel: ci.Cursor) -> bool:
    """A loop of the kernel reads global memory through a pointer to volatile, or has an atomic
    in its condition: a wait for what another block writes (a tree's parent cell, a flag, a
    counter of arrived blocks), which needs the blocks resident at the same time."""
    body = fe.body_of(kernel)
    if body is None:
        return False
    for loop in (c for c in body.walk_preorder() if c.kind in LOOPS):
        for x in loop.walk_preorder():
            if x.kind == K.DECL_REF_EXPR and x.referenced is not None \
                    and x.referenced.kind in (K.PARM_DECL, K.VAR_DECL) and not fe.is_shared(x.referenced):
                t = x.referenced.type.get_canonical()
                if t.kind == ci.TypeKind.POINTER and t.get_pointee().is_volatile_qualified():
                    return True
        condition = _loop_condition(loop)
        if condition is not None and any(c.kind == K.CALL_EXPR and fe.call_name(c) in fe.ATOMICS
                                         for c in condition.walk_preorder()):
            return True
    return False


def _loop_condition(loop: ci.Cursor) -> ci.Cursor | None:
    parts = child_cursors(loop)
    if loop.kind == K.WHILE_STMT:
        return parts[0] if parts else None
    if loop.kind == K.DO_STMT:
        return parts[-1] if parts else None
    if loop.kind == K.FOR_STMT:
        exprs = [p for p in parts[:-1] if p.kind.is_expression()]
        return exprs[0] if exprs else None
    return None


def if_parts(c: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor, ci.Cursor | None, bool]:
    rp, _ = _paren_close(c)
    ch = child_cursors(c)
    head = [x for x in ch if x.extent.end.offset <= rp + 1]
    rest = [x for x in ch if x.extent.start.offset > rp]
    return head[-1], rest[0], (rest[1] if len(rest) > 1 else None), len(head) > 1


def early_return_condition(s: ci.Cursor) -> ci.Cursor | None:
    """c of a statement `if (c) return;` (or `{ return; }`), with no else and no init-statement."""
    if s.kind != K.IF_STMT:
        return None
    cond, then, orelse, has_init = if_parts(s)
    inner = child_cursors(then) if then.kind == K.COMPOUND_STMT else [then]
    if orelse is not None or has_init or len(inner) != 1 or inner[0].kind != K.RETURN_STMT or child_cursors(inner[0]):
        return None
    return cond


def for_parts(c: ci.Cursor):
    rp, semis = _paren_close(c)
    init = cond = inc = body = None
    s1, s2 = (semis + [rp, rp])[:2]
    for x in child_cursors(c):
        st = x.extent.start.offset
        if st > rp:
            body = x
        elif st < s1:
            init = x
        elif st < s2:
            cond = x
        else:
            inc = x
    return init, cond, inc, body


def while_parts(c: ci.Cursor):
    rp, _ = _paren_close(c)
    ch = child_cursors(c)
    cond = [x for x in ch if x.extent.end.offset <= rp + 1][-1]
    body = [x for x in ch if x.extent.start.offset > rp][0]
    return cond, body


def array_parts(type_text: str) -> tuple[str, list[str]]:
    """`float [16][17]` -> (`float`, [`16`, `17`]); a type that is no array -> (itself, [])."""
    if not is_array_type(type_text):
        return type_text.strip(), []
    head, _, dims = type_text.partition("[")
    return head.rstrip(), [d.strip() for d in ("[" + dims).strip()[1:-1].split("][")]


def unqualified_pointer(type_text: str) -> str:
    """A type without its pointer's own qualifiers (`const T *__restrict` -> `const T *`): they
    play no part in deducing T."""
    return re.sub(r"\*\s*(?:(?:const|volatile|__restrict__|__restrict|restrict)\b\s*)+", "*", type_text).strip()


def is_array_type(type_text: str) -> bool:
    return type_text.rstrip().endswith("]") and "(*" not in type_text


def value_type_of(type_text: str) -> str:
    """The type a per-thread copy is stored as: top-level const and references dropped."""
    t = type_text.strip()
    t = re.sub(r"\s*&+$", "", t)
    t = re.sub(r"\s*(const|__restrict|volatile)\s*$", "", t)
    if "*" not in t:
        t = re.sub(r"^const\s+", "", t)
    return t


# ---------------------------------------------------------------------------------------
# The lowering's own variables: block and thread counters, the flat thread id, the block's thread
# count, the exit flags, the warp exchange, dynamic shared memory. names.py renames device-code
# locals that would take one of them, so that the lowered code spells these the same in any kernel.
LOWERING_NAMES = ("bx", "by", "bz", "tx", "ty", "tz", "tid", "nthreads", "exited", "warp", "dynamic_shared")
