"""The HPCTransEval format as its authors published it, read as it is.

A published record's lists (`input_name`, `output_name`, `input_shape`, `output_shape`) are not
always what its code takes: most records have no names, some give one name to many buffers
(`ph` thirteen times), some list inputs the computation does not take. The signatures are the
authority: the C reference's parameters say which buffers there are, the TVMScript `main`
gives their shapes and dtypes, its order (inputs, then outputs) and, by what its body stores
to, which are outputs. `repair` rebuilds a record's buffer lists from them and says what it
changed; `category_of` names the record's category (the five operator categories of the
catalog for single operators, `graph` and `block` for the other two published files).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .catalog import CATALOG
from .csource import CXX_KEYWORDS
from .format import Record

INDEX_VALUES_MAX = 8  # integer inputs are drawn below the smallest axis of the task's buffers, at most this


class PublishedFormatError(Exception):
    """A record whose buffers cannot be recovered from its signatures; the message says why."""


@dataclass(frozen=True)
class IrBuffer:
    name: str
    shape: tuple[int, ...]
    dtype: str
    stored: bool  # the body stores into it: an output


def ir_main_buffers(ir_code: str) -> list[IrBuffer]:
    """The buffer parameters of the TVMScript module's first prim_func (`main`), in order."""
    try:
        tree = ast.parse(ir_code)
    except SyntaxError as exc:
        raise PublishedFormatError(f"ir_code is not TVMScript (line {exc.lineno}: {exc.msg})") from None
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    main = next((f for f in funcs if f.name == "main"), funcs[0] if funcs else None)
    if main is None:
        raise PublishedFormatError("ir_code defines no prim_func")
    stored = _stored_buffers(main)
    out = []
    for arg in main.args.args:
        call = arg.annotation
        if not (isinstance(call, ast.Call) and _attr_name(call.func) == "Buffer" and call.args):
            continue  # a T.handle or scalar parameter
        shape = _const_shape(call.args[0])
        if shape is None:
            raise PublishedFormatError(f"buffer {arg.arg} of main has a shape that is not constant")
        dtype = "float32"
        if len(call.args) > 1 and isinstance(call.args[1], ast.Constant):
            dtype = str(call.args[1].value)
        out.append(IrBuffer(arg.arg, shape, dtype, arg.arg in stored))
    return out


def _const_int(node: ast.AST) -> int | None:
    """An integer constant as TVMScript writes it: `42`, or typed, `T.int64(42)` / `T.int32(42)`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
            and re.fullmatch(r"u?int(8|16|32|64)", _attr_name(node.func))):
        return _const_int(node.args[0])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _const_int(node.operand)
        return None if value is None else -value
    return None


def _const_shape(node: ast.AST) -> tuple[int, ...] | None:
    """A buffer's shape, `(2, 4)`, `(T.int64(42), T.int64(9))` or a bare `8`; None where an axis is
    not a constant."""
    axes = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    values = [_const_int(a) for a in axes]
    return None if any(v is None for v in values) else tuple(values)


def _attr_name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _stored_buffers(func: ast.FunctionDef) -> set[str]:
    """Parameters the body stores into, through the flat views TVM declares over them
    (`compute_2 = T.Buffer((2565,), data=compute.data)`), read in order: TVM reuses a view's name
    for another parameter further down."""
    alias: dict[str, str] = {}
    stores: set[str] = set()

    class Visitor(ast.NodeVisitor):
        def visit_Assign(self, node: ast.Assign) -> None:
            self.generic_visit(node)
            value = node.value
            if isinstance(value, ast.Call) and _attr_name(value.func) == "Buffer":
                for kw in value.keywords:
                    if kw.arg == "data" and isinstance(kw.value, ast.Attribute) and isinstance(kw.value.value, ast.Name):
                        for target in node.targets:
                            if isinstance(target, ast.Name):
                                alias[target.id] = kw.value.value.id
            self._stores(node.targets)

        def visit_AugAssign(self, node: ast.AugAssign) -> None:
            self.generic_visit(node)
            self._stores([node.target])

        def _stores(self, targets) -> None:
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    stores.add(alias.get(target.value.id, target.value.id))

    Visitor().visit(func)
    return stores


def safe_name(name: str) -> str:
    """Buffer names that are C++ keywords get the suffix repair_reference gives them."""
    return f"{name}_" if name in CXX_KEYWORDS else name


def repair(rec: Record, c_params: list[tuple[str, str]], kind: str) -> tuple[Record, list[str]]:
    """The record with buffer lists rebuilt from the signatures (`c_params`: the C reference's
    (name, C type) after repair), its category set, and notes on what changed."""
    notes: list[str] = []
    update: dict = {}
    if not rec.category:
        update["category"] = category_of(rec, kind)
    if rec.launches is not None:  # our own records list their buffers consistently
        return rec.model_copy(update=update), notes
    try:
        ir = ir_main_buffers(rec.ir_code) if rec.ir_code.strip() else []
    except PublishedFormatError as exc:
        notes.append(f"{exc}; buffers from the record's lists")
        ir = []
    if not ir:
        if len(rec.input_name) != len(rec.input_shape) or len(rec.output_name) != len(rec.output_shape):
            raise PublishedFormatError("no TVMScript signature, and the record's names and shapes differ in number")
        return rec.model_copy(update=update), notes
    taken = {name for name, _ in c_params}
    by_name = {safe_name(b.name): b for b in ir}
    missing = [n for n in taken if n not in by_name]
    if missing:
        raise PublishedFormatError(f"C reference parameters {missing} are not buffers of the TVMScript main "
                                   f"({', '.join(by_name)})")
    dropped = [b.name for b in ir if safe_name(b.name) not in taken]
    if dropped:
        notes.append(f"buffers the computation does not take dropped: {', '.join(dropped)}")
    kept = [b for b in ir if safe_name(b.name) in taken]
    outputs = [b for b in kept if b.stored] or kept[-max(1, len(rec.output_shape)):]
    inputs = [b for b in kept if b not in outputs]
    listed = [*rec.input_name, *rec.output_name]
    names = [b.name for b in (*inputs, *outputs)]
    if listed != names:
        said = f"listed {listed}" if listed else "no names listed"
        notes.append(f"buffers from the signatures ({said}): inputs {[b.name for b in inputs]}, "
                     f"outputs {[b.name for b in outputs]}")
    update |= {
        "input_name": [b.name for b in inputs], "output_name": [b.name for b in outputs],
        "input_shape": [list(b.shape) for b in inputs], "output_shape": [list(b.shape) for b in outputs],
        "input_dtype": [b.dtype for b in inputs], "output_dtype": [b.dtype for b in outputs],
    }
    ranges = _index_ranges(inputs, kept)
    if any(ranges):
        update["input_range"] = ranges
        notes.append("integer inputs drawn in " + ", ".join(f"{b.name} [{r[0]:g}, {r[1] - 1:g}]"
                                                            for b, r in zip(inputs, ranges) if r))
    return rec.model_copy(update=update), notes


def _index_ranges(inputs: list[IrBuffer], buffers: list[IrBuffer]) -> list[list[float] | None]:
    """Value ranges for integer inputs, which published operators use as indices (scatter_nd,
    take, gather): below every axis of every other buffer, so any axis they index stays in
    bounds. Exclusive high, as records store it."""
    axes = [d for b in buffers if not b.dtype.startswith(("int", "uint")) for d in b.shape if d > 1]
    high = min([INDEX_VALUES_MAX, *axes])
    return [[0.0, float(high)] if b.dtype.startswith(("int", "uint")) else None for b in inputs]


# ------------------------------------------------------------------ categories

_CATALOG_CATEGORY = {spec.name: spec.category for spec in CATALOG}
# Operators of TVM's TOPI that the published set names and the catalog does not.
_OPERATOR_WORDS = {
    "elementwise": (
        "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "erf", "exp", "fast_",
        "floor", "gelu", "log", "negative", "relu", "round", "rsqrt", "sigmoid", "sin", "sinh", "softplus", "sqrt",
        "tan", "tanh", "trunc", "elu", "selu", "mod", "add", "subtract", "multiply", "divide", "power", "fma",
        "reciprocal", "square", "cast", "bias", "scale", "mish", "swish", "silu",
    ),
    "reduction": (
        "sum", "prod", "mean", "max", "min", "argmax", "argmin", "all", "any", "norm", "softmax", "lrn", "cum",
        "variance", "std", "logsumexp", "reduce",
    ),
    "layout": (
        "transpose", "reshape", "flatten", "squeeze", "expand", "concat", "split", "stack", "slice", "take", "gather",
        "scatter", "space", "depth", "tile", "repeat", "flip", "reverse", "pad", "broadcast", "fifo", "window",
        "layout", "upsampl", "resize", "shuffle", "unpack", "pack", "dilate", "crop", "roll",
    ),
    "logic": (
        "where", "clip", "sign", "logical", "equal", "less", "greater", "isnan", "isinf", "isfinite", "bitwise",
        "mask", "shrink", "one_hot", "isclose", "bucket", "sort", "topk", "rank", "unique", "select",
    ),
    "compute": ("matmul", "dense", "conv", "pool", "gemm", "gemv", "outer", "correlation", "einsum", "winograd", "lstm"),
}


def category_of(rec: Record, kind: str) -> str:
    """`graph` or `block` for those files; for operators the catalog's category of its name, else
    the category whose operator words the name contains (compute and reduction words first, so
    `max_pool2d` is compute and `reduce_max` reduction)."""
    if kind in ("graph", "block"):
        return kind
    name = rec.op_name.lower()
    if name in _CATALOG_CATEGORY:
        return _CATALOG_CATEGORY[name]
    words = re.split(r"[^a-z0-9]+|(?<=[a-z])(?=\d)", name)
    for category in ("compute", "reduction", "logic", "layout", "elementwise"):
        for word in _OPERATOR_WORDS[category]:
            if any(w == word or (word.endswith("_") and w.startswith(word[:-1])) or (len(word) > 4 and word in w)
                   for w in words):
                return category
    return _category_from_code(rec.c_code)


def _category_from_code(code: str) -> str:
    """An operator name no list knows: its C reference decides. An accumulation into an
    element (`x[i] = x[i] + ...`) is a reduction; no arithmetic on loaded values, a layout
    change; a comparison, logic; else elementwise."""
    if re.search(r"(\w+\[[^\]]+\])\s*=\s*\(?\s*\1\s*[-+*]", code) or "_red" in code:
        return "reduction"
    if re.search(r"[<>]=?[^<>=]|==|!=", re.sub(r"for\s*\([^)]*\)", "", code)):
        return "logic"
    stores = re.findall(r"\]\s*=\s*([^;]+);", code)
    if stores and all(re.fullmatch(r"\(?\s*\w+\[[^\]]+\]\s*\)?", s.strip()) for s in stores):
        return "layout"
    return "elementwise"


def file_kind(stem: str) -> str:
    """What a published file holds, from its name: ComputationGraph, ModelBuildingBlock, or operators."""
    lowered = stem.lower()
    if "graph" in lowered:
        return "graph"
    if "block" in lowered:
        return "block"
    return "operator"


# ------------------------------------------------------------------ parameters by first use

def ir_first_use(ir_code: str) -> list[str]:
    """The buffer parameters of the TVMScript `main` in the order its body first accesses them
    (a subscript of the parameter or of a flat view declared over it, `ph_18 = T.Buffer((6400,),
    data=ph.data)`, read in source order: TVM reuses a view's name for another parameter)."""
    try:
        tree = ast.parse(ir_code)
    except SyntaxError:
        return []
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    main = next((f for f in funcs if f.name == "main"), funcs[0] if funcs else None)
    if main is None:
        return []
    params = {a.arg for a in main.args.args}
    events: list[tuple[int, int, str, str, str | None]] = []  # (line, col, kind, name, target)
    for node in ast.walk(main):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _attr_name(node.value.func) == "Buffer":
            target = next((kw.value.value.id for kw in node.value.keywords if kw.arg == "data"
                           and isinstance(kw.value, ast.Attribute) and isinstance(kw.value.value, ast.Name)), None)
            for t in node.targets:
                if isinstance(t, ast.Name):
                    events.append((node.lineno, node.col_offset, "view", t.id, target))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            events.append((node.lineno, node.col_offset, "use", node.value.id, None))
    alias: dict[str, str | None] = {}
    order: list[str] = []
    for _, _, kind, name, target in sorted(events, key=lambda e: (e[0], e[1])):
        if kind == "view":
            alias[name] = target if target in params else None
            continue
        base = alias[name] if name in alias else (name if name in params else None)
        if base and base not in order:
            order.append(base)
    return order


def c_first_use(code: str, params: list[str]) -> list[str]:
    """The C reference's parameters in the order its body first subscripts them."""
    body = code[code.find("{"):] if "{" in code else code
    first = {}
    for p in params:
        m = re.search(rf"(?<![\w.]){re.escape(p)}\s*\[", body)
        if m:
            first[p] = m.start()
    return sorted(first, key=first.get)


def params_by_use(c_code: str, function: str, c_params: list[tuple[str, str]], ir_code: str) -> dict[str, str] | None:
    """Which TVMScript buffer each C parameter is, where the names say otherwise. The C reference
    is TVM's code generation of that very TVMScript, yet the code generator may number a block's
    many `ph` in another order than `main` does (the C's `ph_9` is `main`'s `ph`). Two pairings
    are weighed: by name, and by first use (both bodies access their buffers in one order, up to
    let-bindings the C hoists). A pairing misfits a parameter whose accessed elements (read from
    the C's loops and guards) pass the end of the buffer it is paired with, or whose element type
    differs; the pairing by use replaces the one by name only where it misfits fewer parameters.
    Returns {C name: TVMScript name} for the parameters renamed, or None to keep the names."""
    from tools.cuda.launch_inference import c_access_extents

    try:
        ir = {safe_name(b.name): b for b in ir_main_buffers(ir_code)}
    except PublishedFormatError:
        return None
    names = [n for n, _ in c_params]
    c_order = c_first_use(c_code, names)
    ir_order = [safe_name(n) for n in ir_first_use(ir_code)]
    if (not c_order or len(c_order) != len(ir_order) or len(set(ir_order)) != len(ir_order)
            or set(c_order) - set(ir) or set(ir_order) - set(ir)):
        return None
    by_use = dict(zip(c_order, ir_order))
    if all(c == i for c, i in by_use.items()):
        return None
    extents = c_access_extents(c_code, function, names)
    ctypes = dict(c_params)

    def misfits(pairing: dict[str, str]) -> int:
        bad = 0
        for c, i in pairing.items():
            dtype = _C_DTYPE.get(ctypes[c].replace("const", "").strip())
            too_far = c in extents and extents[c][1] > _size(ir[i].shape)
            bad += bool(too_far or (dtype and dtype != ir[i].dtype))
        return bad

    by_name = {c: c for c in c_order}
    if misfits(by_use) >= misfits(by_name):
        return None
    return {c: i for c, i in by_use.items() if c != i}


_C_DTYPE = {"float": "float32", "double": "float64", "int32_t": "int32", "int": "int32", "int64_t": "int64",
            "int8_t": "int8", "uint8_t": "uint8", "int16_t": "int16", "bool": "bool", "half": "float16"}


def _size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def rename_params(code: str, function: str, renames: dict[str, str]) -> str:
    """The C code with the parameters of `function` renamed at once (a permutation of names)."""
    if not renames:
        return code
    pattern = re.compile(r"(?<![\w.])(" + "|".join(sorted(map(re.escape, renames), key=len, reverse=True)) + r")(?!\w)")
    return pattern.sub(lambda m: renames[m[1]], code)
