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
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from . import frontend as fe
from . import kernel_ir as ir
from . import printer
from .coop_groups import tile_size_argument
from .exchanges import exchanged_between_barriers
from .frontend import Translation
from .printer import declarator

K = ci.CursorKind
_ENDS_IN_SEMICOLON = (K.DECL_STMT, K.RETURN_STMT, K.DO_STMT, K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT)
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


def _unsupported(feature: str, cursor: ci.Cursor | None, message: str) -> LoweringUnsupported:
    if cursor is None:
        return LoweringUnsupported(feature, 0, message)
    return LoweringUnsupported(feature, cursor.location.line, message, _file_of(cursor))


# ---------------------------------------------------------------------------------------
def _file_of(c: ci.Cursor) -> str | None:
    """The file whose bytes `c`'s offsets index: the file parsed, or a project header whose
    device function is inlined."""
    return c.extent.start.file.name if c.extent.start.file is not None else None


def _element_type(array: str) -> str:
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


def _outer_extent(array: str) -> str | None:
    """The outermost extent of an array type: `float [2][4]` -> `2`; None for a non-array."""
    dims = re.fullmatch(r"[^\[]*\[([^\]]+)\].*", array.strip(), re.S)
    return dims.group(1).strip() if dims and "(*" not in array else None


TEMPLATE_PARAMETERS = (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER)
RECORDS = (K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION)


def _template_parameters(fn: ci.Cursor) -> list[ci.Cursor]:
    """A function's template parameters, after those of the class template it is a member of."""
    owner = fn.semantic_parent
    outer = _template_parameters(owner) if owner is not None and owner.kind == K.CLASS_TEMPLATE else []
    return outer + [c for c in fn.get_children() if c.kind in TEMPLATE_PARAMETERS]


def _declaration(t: ci.Type) -> ci.Cursor:
    """The declaration of a type, also of a template parameter's type as an instantiation binds it."""
    decl = t.get_declaration()
    return decl if decl.kind != K.NO_DECL_FOUND else t.get_canonical().get_declaration()


def _classes_of(fn: ci.Cursor) -> list[ci.Cursor]:
    """The class a method belongs to and the classes around it, innermost first; none for a function
    outside classes."""
    classes, owner = [], fn.semantic_parent
    while owner is not None and owner.kind in RECORDS:
        classes.append(owner)
        owner = owner.semantic_parent
    return classes


def _class_aliases(fn: ci.Cursor) -> dict[str, str]:
    """The aliases (`using acc_t = Data<S>;`, `typedef float value_t;`) that a method's classes
    declare, by name, as the types they name (in the classes' template parameters)."""
    return {d.spelling: d.underlying_typedef_type.spelling for cls in reversed(_classes_of(fn))
            for d in _children(cls) if d.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL)}


def _default_argument(param: ci.Cursor) -> ci.Cursor | None:
    """The expression after `=` in a parameter's declaration, if it has one."""
    exprs = [c for c in param.get_children() if c.kind.is_expression()]
    return exprs[-1] if exprs else None


def _top_level_arguments(text: str) -> list[str]:
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


def _written_template_arguments(call: ci.Cursor) -> list[list[str]]:
    """The template arguments written in a call's callee, one list per `::`-separated name:
    `Dot<float, 4>::dot<2>(a)` -> [["float", "4"], ["2"]], `f(x)` -> [[]]."""
    names: list[list[str]] = [[]]
    depth, nesting, arg = 0, 0, []
    for tok in _tokens(call):
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


def _decayed(array: str) -> str:
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
        return _value_type(self.type)


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
class BAny:
    """Leave a masked loop when no thread is still in it."""

    flag: Var


# ---------------------------------------------------------------------------------------
# Small cursor utilities


def _tokens(c: ci.Cursor) -> list[ci.Token]:
    return list(c.get_tokens())


def _captures_by_value(lambda_expr: ci.Cursor) -> bool:
    """A lambda whose capture list (`[=]`, `[x]`, `[this]`, `[&, x]`) copies a value."""
    tokens = [t.spelling for t in _tokens(lambda_expr)]
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


def _children(c: ci.Cursor) -> list[ci.Cursor]:
    return list(c.get_children())


def _paren_close(c: ci.Cursor) -> tuple[int, list[int]]:
    """Offset of the `)` closing the statement's header and of the `;` at its top level."""
    depth, semis = 0, []
    for t in _tokens(c):
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


def _stmt_list(c: ci.Cursor | None) -> list[ci.Cursor]:
    if c is None:
        return []
    return _children(c) if c.kind == K.COMPOUND_STMT else [c]


def _spins_on_global_memory(kernel: ci.Cursor) -> bool:
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
    parts = _children(loop)
    if loop.kind == K.WHILE_STMT:
        return parts[0] if parts else None
    if loop.kind == K.DO_STMT:
        return parts[-1] if parts else None
    if loop.kind == K.FOR_STMT:
        exprs = [p for p in parts[:-1] if p.kind.is_expression()]
        return exprs[0] if exprs else None
    return None


def _if_parts(c: ci.Cursor) -> tuple[ci.Cursor, ci.Cursor, ci.Cursor | None, bool]:
    rp, _ = _paren_close(c)
    ch = _children(c)
    head = [x for x in ch if x.extent.end.offset <= rp + 1]
    rest = [x for x in ch if x.extent.start.offset > rp]
    return head[-1], rest[0], (rest[1] if len(rest) > 1 else None), len(head) > 1


def _early_return_condition(s: ci.Cursor) -> ci.Cursor | None:
    """c of a statement `if (c) return;` (or `{ return; }`), with no else and no init-statement."""
    if s.kind != K.IF_STMT:
        return None
    cond, then, orelse, has_init = _if_parts(s)
    inner = _children(then) if then.kind == K.COMPOUND_STMT else [then]
    if orelse is not None or has_init or len(inner) != 1 or inner[0].kind != K.RETURN_STMT or _children(inner[0]):
        return None
    return cond


def _for_parts(c: ci.Cursor):
    rp, semis = _paren_close(c)
    init = cond = inc = body = None
    s1, s2 = (semis + [rp, rp])[:2]
    for x in _children(c):
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


def _while_parts(c: ci.Cursor):
    rp, _ = _paren_close(c)
    ch = _children(c)
    cond = [x for x in ch if x.extent.end.offset <= rp + 1][-1]
    body = [x for x in ch if x.extent.start.offset > rp][0]
    return cond, body


def _array_parts(type_text: str) -> tuple[str, list[str]]:
    """`float [16][17]` -> (`float`, [`16`, `17`]); a type that is no array -> (itself, [])."""
    if not _is_array(type_text):
        return type_text.strip(), []
    head, _, dims = type_text.partition("[")
    return head.rstrip(), [d.strip() for d in ("[" + dims).strip()[1:-1].split("][")]


def _unqualified_pointer(type_text: str) -> str:
    """A type without its pointer's own qualifiers (`const T *__restrict` -> `const T *`): they
    play no part in deducing T."""
    return re.sub(r"\*\s*(?:(?:const|volatile|__restrict__|__restrict|restrict)\b\s*)+", "*", type_text).strip()


def _is_array(type_text: str) -> bool:
    return type_text.rstrip().endswith("]") and "(*" not in type_text


def _value_type(type_text: str) -> str:
    """The type a per-thread copy is stored as: top-level const and references dropped."""
    t = type_text.strip()
    t = re.sub(r"\s*&+$", "", t)
    t = re.sub(r"\s*(const|__restrict|volatile)\s*$", "", t)
    if "*" not in t:
        t = re.sub(r"^const\s+", "", t)
    return t


# ---------------------------------------------------------------------------------------
# The kernel lowering


# The lowering's own variables: block and thread counters, the flat thread id, the block's thread
# count, the exit flags, the warp exchange, dynamic shared memory. names.py renames device-code
# locals that would take one of them, so that the lowered code spells these the same in any kernel.
LOWERING_NAMES = ("bx", "by", "bz", "tx", "ty", "tz", "tid", "nthreads", "exited", "warp", "dynamic_shared")


class KernelLowering:
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
        self.waits_on_blocks = _spins_on_global_memory(kernel)
        self.loop_flags: list[tuple] = []  # masked loops being lowered, innermost last
        self.uses_dynamic_shared = False
        self.shared_as_written: set[int] = set()  # shared declarations re-emitted as written
        self.exit_flags = False  # returned threads are remembered in `exited[tid]`
        # State of the region being emitted.
        self._cur_region: Region | None = None
        self._region_sets_coords = False
        self._region_needs_label = False
        self._label = ""

    # ---- names -------------------------------------------------------------------------

    def _fresh(self, base: str) -> str:
        name, i = base, 2
        while name in self.used_names:
            name, i = f"{base}_{i}", i + 1
        self.used_names.add(name)
        return name

    # ---- facts about cursors -----------------------------------------------------------

    def _written(self, fn: ci.Cursor) -> set[int]:
        out: set[int] = set()

        def root(c: ci.Cursor) -> None:
            c = fe.strip(c)
            while True:
                if c.kind == K.DECL_REF_EXPR and c.referenced is not None:
                    out.add(c.referenced.hash)
                    return
                ch = _children(c)
                if c.kind == K.MEMBER_REF_EXPR and ch and not any(t.spelling == "->" for t in _tokens(c)):
                    c = fe.strip(ch[0])
                elif c.kind == K.ARRAY_SUBSCRIPT_EXPR and ch and fe.strip(ch[0]).type.kind == ci.TypeKind.CONSTANTARRAY:
                    c = fe.strip(ch[0])  # an element of a local array: the array is written
                elif c.kind in (K.CSTYLE_CAST_EXPR, K.UNEXPOSED_EXPR, K.PAREN_EXPR) and ch:
                    c = fe.strip(ch[-1])
                else:
                    return

        for c in fn.walk_preorder():
            ch = _children(c)
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
        named = _children(call)[:1]  # the callee's name: the overloads it names, not the arguments'
        candidates += [d for c in named for x in c.walk_preorder() if x.kind == K.OVERLOADED_DECL_REF
                       for d in fe.overloads(x) if d.kind == K.FUNCTION_TEMPLATE]
        return [[p.type for p in _children(d) if p.kind == K.PARM_DECL] for d in candidates]

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
                target = fe.strip(_children(x)[0])
                while target.kind in (K.ARRAY_SUBSCRIPT_EXPR, K.UNARY_OPERATOR, K.PAREN_EXPR, K.UNEXPOSED_EXPR) \
                        and _children(target):
                    target = fe.strip(_children(target)[0])
                if target.kind == K.DECL_REF_EXPR:
                    out.add((target.extent.start.offset, target.extent.end.offset))
        return out

    def _lockstep_store(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list) -> bool:
        """`v[i] op= e` on volatile memory as lockstep threads run it: every thread reads its
        operands (one region), then every thread stores (the next). False where `s` is no such store."""
        bare = fe.strip(s)
        if bare.kind not in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
            return False
        op = fe.operator_of(bare)
        parts = _children(bare)
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
                    raise _unsupported("barriers in a functor", call, f"{fe.call_name(call)}(...) calls an operator() "
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
                        raise _unsupported("nested warp intrinsics", x, "a barrier, warp intrinsic or synchronizing call "
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

    # ---- variables ---------------------------------------------------------------------

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
        if _file_of(ref) != _file_of(ctx.fn):
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
        toks = _tokens(decl)
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
        for ch in _children(decl):
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
        if aliases := _class_aliases(ctx.fn):
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
        for c in _template_parameters(ctx.fn):
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
            if k == K.LAMBDA_EXPR and not _captures_by_value(c):
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
                    (k == K.CXX_THIS_EXPR or not _children(c)):
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
                base = fe.strip(_children(c)[0]) if _children(c) else None
                ref = base.referenced if base is not None and base.kind == K.DECL_REF_EXPR else None
                if ref is None or not fe.is_constant(ref):
                    bump("none")
            elif k == K.UNARY_OPERATOR and fe.operator_of(c) in ("*", "&"):
                bump("none")
            elif (k == K.UNARY_OPERATOR and fe.operator_of(c) in ("++", "--")) or (k == K.BINARY_OPERATOR and fe.operator_of(c) == "=") \
                    or k == K.COMPOUND_ASSIGNMENT_OPERATOR:
                target = fe.strip(_children(c)[0]) if _children(c) else None
                if target is None or target.kind != K.DECL_REF_EXPR or target.referenced is None \
                        or target.referenced.hash not in allow_assign:
                    bump("none")
            elif k in (K.CXX_NEW_EXPR, K.CXX_DELETE_EXPR, K.LAMBDA_EXPR):
                bump("none")
            elif k == K.MEMBER_REF_EXPR and any(t.spelling == "->" for t in _tokens(c)):
                bump("none")
        return worst, tainted

    # ---- building the block-level structure ---------------------------------------------

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
        self.lower_seq(_stmt_list(fe.body_of(self.kernel)), self.ctx, (), self.items, in_loop=False)

    def lower_seq(self, stmts: list[ci.Cursor], ctx: Ctx, masks: tuple, out: list, in_loop: bool) -> None:
        for s in stmts:
            self.lower_stmt(s, ctx, masks, out, in_loop)

    def lower_stmt(self, s: ci.Cursor, ctx: Ctx, masks: tuple, out: list, in_loop: bool) -> None:
        while s.kind in (K.UNEXPOSED_STMT, getattr(K, "ATTRIBUTED_STMT", K.UNEXPOSED_STMT)) and self.contains_sync(s):
            inner = [c for c in _children(s) if c.kind.is_statement()]
            if len(inner) != 1:
                break
            s = inner[0]  # `#pragma unroll` around a loop with barriers: the loop is hoisted anyway
        k = s.kind
        if k == K.DECL_STMT and any(fe.is_shared(v) for v in _children(s)):
            self._add_shared(s, ctx)
            return
        if k == K.ASM_STMT:
            raise _unsupported("inline PTX asm", s, "inline assembly (asm) has no CPU meaning")
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
                raise _unsupported("break in divergent code", s, "break/continue of a loop with barriers under a "
                                   "thread-dependent condition")
            self.cut(out)
            out.append(BJump("break" if k == K.BREAK_STMT else "continue"))
            return
        if k == K.COMPOUND_STMT:
            inner: list = []
            self.cut(out)
            self.lower_seq(_children(s), ctx, masks, inner, in_loop)
            self.cut(inner)
            out.append(BScope(inner))
            return
        if k == K.IF_STMT:
            self._lower_if(s, ctx, masks, out, in_loop, _if_parts(s))
            return
        if (choice := fe.strip(s)).kind == K.CONDITIONAL_OPERATOR:
            # `c ? __syncthreads() : __syncwarp();` is `if (c) ... else ...`
            cond, then, orelse = _children(choice)
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
            raise _unsupported("barrier in switch", s, "a barrier or warp intrinsic inside a switch/goto")
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
            cond = _early_return_condition(s)
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
            raise _unsupported("barrier in condition", s, "an if with an init-statement or a warp intrinsic in its "
                               "condition around code with barriers")
        kind, tainted = self.expr_class(cond, ctx)
        if kind == "uniform" and not masks:
            self.cut(out)
            then_items: list = []
            self.lower_seq(_stmt_list(then), ctx, masks, then_items, in_loop)
            self.cut(then_items)
            else_items = None
            if orelse is not None:
                else_items = []
                self.lower_seq(_stmt_list(orelse), ctx, masks, else_items, in_loop)
                self.cut(else_items)
            out.append(BIf((cond, ctx), then_items, else_items))
            return
        if in_loop and any(x is not None and self._escapes(x) for x in (then, orelse)):
            raise _unsupported("break in divergent code", s, "break/continue under a thread-dependent condition in a "
                               "loop with barriers")
        mask = self._branch_mask(cond, ctx, tainted, masks, out)
        self.lower_seq(_stmt_list(then), ctx, masks + ((mask, True),), out, in_loop)
        self.cut(out)
        if orelse is not None:
            self.lower_seq(_stmt_list(orelse), ctx, masks + ((mask, False),), out, in_loop)
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
            init, cond, inc, body = _for_parts(s)
            kind = "for"
        elif s.kind == K.WHILE_STMT:
            (cond, body), init, inc, kind = _while_parts(s), None, None, "while"
        elif s.kind == K.DO_STMT:
            ch = _children(s)
            body, cond, init, inc, kind = ch[0], ch[-1], None, None, "do"
        else:
            raise _unsupported("range-for with barriers", s, "a range-based for containing barriers")
        for part in (init, cond, inc):
            if part is not None and self._calls_sync(part):
                raise _unsupported("warp intrinsic in loop header", s, "a warp intrinsic in a loop header")
        loop_vars: list[Var] = []
        if init is not None and init.kind == K.DECL_STMT:
            loop_vars = [self.lookup(v, ctx) for v in _children(init) if v.kind == K.VAR_DECL]
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
                self.lower_seq(_stmt_list(body), ctx, masks, items, in_loop=True)
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
            self.lower_seq(_stmt_list(body), ctx, body_masks, loop, in_loop=False)
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
            if name in ("__syncthreads", "__syncwarp"):
                self.cut(out)
                if name == "__syncthreads" and any(m.branch and m.tainted for m, _ in masks):
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
            elif name in ("__syncthreads", "__syncwarp"):
                raise _unsupported("barrier in expression", call, "a barrier used inside an expression")
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
            args = [a for a in _children(call)[1:] if a.extent.start.offset < a.extent.end.offset]
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

    def _inline(self, call: ci.Cursor, ctx: Ctx, masks: tuple, out: list) -> None:
        if fe.group_call_on_template_type(call) and (cg := self._cooperative_groups_feature(call, ctx)):
            # named like the project's method, on an object that is a group
            raise _unsupported(cg, call, f"{cg} is not supported (the rest of cooperative groups is)")
        fn = self._sync_definition(call)
        if fn is None:
            raise _unsupported("synchronizing call", call, f"call of {fe.call_name(call)} (barriers inside) whose "
                               "definition is not in this file")
        depth, c = 0, ctx
        while c is not None:
            depth += fe.definition_key(c.fn) == fe.definition_key(fn)
            c = c.parent
        if depth:
            raise _unsupported("recursion", call, f"recursive synchronizing function {fn.spelling}")
        body = _stmt_list(fe.body_of(fn))
        result_type = fn.result_type.spelling
        tail = body[-1] if body and body[-1].kind == K.RETURN_STMT else None
        guarding = {r.extent.start.offset for s in body if result_type == "void" and _early_return_condition(s)
                    is not None for r in fe.returns_of(s)}  # `if (c) return;`: _lower_guarded's
        returns = [r for r in fe.returns_of(fe.body_of(fn)) if r.extent.start.offset not in guarding]
        if len(returns) > 1 or (returns and (tail is None or returns[0] != tail)):
            raise _unsupported("early return in synchronizing function", call, f"{fn.spelling} returns before its end; "
                               "only a final return, and `if (...) return;` at the top level of a void function, "
                               "are supported in functions with barriers")
        callee_ctx = Ctx(fn=fn, parent=ctx, prefix=self._fresh(fn.spelling) + "_")
        callee_ctx.written = self._written(fn)
        if fn.kind == K.CXX_METHOD and not fn.is_static_method():
            callee_ctx.this = self._object_of(call, ctx)
        self.inlined.append(callee_ctx)
        args = _children(call)[1:]
        params = fe.params_of(fn)
        while args and args[-1].extent.start.file is None:  # a default argument, as clang fills it in
            args = args[:-1]
        defaults = [_default_argument(p) for p in params[len(args):]]
        if len(args) > len(params) or any(d is None for d in defaults):
            raise _unsupported("default arguments", call, f"call of {fn.spelling} with default arguments")
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
                    raise _unsupported("reference parameter", call, f"argument of reference parameter {p.spelling} "
                                       "is not a local variable")
                callee_ctx.vars[p.hash] = var
                continue
            var = self._new_var(p, callee_ctx)
            # An array parameter, or a reference to an array, is a pointer to the caller's array.
            var.type = _decayed(self._subst_type(array.spelling, callee_ctx)) if array.kind in ARRAY_TYPES \
                else _value_type(var.type)
            var.init = (a, actx)
            var.kind, var.tainted = ("none", False) if p.hash in callee_ctx.written else self.expr_class(a, actx)
            self.region(out, masks).items.append(("decl", var, (a, actx)))
        self._lower_guarded(body[:-1] if tail is not None else body, callee_ctx, masks, out)
        if tail is not None and result_type != "void":
            value = _children(tail)[0]
            if exchanges := self._lower_sync_calls(self._own_sync_calls(value, skip_stmts=True), callee_ctx, masks, out):
                self._exchange(exchanges, callee_ctx, masks, out)  # `return __shfl_xor_sync(...)`
            res = Var(name=self._fresh(fn.spelling + "_result"), type=_value_type(self._subst_type(result_type, callee_ctx)),
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
                raise _unsupported("method call", call, f"{fe.call_name(call)}(...): the object of a method with "
                                   "barriers or warp intrinsics is not known")
            return ctx.this
        arrow = any(t.spelling == "->" for t in _tokens(member)
                    if base.extent.end.offset <= t.extent.start.offset)
        if any(x.kind in (K.CALL_EXPR, K.CXX_NEW_EXPR, K.LAMBDA_EXPR) or
               (x.kind in (K.UNARY_OPERATOR, K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR)
                and fe.operator_of(x) in ("=", "++", "--")) or x.kind == K.COMPOUND_ASSIGNMENT_OPERATOR
               for x in base.walk_preorder()):
            raise _unsupported("method of a temporary", call, f"{fe.call_name(call)}(...) is called on an object "
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
        written = _written_template_arguments(call)
        owner = fn.semantic_parent
        if owner is not None and owner.kind == K.CLASS_TEMPLATE and callee_ctx.this is not None:
            # a method of an object: its class's arguments are those of the object's type, spelled
            # by the function that declares the object
            given, object_ctx = self._class_arguments(callee_ctx.this, owner, call)
            self._bind_given(_template_parameters(owner), given, call, owner, object_ctx, callee_ctx)
        elif owner is not None and owner.kind == K.CLASS_TEMPLATE:
            if len(written) < 2:
                raise _unsupported("template deduction", call, f"cannot tell the template arguments of "
                                   f"{owner.spelling} in this call of {fn.spelling}")
            self._bind_given(_template_parameters(owner), written[-2], call, owner, ctx, callee_ctx)
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
            raise _unsupported("template deduction", use, f"cannot tell the template arguments of {owner.spelling} "
                               f"from the type {t.spelling} of the object in {' '.join(t.spelling for t in _tokens(use))}")
        count = t.get_num_template_arguments()
        if count > 0 and all(t.get_template_argument_type(i).kind != ci.TypeKind.INVALID for i in range(count)):
            args = [t.get_template_argument_type(i).spelling for i in range(count)]
        else:  # a dependent type, or values among the arguments: as spelled
            args = _top_level_arguments(rest[:-1])
        return [a.strip() for a in args], ctx

    def _member_type(self, member: ci.Cursor, ctx: Ctx) -> str | None:
        """The type of a data member of an object (`acc.mean`) where the parse leaves it dependent:
        the member's declared type, the template parameters of its class (`S mean;` in `Data<S>`)
        bound to the arguments of the object's type (`Data<float>`); None where the object's class
        is not known."""
        base = _children(member)[0]
        arrow = any(t.spelling == "->" for t in _tokens(member) if base.extent.end.offset <= t.extent.start.offset)
        t, _ = self._object_type((base, ctx, arrow))
        record = _declaration(t)
        name = member.spelling or _tokens(member)[-1].spelling
        field = next((f for f in _children(record) if f.kind == K.FIELD_DECL and f.spelling == name), None) \
            if record.kind in RECORDS else None
        if field is None:
            return None
        params = {c.spelling: i for i, c in enumerate(c for c in _children(record) if c.kind in TEMPLATE_PARAMETERS)}
        if not params:
            return field.type.spelling
        given, object_ctx = self._class_arguments((base, ctx, arrow), record, member)
        args = [self._subst_type(a, object_ctx) for a in given]
        return re.sub(r"\b\w+\b", lambda m: args[params[m.group()]] if m.group() in params else m.group(),
                      field.type.spelling)

    def _bind_given(self, tparams: list[ci.Cursor], given: list[str], call, template, ctx: Ctx, callee_ctx: Ctx,
                    deduce_from: list[tuple[ci.Cursor, ci.Cursor]] = ()) -> None:
        if len(given) > len(tparams) and not any(t.spelling == "..." for tp in tparams for t in tp.get_tokens()):
            raise _unsupported("template deduction", call, f"{len(given)} template arguments for the "
                               f"{len(tparams)} parameters of {template.spelling} that the lowering reads")
        for tp, text in zip(tparams, given):
            callee_ctx.subst[tp.hash] = self._subst_type(text, ctx)  # `f<blockSize>` inside a template inlined too
        for tp in tparams[len(given):]:
            deduced = self._deduced(tp, deduce_from, ctx)
            if deduced is None:
                deduced = self._template_default(tp, callee_ctx)
            if deduced is None:
                raise _unsupported("template deduction", call, f"cannot deduce {tp.spelling} of {template.spelling}")
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
                    if (extent := _outer_extent(atype)) is not None:
                        return extent
                if tp.kind == K.TEMPLATE_TYPE_PARAMETER and \
                        re.fullmatch(rf"(const\s+)?{re.escape(tp.spelling)}", array.element_type.spelling):
                    return re.sub(r"^const\s+", "", _element_type(atype).strip())
                continue
            if tp.kind != K.TEMPLATE_TYPE_PARAMETER:
                if (size := tile_size_argument(p.type, a.type, tp.spelling)) is not None:  # `thread_block_tile<N> g`
                    return size
                continue
            ptype = _unqualified_pointer(p.type.spelling)
            if re.search(rf"\b{re.escape(tp.spelling)}\b", ptype):
                atype = _unqualified_pointer(self._arg_type(a, ctx))
                if re.fullmatch(rf"(const\s+)?{re.escape(tp.spelling)}(\s*&)?", ptype):
                    return _value_type(atype)
                if re.fullmatch(rf"(const\s+)?{re.escape(tp.spelling)}\s*\*", ptype) and atype.rstrip().endswith("*"):
                    return re.sub(r"^const\s+", "", atype.rstrip()[:-1].strip())
        return None

    def _template_default(self, tparam: ci.Cursor, callee_ctx: Ctx) -> str | None:
        """A template parameter's default argument (`int P = 0`, `class T = float`), in terms of the
        parameters bound before it; None where it has none."""
        tokens = [t.spelling for t in _tokens(tparam)]
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
            if s.kind == K.MEMBER_REF_EXPR and _children(s) and (member := self._member_type(s, ctx)) is not None:
                return member
            if s.kind == K.ARRAY_SUBSCRIPT_EXPR and _children(s):
                return _element_type(self._arg_type(_children(s)[0], ctx))
            ch = _children(s)
            operands = ch if s.kind == K.BINARY_OPERATOR and fe.operator_of(s) in ("+", "-") else \
                [ch[0], ch[2]] if s.kind == K.CALL_EXPR and len(ch) == 3 and \
                [t.spelling for t in _tokens(ch[1])] in (["+"], ["-"]) else []
            if len(operands) == 2:  # pointer arithmetic (`rows + offset`, dependent or not): the pointer's type
                left = self._arg_type(operands[0], ctx)
                return left if _unqualified_pointer(left).endswith("*") else self._arg_type(operands[1], ctx)
            raise _unsupported("template deduction", a, "cannot tell the type of a dependent argument")
        return self._subst_type(t, ctx)

    def _add_shared(self, s: ci.Cursor, ctx: Ctx) -> None:
        decls = [v for v in _children(s) if v.kind == K.VAR_DECL]
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


    # ---- analysis: which variables cross a cut ------------------------------------------

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
                    raise _unsupported("per-thread auto variable", var.cursor or self.kernel,
                                       f"variable {var.name} lives across a barrier but its type ({var.type}) is not known")
                if var.promoted and "(lambda at " in var.type:
                    raise _unsupported("per-thread lambda", var.cursor or self.kernel,
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
                args = [a for a in _children(s)[1:] if a.extent.start.offset < a.extent.end.offset]
                t = self._exchange_type(s, args, ctx)
            else:
                t = _value_type(self._arg_type(init, ctx))
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
                    raise _unsupported(feature, x, f"{fe.call_name(x)}: {feature} are not supported")
                if cg := self._cooperative_groups_feature(x, ctx):
                    raise _unsupported(cg, x, f"{cg} is not supported (the rest of cooperative groups is)")
                if any(t.spelling == "<<<" for t in _tokens(x)):
                    raise _unsupported("dynamic parallelism", x, "a kernel launch inside a kernel")
            elif x.kind == K.ASM_STMT:
                raise _unsupported("inline PTX asm", x, "inline assembly (asm) has no CPU meaning")
            elif self._is_member_of_object(x, ctx):
                found.extend(self._scan(ctx.this[0], ctx.this[1], r))  # a member of an inlined method's object
            for ch in x.get_children():
                visit(ch)

        visit(c)
        if r is not None:
            for var in found:
                var.regions.add(r.id)
        return found

    def _shared_key(self, v: ci.Cursor, ctx: Ctx | None) -> "int | tuple[int, str]":
        """Where a __shared__ declaration's variable is kept: one per instantiation of a template's
        (a helper inlined for int and for float keeps two arrays), one per declaration otherwise."""
        if ctx is None or not ctx.subst:
            return v.hash
        return (v.hash, self._subst_type(v.type.spelling, ctx))

    def _shared_entry(self, v: ci.Cursor, ctx: Ctx | None) -> "tuple[str, ci.Cursor, Ctx | None] | None":
        return self.shared.get(self._shared_key(v, ctx)) or self.shared.get(v.hash)

    def _cooperative_groups_feature(self, call: ci.Cursor, ctx: Ctx) -> str | None:
        """fe.cooperative_groups_feature, where a call named like a group's operation on an object of
        a template parameter's type (`op.shfl_down(v, o)`) is one when the object's type, as the code
        that made the object declares it, is a group's, and is the project's method so named when
        it is another class."""
        found = fe.group_call_on_template_type(call)
        if found is not None:
            decl = _declaration(self._object_type((found[1], ctx, False))[0])
            if decl.kind in RECORDS:
                return fe.group_call_feature(found[0]) if fe.in_cooperative_groups(decl) else None
        return fe.cooperative_groups_feature(call, self.tr)

    def _is_member_of_object(self, x: ci.Cursor, ctx: Ctx) -> bool:
        """`this`, or a member named alone (`width`), in an inlined method: a use of its object."""
        return ctx.this is not None and (x.kind == K.CXX_THIS_EXPR or x.kind == K.MEMBER_REF_EXPR
                                         and not _children(x) and bool(x.spelling))

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

    def _add_shared_decl(self, v: ci.Cursor, ctx: Ctx | None) -> None:
        name = v.spelling
        if name in {n for n, _, _ in self.shared.values()}:
            name = self._fresh(name)
        self.shared[self._shared_key(v, ctx)] = (name, v, ctx)
        if v.type.kind == ci.TypeKind.INCOMPLETEARRAY:
            self.uses_dynamic_shared = True

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
            raise _unsupported("barrier in thread-dependent control flow", where,
                               f"control flow around a barrier depends on {var.name}, which may differ between threads")
        var.block_level = True
        init, ictx = var.init
        for dep in self._scan(init, ictx, None):
            self._mark_block_level(dep, init)

    # ---- rendering source text with the rewrites ----------------------------------------

    def render(self, c: ci.Cursor, ctx: Ctx, tid: str | None, start: int | None = None, end: int | None = None) -> str:
        start = c.extent.start.offset if start is None else start
        end = c.extent.end.offset if end is None else end
        reps: list[tuple[int, int, str]] = []
        self._collect(c, ctx, tid, reps, 0, start, end)
        reps.sort()
        file = _file_of(c)
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
        if ctx.this is not None and k == K.MEMBER_REF_EXPR and not _children(x) and x.spelling:
            reps.append((s, s, self._object_text(ctx.this, tid) + "."))  # `mean` -> `(acc).mean`
        if k == K.DECL_REF_EXPR and x.referenced is not None:
            text = self._ref_text(x.referenced, ctx, tid)
            if text is not None and text != x.spelling:
                if self.tr.text(s, e, _file_of(x)) != x.spelling:
                    raise _unsupported("variable in macro", x, f"{x.spelling} is used inside a macro expansion and "
                                       "must be rewritten (it lives across a barrier)")
                reps.append((s, e, text))
                return
            if text is not None or not _children(x):
                return  # else its template arguments (`mul<A, Vec, Vec>`) may name template parameters
        # a type parameter, or a template template parameter (`Func<T>::op`) bound by inlining
        if k in (K.TYPE_REF, K.TEMPLATE_REF) and x.referenced is not None and x.referenced.hash in ctx.subst:
            reps.append((s, e, ctx.subst[x.referenced.hash]))
            return
        # an alias of an inlined method's class, named unqualified as its class's members may (`acc_t`
        # in `static_cast<acc_t>(v)`): the type it names
        if k == K.TYPE_REF and x.referenced is not None and x.referenced.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL) \
                and x.referenced.semantic_parent in _classes_of(ctx.fn) \
                and self.tr.text(s, e, _file_of(x)) == x.referenced.spelling \
                and not self.tr.source_of(_file_of(x))[:s].rstrip().endswith(b"::"):
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

    def _shared_window_index(self, subscript: ci.Cursor) -> tuple[int, int] | None:
        """The extent of a subscript's index where it is a 32-bit unsigned value that a subtraction or
        a complement may wrap below zero, indexing __shared__ memory (an array, or a local pointer made
        from one), else None."""
        children = _children(subscript)
        if len(children) != 2 or children[1].type.get_canonical().kind != ci.TypeKind.UINT or not any(
                c.kind in (K.UNARY_OPERATOR, K.BINARY_OPERATOR) and fe.operator_of(c) in ("~", "-")
                for c in children[1].walk_preorder()):
            return None
        base = fe.strip(children[0])
        target = base.referenced if base.kind == K.DECL_REF_EXPR else None
        if target is None or not (fe.is_shared(target) or target.hash in self.shared_memory):
            return None
        return children[1].extent.start.offset, children[1].extent.end.offset

    def _keyword_spacing(self, statement: ci.Cursor, keyword: str, reps: list) -> None:
        """`if(`, `for  (` and the like as `if (`, `for (`."""
        src = self.tr.source_of(_file_of(statement))
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
        src = self.tr.source_of(_file_of(c))
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
        for v in _children(decl):
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
        for v in _children(decl):
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
            if _is_array(var.type):
                tmp = self._fresh("init")
                return (f"{{ const {declarator(var.type, tmp)} = {init_text}; "
                        f"std::memcpy(&{ref}, &{tmp}, sizeof({tmp})); }}")
            return var.bind(tid, init_text)
        if init_text is not None:  # a lambda's type has no spelling
            return f"{'auto ' + var.name if '(lambda at ' in var.type else declarator(var.type, var.name)} = {init_text};"
        if _is_array(var.type):
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
            return _value_type(self._subst_type(t, ctx))
        value = args[1] if fe.call_name(call).endswith("_sync") else args[0]
        return _value_type(self._arg_type(value, ctx))

    # ---- the IR of the lowered function (kernel_ir.py; printer.py prints it) ---------------------

    def _compile_time_declarations(self) -> list[str]:
        """The `constexpr`, alias and `using` declarations at the top of the kernel's body and of each
        inlined function's: the per-thread, shared and recomputed declarations, in any region,
        may name them (`float x[kNChunks][kNElts]`, `vec_t`, an inlined function's `N`). Aliases
        keep their names; an inlined function's constants take its prefix."""
        aliases = (K.TYPE_ALIAS_DECL, K.TYPEDEF_DECL, K.NAMESPACE_ALIAS, K.USING_DIRECTIVE, K.USING_DECLARATION)
        lines = []
        for ctx in (self.ctx, *self.inlined):
            body = fe.body_of(ctx.fn)
            for d in _children(body) if body is not None else []:
                parts = _children(d)
                if d.kind != K.DECL_STMT or not parts:
                    continue
                as_written = self.tr.text(d.extent.start.offset, self._after_semicolon(d.extent.end.offset, d),
                                          _file_of(d)).strip()
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
                           sets_coordinates=self.uses_coord_functions, spins_on_blocks=self.waits_on_blocks)
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
            toks = _tokens(k)
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
        for t in _tokens(fn):
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
            elem, extents = _array_parts(type_text)
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
            needs_semicolon = s.kind.is_expression() or s.kind in _ENDS_IN_SEMICOLON
            if s.kind != K.COMPOUND_STMT and not text.rstrip().endswith((";",) if needs_semicolon else (";", "}")):
                text += self.tr.text(end, self._after_semicolon(end, s), _file_of(s)).strip() or ";"
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
