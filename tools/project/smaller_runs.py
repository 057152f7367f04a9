"""Smaller runs of a program that outlasts the check's time limit: its repetitions at 1, then its sizes cut.

Applications sized for a GPU often take a repetition count (`./main 8192 100`, `repeat = atoi(argv[2])`)
that only bounds the loop timing their kernels. On a CPU that loop alone can outlast the check's
time limit. Run again with such a count at 1, the program computes the same problem on the same data
and checks it as it always does: only the repetitions are fewer.

An argument counts as a repetition only when everything the program does with it is: bounding loops
that launch kernels or run a CUDA library's device work (Thrust, CUB, cuBLAS, ...; directly or through
functions it calls), dividing (an average), printing, or
being passed to a function whose parameter is used the same way. Anything else (a size, a kernel
argument, a branch) leaves the argument alone.

Where that is not enough (or there is no such count), the problem itself is made smaller: an argument
whose value sizes an allocation (malloc, cudaMalloc, new[], a vector; through the variables and function
parameters computed from it) is divided by up to SIZE_DIVISOR, by a power of two that divides it (so
that a size that was a multiple of a block size stays one) and leaves it at least SMALLEST_SIZE. The
program's own check still judges the result; a smaller run that fails proves nothing either way, and
the first run stays the verdict. (A run that crashed for memory tries only the smaller problem.)
An argument that sizes nothing but bounds a loop whose variable indexes data (`for (m = 0; m < cases;
m++) x = data[m * cols + i]`, in main or in a function or kernel it is passed to) is an extent: it says
how far into data other arguments size the program reads, and is cut with them, by no more than they
were (cut alone, the sizes would leave such a loop reading past the end of the smaller data).

Arguments are positional (`argv[2]`) or options' values: getopt's `optarg` under `case 'n':`, or
`argv[i + 1]` where `argv[i]` was compared with "-n". What they are read into (by initialisation or by
assignment) is followed wherever it is used: a local variable in its function, a struct's field or a
file-scope variable in every function of the file (and, through `Elsewhere`, of the program's other files).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import NamedTuple

import clang.cindex as ci

from tools.cuda.frontend import (Translation, body_of, call_name, callee, in_project_header, operator_of, overloads,
                                 parse_translation, strip)

_LOOPS = (ci.CursorKind.FOR_STMT, ci.CursorKind.WHILE_STMT, ci.CursorKind.DO_STMT)
_PRINTS = {"printf", "fprintf", "sprintf", "snprintf", "puts", "operator<<"}
_LAUNCH_CALLS = {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaGraphLaunch", "cudaLaunchKernelEx"}
_LIBRARY_NAMESPACES = {"thrust", "cub"}
_LIBRARY_PREFIXES = ("cublas", "cusolver", "curand", "cusparse", "cufft")
_LIBRARY_SETUP = ("Create", "Destroy", "Set", "Get")
_ALLOCATIONS = {"malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "cudaMalloc", "cudaMallocManaged",
                "cudaMallocHost", "cudaHostAlloc", "cudaMallocPitch", "cudaMalloc3D", "make_extent", "vector",
                "resize", "assign", "make_unique", "make_shared"}
_WRAPPERS = (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR, ci.CursorKind.CALL_EXPR,
             ci.CursorKind.CSTYLE_CAST_EXPR, ci.CursorKind.CXX_STATIC_CAST_EXPR, ci.CursorKind.CXX_FUNCTIONAL_CAST_EXPR,
             ci.CursorKind.CONDITIONAL_OPERATOR)
# What a value read from argv may be stored into and followed from: a variable or parameter, a struct's field.
_VARIABLES = (ci.CursorKind.VAR_DECL, ci.CursorKind.PARM_DECL, ci.CursorKind.FIELD_DECL)
_NAMED_STORES = (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.MEMBER_REF_EXPR)
_FUNCTIONS = (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE, ci.CursorKind.CXX_METHOD)
_CONTAINER_STORES = {"push_back", "emplace_back", "push_front", "emplace_front", "insert", "emplace", "assign",
                     "resize"}
_ASSIGNMENTS = ("=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^=")
_ARITHMETIC = ("+", "-", "*", "/")
_CASTS = (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR, ci.CursorKind.CSTYLE_CAST_EXPR,
          ci.CursorKind.CXX_STATIC_CAST_EXPR)
_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")
_MIRRORED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}  # `1 > count` is `count < 1`
_DEPTH = 4  # calls followed from main, for a count passed down or a launch inside a helper
SIZE_DIVISOR = 16
# A cut size stays at least this: several sizes (224 x 224 images) may multiply with the program's
# own loops into a problem too large, while a size under it is seldom what makes one so.
SMALLEST_SIZE = 16


@dataclass(frozen=True)
class ProblemArgument:
    index: int  # in argv; 0 for an option's value
    name: str  # the variable the program reads it into
    # "repeats" (only repeats kernel launches), "size" (sizes an allocation), "inverse size" (divides
    # what sizes one: `n = length / per_thread`) or "extent" (bounds a loop that indexes data: cut with the sizes)
    role: str
    option: str = ""  # the option whose value it is (`-n` of `./main -n 1000`), read by getopt or by comparing argv

    def position(self, words: list[str]) -> int | None:
        """Where its value is in the command's words (the program first)."""
        if not self.option:
            return self.index if self.index < len(words) else None
        at = next((i for i, w in enumerate(words[1:-1], 1) if w == self.option), None)
        return at + 1 if at is not None else None

    def __str__(self) -> str:
        return f"option {self.option} (`{self.name}`)" if self.option else f"argument {self.index} (`{self.name}`)"


class Elsewhere(NamedTuple):
    """What the program's other files do with what main may pass them."""
    launching: frozenset[str] = frozenset()  # the functions they define that launch kernels
    # per struct field (`Params.repeat`) and variable of the program's (`::repeat`, `ns::repeat`) they use: its
    # role there (as _Analysis._roles), and whether it sizes an allocation there
    fields: dict[str, tuple[str | None, bool]] = {}

    def __or__(self, other: "Elsewhere") -> "Elsewhere":
        fields = dict(self.fields)
        for name, (role, sizes) in other.fields.items():
            before = fields.get(name)
            fields[name] = (role, sizes) if before is None else (
                _joined([before[0], role]), before[1] or sizes)
        return Elsewhere(self.launching | other.launching, fields)


def problem_arguments(source: str, filename: str, include_dirs: list[str], options: list[str],
                      elsewhere: Elsewhere = Elsewhere()) -> list[ProblemArgument]:
    """The arguments of the file's `main` that only repeat its kernel launches, and those that size its data.
    `elsewhere`: what the program's other files do (file_facts of each)."""
    return _Analysis(parse_translation(source, filename, include_dirs, options), elsewhere).arguments()


def file_facts(source: str, filename: str, include_dirs: list[str], options: list[str]) -> Elsewhere:
    """The functions defined in the file that launch kernels (directly or through the functions they
    call), and what the file does with each struct field and each variable of the program's (`extern int
    repeat;`) it uses."""
    analysis = _Analysis(parse_translation(source, filename, include_dirs, options))
    launching = frozenset(c.spelling for c in analysis.tr.walk_main()
                          if c.kind in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE)
                          and c.is_definition() and (body := body_of(c)) is not None and analysis.launches(body, 0))
    fields = {_field_name(f): (analysis._roles(f, 0), analysis._sizes(f, 0, set()) != 0)
              for f in {_key(n.referenced): n.referenced for n in analysis.tr.walk_main()
                        if n.kind in _NAMED_STORES and n.referenced is not None and _shared(n.referenced)
                        and (n.referenced.kind == ci.CursorKind.FIELD_DECL
                             or n.referenced.linkage == ci.LinkageKind.EXTERNAL)}.values()}
    return Elsewhere(launching, fields)


class SmallerRun(NamedTuple):
    command: str
    change: str  # what it changed, in words
    smaller_problem: bool  # its sizes are cut (not only its repetitions): it needs less memory


def smaller_runs(command: str, program: str, arguments: list[ProblemArgument]) -> list[SmallerRun]:
    """Smaller runs of `command` to try in turn: its repetition arguments above 1 at 1, then also its
    sizes divided. Empty where nothing would change, or the command is more than `[cd DIR &&] PROG ARGS`."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    prefix = words[:3] if words[:1] == ["cd"] and words[2:3] == ["&&"] else []
    args = words[len(prefix):]
    if not args or args[0].removeprefix("./") != program.removeprefix("./") or \
            any(w in ("&&", "||", ";", "|", ">", "<", ">>", "&") for w in args):
        return []
    runs, changed = [], []
    for roles, what in ((("repeats",), "the same problem repeated fewer times"),
                        (("size", "inverse size", "extent"), "a smaller problem")):
        before, divisors = len(changed), []
        # the sizes first: an extent (how far into the data a loop reads) is cut only with the data it
        # reads, and by no more than the sizes were
        for arg in sorted(arguments, key=lambda a: a.role == "extent"):
            at = arg.position(args) if arg.role in roles else None
            value = args[at] if at is not None else ""
            if not value.isdigit():
                continue
            if arg.role == "extent":
                smaller = _cut_extent(int(value), min(divisors)) if divisors else None
            else:
                smaller = _smaller(arg.role, int(value))
            if smaller is None:
                continue
            if arg.role == "size":
                divisors.append(int(value) // smaller)
            changed.append(f"{arg} {value} -> {smaller}")
            args[at] = str(smaller)
        if len(changed) > before:
            runs.append(SmallerRun(" ".join(shlex.quote(w) if w != "&&" else w for w in prefix + args),
                                   f"{what} ({'; '.join(changed)})", roles[0] == "size"))
    return runs


def _smaller(role: str, value: int) -> int | None:
    if role == "repeats":
        return 1 if value > 1 else None
    if role == "inverse size":
        return value * SIZE_DIVISOR if value > 0 else None
    divisor = SIZE_DIVISOR
    while divisor > 1 and (value % divisor or value // divisor < SMALLEST_SIZE):
        divisor //= 2
    return value // divisor if divisor > 1 else None


def _cut_extent(value: int, divisor: int) -> int | None:
    """An extent divided by the largest power of two up to `divisor` that divides it (at least 1)."""
    while divisor > 1 and (value % divisor or value // divisor < 1):
        divisor //= 2
    return value // divisor if divisor > 1 else None


class _Analysis:
    def __init__(self, tr: Translation, elsewhere: Elsewhere = Elsewhere()) -> None:
        self.tr = tr
        self.launching: dict[tuple, bool] = {}
        self.elsewhere = elsewhere
        self.indexing: set[tuple] = set()  # the loops whose variables' uses are being followed
        self.following: set[tuple] = set()  # the variables whose uses are being followed

    def arguments(self) -> list[ProblemArgument]:
        main = next((c for c in self.tr.tu.cursor.get_children() if c.kind == ci.CursorKind.FUNCTION_DECL
                     and c.spelling == "main" and c.is_definition() and self.tr.in_main(c)), None)
        params = [c for c in main.get_children() if c.kind == ci.CursorKind.PARM_DECL] if main else []
        if len(params) < 2:
            return []
        argv = params[1]
        # argv[k] read into a variable, or an option's value: getopt's optarg under `case 'n':`, or argv[i + 1]
        # under a test of argv[i] against "-n"
        stores: dict[int | str, list[ci.Cursor | None]] = {}
        for node, above in _walk(main):
            if node.kind == ci.CursorKind.DECL_REF_EXPR and node.spelling == "optarg":
                if (option := _getopt_case(above)) is not None:
                    stores.setdefault(option, []).append(_stored_into(above))
                continue
            if node.kind != ci.CursorKind.ARRAY_SUBSCRIPT_EXPR:
                continue
            base, index = (strip(c) for c in node.get_children())
            if base.kind != ci.CursorKind.DECL_REF_EXPR or not _refers_to(base, argv):
                continue
            if index.kind == ci.CursorKind.INTEGER_LITERAL:
                number = int(next(index.get_tokens()).spelling.rstrip("uUlL"), 0)
                stores.setdefault(number, []).append(_stored_into(above))
            elif (option := _compared_option(above)) is not None:
                stores.setdefault(option, []).append(_stored_into(above))
        found = []
        for k, targets in sorted(stores.items(), key=lambda item: (isinstance(item[0], str), item[0])):
            if any(t is None for t in targets):
                continue
            where = {"index": 0, "option": k} if isinstance(k, str) else {"index": k}
            if all(self._roles(t, 0) == "repeats" for t in targets):
                found.append(ProblemArgument(name=targets[0].spelling, role="repeats", **where))
            elif (sizing := {self._sizes(t, 0, set()) for t in targets} - {0}) and len(sizing) == 1:
                role = "size" if sizing == {1} else "inverse size"
                found.append(ProblemArgument(name=targets[0].spelling, role=role, **where))
            elif any(self._bounds_indexing(t, 0, set()) for t in targets) \
                    and not any(self._configures_launch(t) for t in targets):
                found.append(ProblemArgument(name=targets[0].spelling, role="extent", **where))
        return found

    def _bounds_indexing(self, var: ci.Cursor, depth: int, seen: set[tuple]) -> bool:
        """Whether `var` (through the variables computed from it and the parameters of the project's
        functions and kernels it is passed to) bounds a loop whose variable indexes an array in its body:
        how far into data sized by other arguments the program reads (`for (m = 0; m < rows; m++)
        x = data[m * cols + i]`)."""
        if depth > _DEPTH or _key(var) in seen:
            return False
        seen.add(_key(var))
        return any(self._bounds_indexing_at([*above, ref], depth, seen) for ref, above in self._uses(var))

    def _configures_launch(self, var: ci.Cursor) -> bool:
        """`var`, or a variable initialised from it, is in a launch's configuration (`k<<<blocks, var>>>`): a
        block size that also divides the work among threads says how the work is split, not how much of it
        there is."""
        for ref, above in self._uses(var):
            if _in_launch_configuration(ref, above):
                return True
            declared = next((a for a in reversed(above) if a.kind == ci.CursorKind.VAR_DECL), None)
            if declared is not None and not _shared(declared) and \
                    any(_in_launch_configuration(r, a) for r, a in self._uses(declared)):
                return True
        return False

    def _bounds_indexing_at(self, path: list[ci.Cursor], depth: int, seen: set[tuple]) -> bool:
        """The use at the end of `path` is a loop's bound (the loop's condition compares with it, or with a
        sum or product of it) and the loop's variable indexes an array in its body; or the value is copied,
        computed with or passed on to where it is one. Any other use (a clamp, `min(height, rows - t)`; a
        branch) says nothing."""
        compared = False
        for i in range(len(path) - 2, -1, -1):
            node, below = path[i], path[i + 1]
            if node.kind in _CASTS or node.kind == ci.CursorKind.CXX_FUNCTIONAL_CAST_EXPR:
                continue
            if node.kind in _LOOPS:
                children = list(node.get_children())
                body = children[0] if node.kind == ci.CursorKind.DO_STMT else children[-1]
                if not compared or _same(below, body):
                    return False
                return any(_indexes(n, above, body) for v in _loop_variables(node, children)
                           for n, above in self._uses(v))
            op = operator_of(node) if node.kind == ci.CursorKind.BINARY_OPERATOR else ""
            if compared:
                return False  # a comparison that is not the loop's condition
            if op in _COMPARISONS:
                compared = True
            elif op in _ARITHMETIC:
                continue
            elif node.kind == ci.CursorKind.CALL_EXPR and (param := _parameter_for(node, below)) is not None:
                return self._bounds_indexing(param, depth + 1, seen)
            elif node.kind == ci.CursorKind.VAR_DECL:
                return self._bounds_indexing(node, depth, seen)
            elif op == "=":
                target = strip(next(node.get_children()))
                if _same(target, below) or target.kind not in _NAMED_STORES or target.referenced is None:
                    return False
                return self._bounds_indexing(target.referenced, depth, seen)
            else:
                return False
        return False

    def _sizes(self, var: ci.Cursor, depth: int, seen: set[tuple]) -> int:
        """1 where some allocation's size is computed from `var` (-1 where it divides it, `length / var`):
        in the call's arguments, or through a variable, a container it is put in, a parameter of a project
        function or what such a function returns; 0 where none is."""
        if depth > _DEPTH or _key(var) in seen:
            return 0
        seen.add(_key(var))
        if _shared(var) and self.elsewhere.fields.get(_field_name(var), (None, False))[1]:
            return 1
        return next((found for ref, above in self._uses(var) if (found := self._sized_from([*above, ref], depth, seen))), 0)

    def _sized_from(self, path: list[ci.Cursor], depth: int, seen: set[tuple]) -> int:
        """The value at the end of `path` (a use, and its ancestors from its function down) sizes an
        allocation (1), or divides what sizes one (-1); 0 where it does neither."""
        sign = 1
        for i in range(len(path) - 2, -1, -1):
            node, below = path[i], path[i + 1]
            if node.kind == ci.CursorKind.CXX_NEW_EXPR or \
                    node.kind == ci.CursorKind.CALL_EXPR and call_name(node) in _ALLOCATIONS:
                return sign
            if node.kind == ci.CursorKind.CALL_EXPR and (param := _parameter_for(node, below)) is not None:
                return sign * self._sizes(param, depth + 1, seen)
            if node.kind == ci.CursorKind.CALL_EXPR and call_name(node) in _CONTAINER_STORES:
                container = _object_of(node)  # `shape.push_back(n)`: the container holds the size
                return sign * self._sizes(container, depth, seen) if container is not None else 0
            if node.kind == ci.CursorKind.VAR_DECL:
                return sign * self._sizes(node, depth, seen)
            if node.kind == ci.CursorKind.BINARY_OPERATOR and operator_of(node) in ("/", ">>") \
                    and not _same(next(node.get_children()), below):
                sign = -sign  # the divisor: the larger it is, the smaller what it sizes
                continue
            if node.kind in (ci.CursorKind.BINARY_OPERATOR, ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) \
                    and operator_of(node).endswith("=") and operator_of(node) not in ("==", "!=", "<=", ">="):
                target = strip(next(node.get_children()))
                if _same(target, below) or target.kind not in _NAMED_STORES or target.referenced is None:
                    return 0
                divides = operator_of(node) in ("/=", ">>=")  # `n /= per`
                return (-sign if divides else sign) * self._sizes(target.referenced, depth, seen)
            if node.kind == ci.CursorKind.CXX_FOR_RANGE_STMT:  # `for (int d : dims)`: d takes the values
                element = next(node.get_children(), None)
                if element is None or element.kind != ci.CursorKind.VAR_DECL or _same(element, below):
                    return 0
                return sign * self._sizes(element, depth, seen)
            if node.kind == ci.CursorKind.RETURN_STMT:  # what the function returns, where it is called
                if depth >= _DEPTH:
                    return 0
                return sign * next((found for call, above in self._calls_of(path[0])
                                    if (found := self._sized_from([*above, call], depth + 1, seen))), 0)
            if node.kind.is_statement():
                return 0
        return 0

    def _calls_of(self, fn: ci.Cursor):
        """(call, its ancestors from its function down) of each call of `fn` in the file (of a template, of
        its instances)."""
        key = _named_at(fn)
        for top in self.tr.tu.cursor.get_children():
            if self.tr.in_main(top) and top.kind in _FUNCTIONS:
                for node, above in _walk(top):
                    target = _project_callee(node) if node.kind == ci.CursorKind.CALL_EXPR else None
                    definition = target.get_definition() if target is not None else None
                    if definition is not None and _named_at(definition) == key:
                        yield node, above

    def _roles(self, var: ci.Cursor, depth: int) -> str | None:
        """"repeats" where every use of `var` is a repeating one and one of them bounds a loop that launches
        kernels; "counts" where every use is but none launches; None where some other use is."""
        if depth > _DEPTH:
            return None
        key = _key(var)
        if key in self.following:
            # a use in the variable's own update (`elapsed = elapsed / repeat`, `t = t * 1e-3 / repeat`): it
            # stays what it was, and its other uses say what it is for
            return "counts"
        self.following.add(key)
        try:
            roles = [self._role(n, above, depth) for n, above in self._uses(var)]
        finally:
            self.following.discard(key)
        if _shared(var) and (there := self.elsewhere.fields.get(_field_name(var))):
            roles.append(there[0])
        return _joined(roles)

    def _role(self, ref: ci.Cursor, above: list[ci.Cursor], depth: int) -> str | None:
        path = [*above, ref]
        parent, child = _first_not_wrapping(path)
        if parent is None:
            return None
        if parent.kind == ci.CursorKind.COMPOUND_STMT:
            return "counts"  # a value left unused (what a call returns, as a statement)
        op = operator_of(parent) if parent.kind in (ci.CursorKind.BINARY_OPERATOR,
                                                    ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) else ""
        left = op and _same(next(parent.get_children()), child)
        if op in _ASSIGNMENTS and left:
            return "counts"  # written (a default, the value read from argv, a sum of times)
        if op in ("=", "/=") or parent.kind == ci.CursorKind.VAR_DECL:
            # a copy, or what is divided by it (`elapsed /= repeat`): what the variable is used for
            copy = parent if parent.kind == ci.CursorKind.VAR_DECL else strip(next(parent.get_children()))
            copy = copy if copy.kind == ci.CursorKind.VAR_DECL else copy.referenced
            return self._roles(copy, depth + 1) if copy is not None and copy.kind in _VARIABLES else None
        if op in _ARITHMETIC and depth <= _DEPTH:
            # computed with (`repeat + 1`), divided by (`time / repeat`, an average): what the result is used
            # for (printed, bounding the loop) says; `(float)p / repeat` passed to a kernel changes its data.
            # The walk goes up the expression only (it ends there): it spends none of the depth that bounds the
            # copies and calls followed (`bandwidth = bytes / elapsed / 1e6` of `elapsed = elapsed / repeat`)
            i = next(i for i in range(len(path) - 1, -1, -1) if path[i] is parent)
            return self._role(parent, path[:i], depth)
        if parent.kind == ci.CursorKind.UNARY_OPERATOR and operator_of(parent) == "&" \
                and _enclosing_call_name(path) in ("sscanf", "fscanf"):
            return "counts"
        if _enclosing_call_name(path) in _PRINTS:  # printed (not passed to a call whose result is)
            return "counts"
        if op in _COMPARISONS and _same_for_every_count(op if left else _MIRRORED[op], _other_operand(parent, child)):
            return "counts"  # a check that 1 passes as the count given did (`if (repeat < 1) return -1;`)
        if parent.kind == ci.CursorKind.CALL_EXPR:
            return self._passed_on(parent, child, depth)
        if parent.kind == ci.CursorKind.RETURN_STMT:  # returned: what its callers use the value for
            fn = next((c for c in reversed(path) if c.kind in _FUNCTIONS or c.kind == ci.CursorKind.LAMBDA_EXPR), None)
            if fn is None or fn.kind == ci.CursorKind.LAMBDA_EXPR or depth >= _DEPTH:
                return None
            return _joined([self._role(call, above, depth + 1) for call, above in self._calls_of(fn)])
        return self._bounded_loop(path, depth)

    def _uses(self, var: ci.Cursor):
        """(use, its ancestors) of a variable or parameter in its function; of a struct's field
        (`p.repeat`) or a file-scope variable (`static int repeat;`), in every function of the file."""
        if _shared(var):
            for top in self.tr.tu.cursor.get_children():
                if self.tr.in_main(top) and top.kind != ci.CursorKind.VAR_DECL:  # (not its own declaration)
                    yield from ((n, above) for n, above in _walk(top) if n.kind in _NAMED_STORES
                                and _refers_to(n, var))
            return
        scope = var.semantic_parent
        if scope is not None and scope.kind in _FUNCTIONS:
            yield from ((n, above) for n, above in _walk(scope) if n.kind == ci.CursorKind.DECL_REF_EXPR
                        and _refers_to(n, var))

    def _passed_on(self, call: ci.Cursor, arg: ci.Cursor, depth: int) -> str | None:
        param = _parameter_for(call, arg)
        return self._roles(param, depth + 1) if param is not None else None

    def _bounded_loop(self, path: list[ci.Cursor], depth: int) -> str | None:
        """The use is in the header of the nearest loop around it: "repeats" where that loop's body
        launches kernels, "counts" where it does not (the program's own reference, repeated alike).
        None where the body uses the loop's own variable (`k<<<g, b>>>(d, i)`, `(float)i / repeat`) other
        than as a repetition's count: each pass computes something else, and fewer passes other data."""
        for i in range(len(path) - 2, -1, -1):
            if path[i].kind in _LOOPS:
                loop, below = path[i], path[i + 1]
                children = list(loop.get_children())
                body = children[0] if loop.kind == ci.CursorKind.DO_STMT else children[-1]
                if _same(below, body):
                    return None
                if not self.launches(body, 0):
                    return "counts"
                if (key := _key(loop)) in self.indexing:
                    return "repeats"  # (its variable's own uses in its header)
                self.indexing.add(key)
                try:
                    for var in _loop_variables(loop, children):
                        in_body = [(n, above) for n, above in self._uses(var) if any(_same(a, body) for a in above)]
                        if any(self._role(n, above, depth + 1) is None for n, above in in_body):
                            return None
                finally:
                    self.indexing.discard(key)
                return "repeats"
        return None

    def launches(self, cursor: ci.Cursor, depth: int) -> bool:
        if any(t.spelling == "<<<" for t in cursor.get_tokens()):
            return True
        for c in cursor.walk_preorder():
            if c.kind != ci.CursorKind.CALL_EXPR:
                continue
            if call_name(c) in _LAUNCH_CALLS or _library_work(c):
                return True
            if (param := _called_parameter(c)) is not None:
                if depth < _DEPTH and any(self.launches(passed, depth + 1) for passed in self._passed_for(param, depth)):
                    return True
                continue
            fn = _project_callee(c)
            definition = fn.get_definition() if fn is not None else None
            if definition is None and fn is not None and fn.spelling in self.elsewhere.launching:
                return True  # defined in another file of the program, where it launches
            if definition is None or depth >= _DEPTH or not in_project_header(definition):
                continue
            key = _key(definition)
            if key not in self.launching:
                self.launching[key] = False  # a recursive call adds no launch of its own
                body = body_of(definition)
                self.launching[key] = body is not None and self.launches(body, depth + 1)
            if self.launching[key]:
                return True
        return False


    def _passed_for(self, param: ci.Cursor, depth: int) -> list[ci.Cursor]:
        """What the calls of a function pass for its parameter `param` that the function calls (`kernel(args...)`
        of `benchmark(repeat, layernorm, ...)`, a function pointer, a lambda): the passed functions' bodies
        and the lambdas; through parameters of the callers passed on alike."""
        fn = param.semantic_parent
        params = [c for c in fn.get_children() if c.kind == ci.CursorKind.PARM_DECL] if fn is not None else []
        position = next((i for i, c in enumerate(params) if _key(c) == _key(param)), None)
        found = []
        for call, _ in self._calls_of(fn) if position is not None else ():
            args = list(call.get_arguments())
            arg = strip(args[position]) if position < len(args) else None
            if arg is not None and arg.kind == ci.CursorKind.UNARY_OPERATOR and operator_of(arg) == "&":
                arg = strip(next(arg.get_children()))
            while arg is not None and (arg.kind == ci.CursorKind.UNEXPOSED_EXPR or arg.kind == ci.CursorKind.CALL_EXPR
                                       and arg.referenced is not None
                                       and arg.referenced.kind == ci.CursorKind.CONSTRUCTOR) \
                    and len(list(arg.get_children())) == 1:  # a lambda converted (to a std::function), a reference bound
                arg = next(arg.get_children())
            if arg is None:
                continue
            if arg.kind == ci.CursorKind.LAMBDA_EXPR:
                found.append(arg)
            elif arg.kind == ci.CursorKind.DECL_REF_EXPR and (target := arg.referenced) is not None:
                if target.kind in _FUNCTIONS and (definition := target.get_definition()) is not None \
                        and in_project_header(definition) and (body := body_of(definition)) is not None:
                    found.append(body)
                elif target.kind == ci.CursorKind.PARM_DECL and depth < _DEPTH:
                    found += self._passed_for(target, depth + 1)
                elif target.kind == ci.CursorKind.VAR_DECL:  # `auto step = [&] { ... };`
                    found += [c for c in target.walk_preorder() if c.kind == ci.CursorKind.LAMBDA_EXPR][:1]
        return found


def _library_work(call: ci.Cursor) -> bool:
    """A call that runs device work in a CUDA library: Thrust's and CUB's algorithms and containers
    (`thrust::sort_by_key`, `cub::DeviceReduce::Sum`), cuBLAS, cuSOLVER, cuRAND, cuSPARSE and cuFFT
    computations (not their handles' creation, settings and queries). A loop of them is a GPU
    program's timed repetition as a loop of `<<<...>>>` is."""
    fn = call.referenced
    if fn is None:
        return False
    outermost = None
    parent = fn.semantic_parent
    while parent is not None and parent.kind != ci.CursorKind.TRANSLATION_UNIT:
        if parent.kind == ci.CursorKind.NAMESPACE:
            outermost = parent.spelling
        parent = parent.semantic_parent
    if outermost in _LIBRARY_NAMESPACES:
        return True
    prefix = next((p for p in _LIBRARY_PREFIXES if fn.spelling.startswith(p)), None)
    return prefix is not None and not fn.spelling[len(prefix):].startswith(_LIBRARY_SETUP)


def _project_callee(call: ci.Cursor) -> ci.Cursor | None:
    """The function a call calls; for a call a template leaves to its instantiation (`benchmark(times, kernel)`
    with `kernel` of a template's type), the one function of the project so named that it may call."""
    if (fn := callee(call)) is not None:
        return fn
    candidates = {_key(d): d for x in call.walk_preorder() if x.kind == ci.CursorKind.OVERLOADED_DECL_REF
                  for d in (overloads(x) if x.spelling == call_name(call) else ())
                  if d.kind in _FUNCTIONS and in_project_header(d)}
    return next(iter(candidates.values())) if len(candidates) == 1 else None


def _called_parameter(call: ci.Cursor) -> ci.Cursor | None:
    """The parameter a call calls (`kernel(args...)`, `(*fp)(x)`, `body()` of a std::function), or None."""
    if call.referenced is not None and call.referenced.kind == ci.CursorKind.PARM_DECL:
        return call.referenced
    first = next(call.get_children(), None)
    target = strip(first) if first is not None else None
    if target is not None and target.kind == ci.CursorKind.UNARY_OPERATOR and operator_of(target) == "*":
        target = strip(next(target.get_children()))
    if target is not None and target.kind == ci.CursorKind.DECL_REF_EXPR and target.referenced is not None \
            and target.referenced.kind == ci.CursorKind.PARM_DECL:
        return target.referenced  # (the object of `operator()`, or the pointer called)
    return None


def _parameter_for(call: ci.Cursor, arg: ci.Cursor) -> ci.Cursor | None:
    """The parameter of the project function `call` calls that receives `arg`."""
    fn = _project_callee(call)
    definition = fn.get_definition() if fn is not None else None
    if definition is None or not in_project_header(definition):
        return None
    position = next((i for i, a in enumerate(call.get_arguments()) if _same(a, arg)), None)
    params = [c for c in definition.get_children() if c.kind == ci.CursorKind.PARM_DECL]
    return params[position] if position is not None and position < len(params) else None


def _in_launch_configuration(ref: ci.Cursor, above: list[ci.Cursor]) -> bool:
    """The use `ref` lies between the `<<<` and the `>>>` of a kernel launch around it."""
    offset = ref.extent.start.offset
    for node in reversed(above):
        if node.kind != ci.CursorKind.CALL_EXPR:
            if node.kind.is_statement():
                return False
            continue
        tokens = list(node.get_tokens())
        opens = [t.extent.start.offset for t in tokens if t.spelling == "<<<"]
        closes = [t.extent.start.offset for t in tokens if t.spelling == ">>>"]
        if opens and closes and opens[0] < offset < closes[0]:
            return True
    return False


def _indexes(ref: ci.Cursor, above: list[ci.Cursor], body: ci.Cursor) -> bool:
    """The use `ref` of a loop's variable is inside the loop's `body`, in the index of an array subscript."""
    path = [*above, ref]
    if not any(_same(a, body) for a in above):
        return False
    for i in range(len(path) - 2, -1, -1):
        node = path[i]
        if node.kind == ci.CursorKind.ARRAY_SUBSCRIPT_EXPR:
            return not _same(next(node.get_children()), path[i + 1])  # (not the array itself)
        if node.kind.is_statement():
            return False
    return False


def _joined(roles: list[str | None]) -> str | None:
    """The role of a value from those of its uses (see _Analysis._roles)."""
    if None in roles:
        return None
    return "repeats" if "repeats" in roles else "counts"  # (a parameter a function ignores counts nothing)


def _other_operand(binary: ci.Cursor, operand: ci.Cursor) -> ci.Cursor:
    return next(c for c in binary.get_children() if not _same(c, operand))


def _integer_constant(c: ci.Cursor) -> int | None:
    """The value of an integer literal as written (`0`, `-1`, `1u`), through casts and parentheses."""
    c = strip(c)
    while c.kind in _CASTS:
        inner = list(c.get_children())
        if len(inner) != 1:
            return None
        c = strip(inner[0])
    if c.kind == ci.CursorKind.UNARY_OPERATOR and operator_of(c) == "-":
        value = _integer_constant(next(c.get_children()))
        return -value if value is not None else None
    if c.kind != ci.CursorKind.INTEGER_LITERAL:
        return None
    spelling = next((t.spelling for t in c.get_tokens()), "").rstrip("uUlL")
    try:
        return int(spelling, 0)
    except ValueError:
        return None


def _same_for_every_count(op: str, constant: ci.Cursor) -> bool:
    """`count op constant` is the same for a count of 1 as for every larger one: a smaller run (the count
    at 1) takes the branch the program took (a check rejecting counts under 1, or a count of 0)."""
    c = _integer_constant(constant)
    if c is None:
        return False
    return c <= 1 if op in ("<", ">=") else c <= 0


def _shared(var: ci.Cursor) -> bool:
    """A struct's field or a variable outside any function (the file's, a namespace's, a class's static
    member): what every function may read."""
    if var.kind == ci.CursorKind.FIELD_DECL:
        return True
    scope = var.semantic_parent
    return var.kind == ci.CursorKind.VAR_DECL and scope is not None and scope.kind not in _FUNCTIONS \
        and scope.kind != ci.CursorKind.LAMBDA_EXPR


def _field_name(var: ci.Cursor) -> str:
    """`Params.repeat`, `::repeat`, `ns::repeat`: a struct field or a variable of the program's, as every
    file of it names it."""
    if var.kind == ci.CursorKind.FIELD_DECL:
        return f"{var.semantic_parent.spelling}.{var.spelling}"
    scopes, scope = [], var.semantic_parent
    while scope is not None and scope.kind != ci.CursorKind.TRANSLATION_UNIT:
        scopes.append(scope.spelling)
        scope = scope.semantic_parent
    return "::".join([*reversed(scopes), var.spelling]) if scopes else f"::{var.spelling}"


def _object_of(call: ci.Cursor) -> ci.Cursor | None:
    """The variable a method is called on (`shape` of `shape.push_back(n)`), or None."""
    member = next(call.get_children(), None)
    target = strip(next(member.get_children(), None)) if member is not None and \
        member.kind == ci.CursorKind.MEMBER_REF_EXPR and next(member.get_children(), None) is not None else None
    return target.referenced if target is not None and target.kind in _NAMED_STORES else None


def _walk(root: ci.Cursor, above: list[ci.Cursor] | None = None):
    """(node, its ancestors from root down) for every cursor below root."""
    above = above or [root]
    for child in root.get_children():
        yield child, above
        yield from _walk(child, [*above, child])


def _refers_to(ref: ci.Cursor, var: ci.Cursor) -> bool:
    target = ref.referenced
    return target is not None and target == var


def _key(c: ci.Cursor) -> tuple:
    loc = c.extent.start
    return (loc.file.name if loc.file else "", loc.offset, c.kind.value)


def _named_at(fn: ci.Cursor) -> tuple:
    """Where a function's name is: the same for a template and the instances of it that calls name."""
    loc = fn.location
    return (loc.file.name if loc.file else "", loc.offset)


def _same(a: ci.Cursor, b: ci.Cursor) -> bool:
    return _key(a) == _key(b) and a.extent.end.offset == b.extent.end.offset


def _loop_variables(loop: ci.Cursor, children: list[ci.Cursor]) -> list[ci.Cursor]:
    """The variables a loop's header declares or steps (`i` of `for (int i = 0; i < n; i++)`, `c` of
    `while (c-- > 0)`)."""
    header = children[1:] if loop.kind == ci.CursorKind.DO_STMT else children[:-1]
    found = {}
    for part in header:
        for c in part.walk_preorder():
            if c.kind == ci.CursorKind.VAR_DECL:
                found[_key(c)] = c
            elif c.kind == ci.CursorKind.UNARY_OPERATOR and operator_of(c) in ("++", "--") or \
                    c.kind in (ci.CursorKind.BINARY_OPERATOR, ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR) \
                    and operator_of(c) in _ASSIGNMENTS:
                target = strip(next(c.get_children()))
                if target.kind == ci.CursorKind.DECL_REF_EXPR and target.referenced is not None \
                        and target.referenced.kind in _VARIABLES:
                    found[_key(target.referenced)] = target.referenced
    return list(found.values())


def _first_not_wrapping(path: list[ci.Cursor]) -> tuple[ci.Cursor | None, ci.Cursor]:
    """The nearest ancestor that does more than carry the value up (parentheses, conversions, casts), and
    its child on the path."""
    for i in range(len(path) - 2, -1, -1):
        node = path[i]
        if node.kind in (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR, ci.CursorKind.CSTYLE_CAST_EXPR,
                         ci.CursorKind.CXX_STATIC_CAST_EXPR, ci.CursorKind.CXX_FUNCTIONAL_CAST_EXPR):
            continue
        return node, path[i + 1]
    return None, path[-1]


def _up_to_statement(path: list[ci.Cursor]):
    """The ancestors of the use within its statement."""
    for node in reversed(path[:-1]):
        if node.kind.is_statement() or node.kind == ci.CursorKind.VAR_DECL:
            return
        yield node


def _enclosing_call_name(path: list[ci.Cursor]) -> str:
    return next((call_name(c) for c in _up_to_statement(path) if c.kind == ci.CursorKind.CALL_EXPR), "")


def _getopt_case(above: list[ci.Cursor]) -> str | None:
    """`-n` for a use of getopt's optarg under `case 'n':`."""
    case = next((c for c in reversed(above) if c.kind == ci.CursorKind.CASE_STMT), None)
    label = next(case.get_children(), None) if case is not None else None
    tokens = [t.spelling for t in label.get_tokens()] if label is not None else []
    if len(tokens) == 1 and len(tokens[0]) == 3 and tokens[0][0] == tokens[0][2] == "'":
        return "-" + tokens[0][1]
    return None


def _compared_option(above: list[ci.Cursor]) -> str | None:
    """`-n` for `argv[i + 1]` (or `argv[++i]`) in the branch of `if (strcmp(argv[i], "-n") == 0)`: the one
    option-like string literal of the nearest condition the read is under."""
    for i in range(len(above) - 1, 0, -1):
        if above[i - 1].kind != ci.CursorKind.IF_STMT:
            continue
        condition, *branches = above[i - 1].get_children()
        if branches and not _same(above[i], branches[0]):
            return None  # under the condition itself or its else branch
        options = {t.spelling.strip('"') for t in condition.get_tokens() if t.kind == ci.TokenKind.LITERAL
                   and t.spelling.startswith('"-') and len(t.spelling) > 3}
        return options.pop() if len(options) == 1 else None
    return None


def _stored_into(above: list[ci.Cursor]) -> ci.Cursor | None:
    """The variable an `argv[k]` read ends in: `int r = atoi(argv[k])`, `r = argc > k ? atoi(argv[k]) : 100`,
    `sscanf(argv[k], "%d", &r)`; None where it goes anywhere else."""
    for i in range(len(above) - 1, -1, -1):
        node = above[i]
        if node.kind == ci.CursorKind.VAR_DECL:
            return node
        if node.kind == ci.CursorKind.BINARY_OPERATOR and operator_of(node) == "=":
            target = strip(next(node.get_children()))
            return target.referenced if target.kind in _NAMED_STORES else None
        if node.kind == ci.CursorKind.CALL_EXPR and call_name(node) == "sscanf":
            outputs = [strip(a) for a in list(node.get_arguments())[2:]]
            refs = [next(a.get_children(), None) for a in outputs if a.kind == ci.CursorKind.UNARY_OPERATOR]
            refs = [strip(r) for r in refs if r is not None]
            return refs[0].referenced if len(refs) == 1 and refs[0].kind in _NAMED_STORES else None
        if node.kind not in _WRAPPERS:
            return None
    return None


