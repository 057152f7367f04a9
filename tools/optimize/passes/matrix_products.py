"""Matrix products recognized and computed by a register-tiled loop nest (issue 8: "recognized
matrix products as tiled loop nests").

A launch (any of a task's launches) is replaced by a product when three things hold:
- the kernel computes a polynomial of its float inputs (`is_polynomial`): float values meet only
  +, - and * (or fma), never a comparison, a division, a conversion to an integer or bool, or a
  call other than vector constructors, loads and warp shuffles; with every buffer of the launch
  float (of one type), control flow and subscripts then depend on indices alone;
- it stores through one buffer only (`stored_params`, from its AST; no local pointer that could
  alias), and reads that buffer back only where it is an output or scratch, holding nothing
  before the launch (TVM's dense layers in graphs accumulate in place);
- the shapes of the buffers fit a product (`proposals`): out[b,m,n] = sum_k L[b,m,k] * R[b,k,n],
  either operand possibly transposed, plus a bias over n or an addend shaped like out; flat
  buffers whose sizes factor as M*K, K*N and M*N are read as row-major matrices.
Each product the shapes allow is one candidate (for several launches: each combination), and
the search checks them in turn against the reference on fresh random inputs. Two different
polynomials of low degree agree at random points with probability zero (Schwartz-Zippel), so the
candidate that passes computes the kernel's product, up to the order of its sums. That takes
inputs drawn at random from many values: operands filled with constants, a range or a few
integers are refused.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from itertools import permutations

import clang.cindex as ci

from tools.cuda import frontend as fe
from tools.spec import Task, c_type
from tools.verify.inputs import distinct_values

from ..analysis.launch_replacement import MIN_DISTINCT, alternatives, launch_calls, stored_params
from ..analysis.machine import vector_bytes
from ..base import Context, Transform

K = ci.CursorKind
_FLOAT_KINDS = {ci.TypeKind.FLOAT, ci.TypeKind.DOUBLE, ci.TypeKind.HALF, ci.TypeKind.LONGDOUBLE}
_FLOAT_VECTOR = re.compile(r"(?:const\s+)?(?:float|double|half|__half)[1-4]?")
# Calls a float value may pass through: vector constructors, make_* and copies, loads, shuffles (data movement)
# and fused multiply-adds (a product and a sum).
_PURE_CALLS = re.compile(r"(?:make_)?(?:float|double)[1-4]|operator=|__ldg|__shfl(?:_up|_down|_xor)?(?:_sync)?|fmaf?|__fmaf_r[nzdu]"
                         r"|__f(?:mul|add|sub)_r[nzdu]|__d(?:mul|add|sub)_r[nzdu]")
_CASTS = (K.UNEXPOSED_EXPR, K.CSTYLE_CAST_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.PAREN_EXPR)
# A float directly under a statement is a statement of its own: a condition arrives cast to bool.
_VALUE_PARENTS = (K.VAR_DECL, K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR, K.CONDITIONAL_OPERATOR, K.INIT_LIST_EXPR,
                  K.COMPOUND_STMT, K.DECL_STMT, K.FOR_STMT, K.IF_STMT, K.WHILE_STMT, K.DO_STMT)


def _is_float(t: ci.Type) -> bool:
    canonical = t.get_canonical()
    return canonical.kind in _FLOAT_KINDS or (canonical.kind == ci.TypeKind.RECORD
                                              and bool(_FLOAT_VECTOR.fullmatch(canonical.spelling)))


def is_polynomial(kernel: ci.Cursor) -> bool:
    """Whether every float value in the kernel only meets +, -, *, fma, stores and data movement
    (what makes its outputs polynomials of its float inputs, with index-only control flow), and
    the kernel both multiplies and adds floats (a sum of products, not an element-wise map)."""
    body = fe.body_of(kernel)
    if body is None:
        return False
    seen = set()
    for node, parent in fe.walk_with_parents(body):
        if node.kind.is_expression() and _is_float(node.type):
            if parent is not None and not _float_use_ok(node, parent):
                return False
            seen |= _arithmetic(node)
    return seen == {"+", "*"}


def _arithmetic(node: ci.Cursor) -> set[str]:
    """The float arithmetic a node does: '*' for a product, '+' for a sum, both for an fma."""
    if node.kind in (K.BINARY_OPERATOR, K.COMPOUND_ASSIGNMENT_OPERATOR):
        op = fe.operator_of(node).rstrip("=")
        return {"+" if op == "-" else op} & {"+", "*"}
    if re.fullmatch(r"fmaf?|__fmaf_r[nzdu]", fe.called_function(node) or ""):
        return {"+", "*"}
    return set()


def _float_use_ok(node: ci.Cursor, parent: ci.Cursor) -> bool:
    called = fe.called_function(node)
    if called is not None and not _PURE_CALLS.fullmatch(called):
        return False
    called = fe.called_function(parent)
    if called is not None:
        return bool(_PURE_CALLS.fullmatch(called))
    kind = parent.kind
    if kind == K.BINARY_OPERATOR:
        return fe.operator_of(parent) in ("+", "-", "*", "=") and _is_float(parent.type)
    if kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
        return fe.operator_of(parent) in ("+=", "-=", "*=")
    if kind == K.UNARY_OPERATOR:
        return fe.operator_of(parent) in ("-", "+")
    if kind in _CASTS:  # implicit and explicit conversions: to a float type only
        return _is_float(parent.type)
    return kind in _VALUE_PARENTS


@dataclass(frozen=True)
class Product:
    """out[b, m, n] = sum_k left(b, m, k) * right(b, k, n) (+ bias): buffer names and extents."""

    out: str
    left: str
    right: str
    batch: int
    m: int
    n: int
    k: int
    left_transposed: bool = False  # left stored as [batch, k, m]
    right_transposed: bool = False  # right stored as [batch, n, k]
    bias: str | None = None
    bias_full: bool = False  # bias shaped like out (else one value per n)

    def describe(self) -> str:
        left = f"{self.left}{'^T' if self.left_transposed else ''}"
        right = f"{self.right}{'^T' if self.right_transposed else ''}"
        batch = f"{self.batch} x " if self.batch > 1 else ""
        plus = f" + {self.bias}" if self.bias else ""
        return f"{self.out} = {left} {right}{plus} ({batch}{self.m}x{self.k} by {self.k}x{self.n})"


def proposals(out, ins: list) -> list[Product]:
    """The products of buffers `ins` (two operands, perhaps a bias) into buffer `out` that their
    shapes allow, the likeliest first: operands in argument order before swapped, untransposed
    before transposed."""
    if len(ins) not in (2, 3):
        return []
    found: list[Product] = []
    for left, right in permutations(ins, 2):
        rest = [b for b in ins if b is not left and b is not right]
        bias = rest[0] if rest else None
        for left_t in (False, True):
            for right_t in (False, True):
                p = _fit(out, left, right, left_t, right_t)
                if p is not None and (bias is None or (p := _with_bias(p, bias, out)) is not None):
                    found.append(p)
    return list(dict.fromkeys(found))[:8]


def _fit(out, left, right, left_t: bool, right_t: bool) -> Product | None:
    """The product of these operands that fits their shapes, if any."""
    if len(out.shape) >= 2 and len(left.shape) == len(right.shape) == len(out.shape):
        *batch, m, n = out.shape
        if left.shape[:-2] != batch or right.shape[:-2] != batch:
            return None
        lm, lk = reversed(left.shape[-2:]) if left_t else left.shape[-2:]
        rk, rn = reversed(right.shape[-2:]) if right_t else right.shape[-2:]
        if (lm, rn, lk) != (m, n, rk):
            return None
        return Product(out.name, left.name, right.name, math.prod(batch), m, n, lk, left_t, right_t)
    if len(out.shape) == len(left.shape) == len(right.shape) == 1:  # flat: sizes M*K, K*N, M*N
        k = math.isqrt(left.size * right.size // out.size) if out.size else 0
        if k == 0 or left.size % k or right.size % k or (left.size // k) * (right.size // k) != out.size:
            return None
        return Product(out.name, left.name, right.name, 1, left.size // k, right.size // k, k, left_t, right_t)
    return None


def _with_bias(p: Product, bias, out) -> Product | None:
    if bias.size == p.n and bias.shape[-1] == p.n:
        return replace(p, bias=bias.name)
    if bias.shape == out.shape:
        return replace(p, bias=bias.name, bias_full=True)
    return None


# ---------------------------------------------------------------------------------------
# the loop nest


def product_function(name: str, p: Product, ctype: str) -> str:
    """A C++ function computing p: the right operand packed into rows of whole tiles (zero padded,
    so a tile's row is one aligned contiguous load), then MR x NR output tiles accumulated in
    registers over k, in parallel over (batch, row tiles) where the work pays for the threads.
    A tile is two vectors wide (one where N fits in one) and 8 rows high where the CPU has 32
    vector registers (AVX-512), 4 where it has 16."""
    width = vector_bytes()
    lanes = width // (4 if ctype == "float" else 8)
    nr = 2 * lanes if p.n > lanes else lanes
    mr = 8 if width == 64 else 4
    left = (f"L[((std::size_t)b * K + k) * M + row[r]]" if p.left_transposed else f"L[((std::size_t)b * M + row[r]) * K + k]")
    right = (f"R[((std::size_t)b * N + j) * K + k]" if p.right_transposed else f"R[((std::size_t)b * K + k) * N + j]")
    bias = ""
    if p.bias:
        bias = f" + bias[(std::size_t)(b * M + i) * N + j]" if p.bias_full else " + bias[j]"
    # Below about a million multiply-adds (tens of microseconds) a second thread costs more than
    # it brings: no parallel region at all, not even one that an if clause keeps serial.
    omp = p.batch * p.m * p.n * p.k >= 1 << 20
    region = "#pragma omp parallel" if omp else ""
    split = "#pragma omp for collapse(2) schedule(static)" if omp else ""
    return f"""
// tools.optimize: matrix product {p.describe()}
static void {name}(const {ctype}* __restrict__ L, const {ctype}* __restrict__ R, const {ctype}* __restrict__ bias,
                   {ctype}* __restrict__ out) {{
    typedef {ctype} T;
    constexpr int NB = {p.batch}, M = {p.m}, N = {p.n}, K = {p.k}, MR = {mr}, NR = {nr};
    constexpr int MT = (M + MR - 1) / MR, NT = (N + NR - 1) / NR, NP = NT * NR;
    (void)bias;
    T* packed = static_cast<T*>(std::aligned_alloc(64, ((sizeof(T) * NB * K * NP + 63) / 64) * 64));
    if (packed == nullptr) std::abort();
    {region}
    {{
        {split}
        for (int b = 0; b < NB; ++b)
            for (int k = 0; k < K; ++k) {{
                T* row = packed + ((std::size_t)b * K + k) * NP;
                for (int j = 0; j < NP; ++j) row[j] = j < N ? {right} : T(0);
            }}
        {split}
        for (int b = 0; b < NB; ++b)
            for (int it = 0; it < MT; ++it) {{
                int row[MR];  // rows past M repeat the last one; their results are not stored
                for (int r = 0; r < MR; ++r) row[r] = it * MR + r < M ? it * MR + r : M - 1;
                for (int jt = 0; jt < NT; ++jt) {{
                    alignas(64) T acc[MR][NR] = {{}};
                    const T* tile = packed + (std::size_t)b * K * NP + jt * NR;
                    for (int k = 0; k < K; ++k) {{
                        const T* rk = tile + (std::size_t)k * NP;
                        for (int r = 0; r < MR; ++r) {{
                            const T a = {left};
                            #pragma omp simd
                            for (int c = 0; c < NR; ++c) acc[r][c] += a * rk[c];
                        }}
                    }}
                    for (int r = 0; r < MR && it * MR + r < M; ++r) {{
                        const int i = it * MR + r;
                        for (int c = 0; c < NR && jt * NR + c < N; ++c) {{
                            const int j = jt * NR + c;
                            out[((std::size_t)b * M + i) * N + j] = acc[r][c]{bias};
                        }}
                    }}
                }}
            }}
    }}
    std::free(packed);
}}
"""


# ---------------------------------------------------------------------------------------
# the transformation


def _launch_products(task: Task, launch, kernel: ci.Cursor) -> list[Product]:
    """The products a launch may compute: its kernel a polynomial that stores through one buffer
    only (reading it too only where the buffer is an output or scratch, which hold nothing before
    the launch), the buffers it reads the operands, no float scalar among its arguments (a product
    that holds for the task's alpha only is no product)."""
    buffers = {b.name: b for b in task.buffers}
    float_scalars = {s.name for s in task.scalars if not s.dtype.startswith(("int", "uint"))}
    cursors = fe.params_of(kernel)
    params = [p.spelling for p in cursors]
    pointers = {p.spelling for p in cursors if p.type.get_canonical().kind == ci.TypeKind.POINTER}
    if len(params) != len(launch.args) or any(
            isinstance(a, float) or (isinstance(a, str) and float_scalars & set(re.findall(r"\w+", a))) for a in launch.args):
        return []
    by_param = {p: a for p, a in zip(params, launch.args) if isinstance(a, str) and a in buffers}
    dtypes = {buffers[a].dtype for a in by_param.values()}
    if len(dtypes) != 1 or dtypes - {"float32", "float64"} or len(set(by_param.values())) != len(by_param):
        return []  # float buffers of one type only: no integer data can steer control flow
    access = stored_params(kernel)
    if access is None or not is_polynomial(kernel):
        return []
    stored, used = access
    if len(stored) != 1 or not (stored | (used & pointers)) <= by_param.keys():
        return []  # one buffer stored, and every pointer it uses one of the task's buffers
    out = buffers[by_param[next(iter(stored))]]
    if stored & used and out.role not in ("output", "scratch"):
        return []  # it reads what it stores: fine only where the buffer holds nothing before the launch
    ins = [buffers[by_param[p]] for p in params if p in used - stored and p in by_param]
    if any(distinct_values(task, b) < MIN_DISTINCT for b in ins):
        return []  # inputs of a few values (ones, arange) could let a wrong product pass the random tests
    return proposals(out, ins)


def _shapes_fit(task: Task, launch) -> bool:
    """Could some buffer of the launch be the product of the others, by shape alone?"""
    buffers = {b.name: b for b in task.buffers}
    used = [buffers[a] for a in dict.fromkeys(a for a in launch.args if isinstance(a, str) and a in buffers)]
    return any(proposals(out, [b for b in used if b is not out]) for out in used)


def matrix_products(ctx: Context, code: str) -> list[str] | None:
    """Every launch whose kernel is a polynomial of its float inputs and whose buffers' shapes fit
    a product, computed by a tiled loop nest instead: one alternative per combination of the
    products the shapes allow (at most 8, the likeliest first); the search keeps the first that
    matches the reference."""
    task = ctx.task
    calls = launch_calls(code, task)
    if calls is None:
        return None
    if not any(_shapes_fit(task, launch) for launch in task.launches):
        return None  # no parse for a task whose shapes hold no product
    return alternatives(code, task, calls, lambda launch, kernel: _launch_products(task, launch, kernel),
                        lambda products: _functions(task, products), "a matrix product")


def _functions(task: Task, products: dict[int, Product]) -> dict[int, tuple[str, str]]:
    """Launch i -> (the function computing products[i], the statement calling it)."""
    dtypes = {b.name: b.dtype for b in task.buffers}
    out = {}
    for i, p in products.items():
        name = f"cudaopt_product_{i}"
        out[i] = (product_function(name, p, c_type(dtypes[p.out])), f"{name}({p.left}, {p.right}, {p.bias or 'nullptr'}, {p.out});")
    return out


MATRIX_PRODUCTS = Transform("matrix_products", "the launch recognized as a matrix product (a polynomial of its inputs "
                            "whose shapes fit one) and computed by a register-tiled loop nest", matrix_products, tested=True)
