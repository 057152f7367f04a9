"""The operator catalog: TOPI/TE operators in five categories, with random shapes.

Every entry builds a `Workload` from a seeded `random.Random` and a `Bounds`; shapes are
kept modest so that the naive CPU reference runs in milliseconds.

Not in the catalog: TOPI's argsort/topk/sort. On CPU they are extern calls into the
TVM runtime (no TIR, so no C from the C target); `rank` and `topk_mask` below express
the same selection logic in plain TE instead.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable

from .tvmgen import Workload

CATEGORIES = ("elementwise", "reduction", "layout", "logic", "compute")


@dataclass(frozen=True)
class Bounds:
    """Shape limits for random operator instances."""

    min_dim: int = 4
    max_dim: int = 256
    max_elems: int = 1 << 18  # per tensor
    max_batch: int = 4
    max_channels: int = 32
    max_spatial: int = 32


@dataclass(frozen=True)
class OpSpec:
    name: str
    category: str
    build: Callable[["Shapes"], tuple[list, list, dict, dict]]  # -> inputs, outputs, op_args, input_ranges


class Shapes:
    """Random dimensions within bounds."""

    def __init__(self, rng: random.Random, bounds: Bounds):
        self.rng, self.b = rng, bounds

    def dim(self, lo: int | None = None, hi: int | None = None) -> int:
        lo = lo or self.b.min_dim
        hi = max(lo, hi or self.b.max_dim)
        return self.rng.randint(lo, hi)

    def shape(self, rank: int | None = None) -> list[int]:
        rank = rank or self.rng.randint(1, 3)
        dims = [self.dim() for _ in range(rank)]
        while math.prod(dims) > self.b.max_elems:
            i = dims.index(max(dims))
            dims[i] = max(1, dims[i] // 2)
        return dims

    def choice(self, options):
        return self.rng.choice(options)

    def image(self) -> tuple[int, int, int, int]:
        n = self.dim(1, self.b.max_batch)
        c = self.dim(2, self.b.max_channels)
        h = self.dim(6, self.b.max_spatial)
        w = self.dim(6, self.b.max_spatial)
        while n * c * h * w > self.b.max_elems:
            h, w = max(6, h // 2), max(6, w // 2)
            if h == 6 and w == 6:
                c = max(2, c // 2)
        return n, c, h, w


def _ph(shape, name: str, dtype: str = "float32"):
    from tvm import te

    return te.placeholder([int(s) for s in shape], name=name, dtype=dtype)


POSITIVE = (0.1, 2.0)


# ------------------------------------------------------------------ elementwise


def _unary(fn_name: str, positive: bool = False):
    def build(s: Shapes):
        x = _ph(s.shape(), "x")
        return [x], [_unary_fn(fn_name)(x)], {"shape": list(map(int, x.shape))}, ({"x": POSITIVE} if positive else {})

    return build


def _unary_fn(name: str):
    from tvm import te, topi

    def gelu(x):
        return te.compute(x.shape, lambda *i: 0.5 * x(*i) * (1.0 + te.erf(x(*i) * (1.0 / math.sqrt(2.0)))), name="gelu")

    def silu(x):
        return te.compute(x.shape, lambda *i: x(*i) * te.sigmoid(x(*i)), name="silu")

    def softplus(x):
        return te.compute(x.shape, lambda *i: te.log(1.0 + te.exp(x(*i))), name="softplus")

    def hardswish(x):
        return te.compute(x.shape, lambda *i: x(*i) * te.min(te.max(x(*i) + 3.0, 0.0), 6.0) / 6.0, name="hardswish")

    def hardsigmoid(x):
        return te.compute(x.shape, lambda *i: te.min(te.max(x(*i) / 6.0 + 0.5, 0.0), 1.0), name="hardsigmoid")

    def elu(x):
        return te.compute(x.shape, lambda *i: te.if_then_else(x(*i) > 0.0, x(*i), te.exp(x(*i)) - 1.0), name="elu")

    def mish(x):
        return te.compute(x.shape, lambda *i: x(*i) * te.tanh(te.log(1.0 + te.exp(x(*i)))), name="mish")

    def square(x):
        return te.compute(x.shape, lambda *i: x(*i) * x(*i), name="square")

    def reciprocal(x):
        return te.compute(x.shape, lambda *i: 1.0 / x(*i), name="reciprocal")

    table = {
        "relu": topi.nn.relu, "sigmoid": topi.sigmoid, "tanh": topi.tanh, "exp": topi.exp, "log": topi.log,
        "sqrt": topi.sqrt, "rsqrt": topi.rsqrt, "abs": topi.abs, "negative": topi.negative, "erf": topi.erf,
        "sin": topi.sin, "cos": topi.cos, "floor": topi.floor, "ceil": topi.ceil, "round": topi.round,
        "leaky_relu": lambda x: topi.nn.leaky_relu(x, 0.1), "gelu": gelu, "silu": silu, "softplus": softplus,
        "hardswish": hardswish, "hardsigmoid": hardsigmoid, "elu": elu, "mish": mish, "square": square,
        "reciprocal": reciprocal, "log2": topi.log2, "atan": topi.atan, "trunc": topi.trunc,
    }
    return table[name]


def _binary(fn_name: str, positive_rhs: bool = False, broadcast: bool = False):
    def build(s: Shapes):
        from tvm import topi

        shape = s.shape(s.choice([1, 2, 3]) if not broadcast else s.choice([2, 3]))
        rhs_shape = [shape[-1]] if broadcast else shape
        a, b = _ph(shape, "a"), _ph(rhs_shape, "b")
        fn = {"add": topi.add, "subtract": topi.subtract, "multiply": topi.multiply, "divide": topi.divide,
              "maximum": topi.maximum, "minimum": topi.minimum, "power": topi.power}[fn_name]
        ranges = {"b": POSITIVE} if positive_rhs else {}
        if fn_name == "power":
            ranges = {"a": POSITIVE, "b": (-2.0, 2.0)}
        return [a, b], [fn(a, b)], {"shape": shape, "rhs_shape": rhs_shape}, ranges

    return build


def _scale_shift(s: Shapes):
    from tvm import te

    n, c = s.dim(), s.dim()
    x, g, b = _ph([n, c], "x"), _ph([c], "gamma"), _ph([c], "beta")
    y = te.compute((n, c), lambda i, j: x[i, j] * g[j] + b[j], name="scale_shift")
    return [x, g, b], [y], {"shape": [n, c]}, {}


def _bias_add_nchw(s: Shapes):
    from tvm import te

    n, c, h, w = s.image()
    x, b = _ph([n, c, h, w], "x"), _ph([c], "bias")
    y = te.compute((n, c, h, w), lambda i, j, k, l: x[i, j, k, l] + b[j], name="bias_add")
    return [x, b], [y], {"shape": [n, c, h, w]}, {}


def _axpby(s: Shapes):
    from tvm import te

    shape = s.shape()
    x, y = _ph(shape, "x"), _ph(shape, "y")
    out = te.compute(shape, lambda *i: 2.5 * x(*i) - 0.75 * y(*i), name="axpby")
    return [x, y], [out], {"shape": shape, "alpha": 2.5, "beta": -0.75}, {}


def _fma3(s: Shapes):
    from tvm import te

    shape = s.shape()
    a, b, c = _ph(shape, "a"), _ph(shape, "b"), _ph(shape, "c")
    return [a, b, c], [te.compute(shape, lambda *i: a(*i) * b(*i) + c(*i), name="fma")], {"shape": shape}, {}


# ------------------------------------------------------------------ reduction


def _reduce(fn_name: str, keepdims: bool = False):
    def build(s: Shapes):
        from tvm import topi

        shape = s.shape(s.choice([2, 3]))
        axis = s.rng.randrange(len(shape))
        x = _ph(shape, "x")
        fn = {"sum": topi.sum, "max": topi.max, "min": topi.min, "prod": topi.prod}[fn_name] if fn_name != "mean" else None
        if fn_name == "mean":
            y = topi.divide(topi.sum(x, axis=axis, keepdims=keepdims), float(shape[axis]))
        else:
            y = fn(x, axis=axis, keepdims=keepdims)
        ranges = {"x": (0.9, 1.1)} if fn_name == "prod" else {}
        return [x], [y], {"shape": shape, "axis": axis, "keepdims": keepdims}, ranges

    return build


def _softmax(log: bool):
    def build(s: Shapes):
        from tvm import te, topi

        shape = s.shape(s.choice([2, 3]))
        x = _ph(shape, "x")
        if not log:
            return [x], [topi.nn.softmax(x, axis=-1)], {"shape": shape, "axis": -1}, {}
        m = topi.max(x, axis=-1, keepdims=True)
        lse = te.compute(m.shape, lambda *i: m(*i), name="shift")
        shifted = topi.subtract(x, lse)
        y = topi.subtract(shifted, topi.log(topi.sum(topi.exp(shifted), axis=-1, keepdims=True)))
        return [x], [y], {"shape": shape, "axis": -1}, {}

    return build


def _layer_norm(s: Shapes):
    from tvm import topi

    n, c = s.dim(), s.dim(8)
    x, g, b = _ph([n, c], "x"), _ph([c], "gamma"), _ph([c], "beta")
    return [x, g, b], [topi.nn.layer_norm(x, g, b, axis=[1], epsilon=1e-5)], {"shape": [n, c], "eps": 1e-5}, {}


def _rms_norm(s: Shapes):
    from tvm import topi

    n, c = s.dim(), s.dim(8)
    x, g = _ph([n, c], "x"), _ph([c], "weight")
    return [x, g], [topi.nn.rms_norm(x, g, axis=[1], epsilon=1e-5)], {"shape": [n, c], "eps": 1e-5}, {}


def _group_norm(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    groups = s.choice([g for g in (1, 2, 4) if c % g == 0])
    x, g, b = _ph([n, c, h, w], "x"), _ph([c], "gamma"), _ph([c], "beta")
    y = topi.nn.group_norm(x, g, b, num_groups=groups, channel_axis=1, axes=[2, 3], epsilon=1e-5)
    return [x, g, b], [y], {"shape": [n, c, h, w], "groups": groups}, {}


def _instance_norm(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    x, g, b = _ph([n, c, h, w], "x"), _ph([c], "gamma"), _ph([c], "beta")
    return [x, g, b], [topi.nn.instance_norm(x, g, b, channel_axis=1, axis=[2, 3], epsilon=1e-5)], {"shape": [n, c, h, w]}, {}


def _variance(s: Shapes):
    from tvm import te, topi

    n, c = s.dim(), s.dim(8)
    x = _ph([n, c], "x")
    mean = topi.divide(topi.sum(x, axis=1, keepdims=True), float(c))
    dev = te.compute((n, c), lambda i, j: (x[i, j] - mean[i, 0]) * (x[i, j] - mean[i, 0]), name="sqdev")
    return [x], [topi.divide(topi.sum(dev, axis=1), float(c))], {"shape": [n, c], "axis": 1}, {}


def _l2_normalize(s: Shapes):
    from tvm import te, topi

    n, c = s.dim(), s.dim(8)
    x = _ph([n, c], "x")
    ss = topi.sum(te.compute((n, c), lambda i, j: x[i, j] * x[i, j], name="sq"), axis=1)
    y = te.compute((n, c), lambda i, j: x[i, j] / te.sqrt(te.max(ss[i], 1e-12)), name="l2_normalize")
    return [x], [y], {"shape": [n, c]}, {}


def _logsumexp(s: Shapes):
    from tvm import te, topi

    n, c = s.dim(), s.dim()
    x = _ph([n, c], "x")
    m = topi.max(x, axis=1)
    e = te.compute((n, c), lambda i, j: te.exp(x[i, j] - m[i]), name="shifted_exp")
    se = topi.sum(e, axis=1)
    return [x], [te.compute((n,), lambda i: te.log(se[i]) + m[i], name="logsumexp")], {"shape": [n, c]}, {}


def _cumsum(s: Shapes):
    from tvm import te

    n, c = s.dim(), s.dim()
    x = _ph([n, c], "x")
    k = te.reduce_axis((0, c), name="k")
    y = te.compute((n, c), lambda i, j: te.sum(te.if_then_else(k <= j, x[i, k], 0.0), axis=k), name="cumsum")
    return [x], [y], {"shape": [n, c], "axis": 1}, {}


def _argreduce(fn_name: str):
    def build(s: Shapes):
        from tvm import topi

        n, c = s.dim(), s.dim()
        x = _ph([n, c], "x")
        fn = topi.argmax if fn_name == "argmax" else topi.argmin
        return [x], [topi.cast(fn(x, axis=1), "int32")], {"shape": [n, c], "axis": 1}, {}

    return build


def _norm_l2(s: Shapes):
    from tvm import te

    shape = s.shape(2)
    x = _ph(shape, "x")
    i, j = te.reduce_axis((0, shape[0]), name="i"), te.reduce_axis((0, shape[1]), name="j")
    ss = te.compute((1,), lambda _: te.sum(x[i, j] * x[i, j], axis=[i, j]), name="sumsq")
    return [x], [te.compute((1,), lambda k: te.sqrt(ss[k]), name="norm")], {"shape": shape}, {}


# ------------------------------------------------------------------ layout


def _transpose(s: Shapes):
    from tvm import topi

    shape = s.shape(s.choice([2, 3, 4]) if s.b.max_elems >= 4096 else 2)
    axes = list(range(len(shape)))
    while axes == sorted(axes):
        s.rng.shuffle(axes)
    x = _ph(shape, "x")
    return [x], [topi.transpose(x, axes)], {"shape": shape, "axes": axes}, {}


def _reshape_pad(s: Shapes):
    from tvm import topi

    a, b = s.dim(2, 16), s.dim(2, 16)
    c = s.dim(2, 16)
    x = _ph([a, b * c], "x")
    r = topi.reshape(x, [a, b, c])
    pads = [0, s.dim(1, 3), s.dim(1, 3)]
    return [x], [topi.nn.pad(r, [0, pads[1], 0], [0, 0, pads[2]], pad_value=0.0)], {"shape": [a, b * c], "new_shape": [a, b, c], "pad": pads}, {}


def _pad(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    p = s.dim(1, 3)
    x = _ph([n, c, h, w], "x")
    return [x], [topi.nn.pad(x, [0, 0, p, p], [0, 0, p, p], pad_value=0.0)], {"shape": [n, c, h, w], "pad": p}, {}


def _concat(s: Shapes):
    from tvm import topi

    rows = s.dim()
    k = s.choice([2, 3])
    xs = [_ph([rows, s.dim()], f"x{i}") for i in range(k)]
    return xs, [topi.concatenate(xs, axis=1)], {"shapes": [list(map(int, x.shape)) for x in xs], "axis": 1}, {}


def _split(s: Shapes):
    from tvm import topi

    parts = s.choice([2, 3, 4])
    shape = [s.dim(), parts * s.dim(2, 16)]
    x = _ph(shape, "x")
    outs = topi.split(x, parts, axis=1)
    return [x], list(outs), {"shape": shape, "sections": parts, "axis": 1}, {}


def _flip(s: Shapes):
    from tvm import topi

    shape = s.shape(s.choice([2, 3]))
    axis = s.rng.randrange(len(shape))
    x = _ph(shape, "x")
    return [x], [topi.flip(x, axis=axis)], {"shape": shape, "axis": axis}, {}


def _strided_slice(s: Shapes):
    from tvm import topi

    shape = [s.dim(8), s.dim(8)]
    x = _ph(shape, "x")
    begin = [s.dim(0, 3), s.dim(0, 3)]
    strides = [s.choice([1, 2]), s.choice([1, 2])]
    return [x], [topi.strided_slice(x, begin, shape, strides)], {"shape": shape, "begin": begin, "strides": strides}, {}


def _tile(s: Shapes):
    from tvm import topi

    shape = [s.dim(2, 16), s.dim(2, 16)]
    reps = [s.dim(1, 3), s.dim(1, 3)]
    x = _ph(shape, "x")
    return [x], [topi.tile(x, reps)], {"shape": shape, "reps": reps}, {}


def _repeat(s: Shapes):
    from tvm import topi

    shape = [s.dim(2, 32), s.dim(2, 32)]
    r, axis = s.dim(2, 3), s.choice([0, 1])
    x = _ph(shape, "x")
    return [x], [topi.repeat(x, r, axis)], {"shape": shape, "repeats": r, "axis": axis}, {}


def _broadcast_to(s: Shapes):
    from tvm import topi

    c = s.dim()
    n = s.dim()
    x = _ph([1, c], "x")
    return [x], [topi.broadcast_to(x, [n, c])], {"shape": [1, c], "to": [n, c]}, {}


def _depth_to_space(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    x = _ph([n, 4 * max(1, c // 4), h, w], "x")
    return [x], [topi.nn.depth_to_space(x, 2)], {"shape": list(map(int, x.shape)), "block": 2}, {}


def _space_to_depth(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    x = _ph([n, c, 2 * (h // 2), 2 * (w // 2)], "x")
    return [x], [topi.nn.space_to_depth(x, 2)], {"shape": list(map(int, x.shape)), "block": 2}, {}


def _nchw_to_nhwc(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    x = _ph([n, c, h, w], "x")
    return [x], [topi.layout_transform(x, "NCHW", "NHWC")], {"shape": [n, c, h, w], "src": "NCHW", "dst": "NHWC"}, {}


def _upsample(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    x = _ph([n, c, max(4, h // 2), max(4, w // 2)], "x")
    return [x], [topi.nn.upsampling(x, 2, 2, "NCHW", "nearest_neighbor")], {"shape": list(map(int, x.shape)), "scale": 2}, {}


def _take(s: Shapes):
    from tvm import topi

    vocab, dim, n = s.dim(8), s.dim(), s.dim()
    table, idx = _ph([vocab, dim], "table"), _ph([n], "indices", "int32")
    return [table, idx], [topi.take(table, idx, axis=0, mode="clip")], {"table": [vocab, dim], "n": n}, {"indices": (0, vocab)}


def _expand_squeeze(s: Shapes):
    from tvm import topi

    shape = [s.dim(), s.dim()]
    x = _ph(shape, "x")
    y = topi.squeeze(topi.expand_dims(topi.transpose(x), 1, 1), axis=[1])
    return [x], [y], {"shape": shape}, {}


def _channel_shuffle(s: Shapes):
    from tvm import topi

    n, c = s.dim(2, 16), s.dim(2, 16)
    x = _ph([n, 2 * c], "x")
    y = topi.reshape(topi.transpose(topi.reshape(x, [n, 2, c]), [0, 2, 1]), [n, 2 * c])
    return [x], [y], {"shape": [n, 2 * c], "groups": 2}, {}


# ------------------------------------------------------------------ logic


def _where(s: Shapes):
    from tvm import topi

    shape = s.shape()
    a, b = _ph(shape, "a"), _ph(shape, "b")
    return [a, b], [topi.where(topi.greater(a, b), a, topi.multiply(b, 0.5))], {"shape": shape}, {}


def _compare(fn_name: str):
    def build(s: Shapes):
        from tvm import topi

        shape = s.shape()
        a, b = _ph(shape, "a"), _ph(shape, "b")
        fn = {"greater": topi.greater, "less": topi.less, "greater_equal": topi.greater_equal,
              "less_equal": topi.less_equal, "not_equal": topi.not_equal}[fn_name]
        return [a, b], [topi.cast(fn(a, b), "float32")], {"shape": shape}, {}

    return build


def _clip(s: Shapes):
    from tvm import topi

    shape = s.shape()
    x = _ph(shape, "x")
    return [x], [topi.clip(x, -0.5, 0.5)], {"shape": shape, "min": -0.5, "max": 0.5}, {}


def _relu6(s: Shapes):
    from tvm import topi

    shape = s.shape()
    x = _ph(shape, "x")
    return [x], [topi.clip(x, 0.0, 6.0)], {"shape": shape}, {"x": (-8.0, 8.0)}


def _sign(s: Shapes):
    from tvm import topi

    shape = s.shape()
    x = _ph(shape, "x")
    return [x], [topi.sign(x)], {"shape": shape}, {}


def _logical_and(s: Shapes):
    from tvm import topi

    shape = s.shape()
    a, b = _ph(shape, "a"), _ph(shape, "b")
    m = topi.logical_and(topi.greater(a, 0.0), topi.less(b, 0.25))
    return [a, b], [topi.cast(m, "float32")], {"shape": shape}, {}


def _logical_xor(s: Shapes):
    from tvm import topi

    shape = s.shape()
    a, b = _ph(shape, "a"), _ph(shape, "b")
    return [a, b], [topi.cast(topi.logical_xor(topi.greater(a, 0.0), topi.greater(b, 0.0)), "float32")], {"shape": shape}, {}


def _masked_fill(s: Shapes):
    from tvm import te

    n, c = s.dim(), s.dim()
    x, mask = _ph([n, c], "x"), _ph([n, c], "mask", "int32")
    y = te.compute((n, c), lambda i, j: te.if_then_else(mask[i, j] != 0, -1e4, x[i, j]), name="masked_fill")
    return [x, mask], [y], {"shape": [n, c], "fill": -1e4}, {"mask": (0, 2)}


def _causal_mask(s: Shapes):
    from tvm import te

    b, n = s.dim(1, 4), s.dim()
    x = _ph([b, n, n], "scores")
    y = te.compute((b, n, n), lambda k, i, j: te.if_then_else(j > i, -1e9, x[k, i, j]), name="causal_mask")
    return [x], [y], {"shape": [b, n, n]}, {}


def _hardshrink(s: Shapes):
    from tvm import te

    shape = s.shape()
    x = _ph(shape, "x")
    y = te.compute(shape, lambda *i: te.if_then_else(te.abs(x(*i)) < 0.3, 0.0, x(*i)), name="hardshrink")
    return [x], [y], {"shape": shape, "lambda": 0.3}, {}


def _one_hot(s: Shapes):
    from tvm import te, topi

    n, depth = s.dim(), s.dim(4, 32)
    idx = _ph([n], "indices", "int32")
    on, off = te.const(1.0, "float32"), te.const(0.0, "float32")
    return [idx], [topi.one_hot(idx, on, off, depth, -1, "float32")], {"n": n, "depth": depth}, {"indices": (0, depth)}


def _rank(s: Shapes):
    """argsort's logic as counting: out[i] = how many elements sort before x[i] (ties by index)."""
    from tvm import te

    n, c = s.dim(2, 8), s.dim(4, 48)
    x = _ph([n, c], "x")
    k = te.reduce_axis((0, c), name="k")
    before = lambda i, j: te.any(x[i, k] < x[i, j], te.all(x[i, k] == x[i, j], k < j))  # noqa: E731
    y = te.compute((n, c), lambda i, j: te.sum(te.if_then_else(before(i, j), 1, 0), axis=k), name="rank")
    return [x], [y], {"shape": [n, c], "axis": 1}, {}


def _topk_mask(s: Shapes):
    """topk's logic as a mask: 1 where fewer than K elements of the row are larger."""
    from tvm import te

    n, c = s.dim(2, 8), s.dim(8, 48)
    kk = s.dim(1, 4)
    x = _ph([n, c], "x")
    r = te.reduce_axis((0, c), name="r")
    larger = te.compute((n, c), lambda i, j: te.sum(te.if_then_else(x[i, r] > x[i, j], 1, 0), axis=r), name="larger")
    y = te.compute((n, c), lambda i, j: te.if_then_else(larger[i, j] < kk, 1.0, 0.0), name="topk_mask")
    return [x], [y], {"shape": [n, c], "k": kk}, {}


def _isclose(s: Shapes):
    from tvm import te

    shape = s.shape()
    a, b = _ph(shape, "a"), _ph(shape, "b")
    y = te.compute(shape, lambda *i: te.if_then_else(te.abs(a(*i) - b(*i)) <= 0.1 + 0.05 * te.abs(b(*i)), 1.0, 0.0), name="isclose")
    return [a, b], [y], {"shape": shape, "atol": 0.1, "rtol": 0.05}, {}


def _searchsorted_count(s: Shapes):
    from tvm import te

    m, n = s.dim(8, 64), s.dim()
    edges, v = _ph([m], "edges"), _ph([n], "values")
    k = te.reduce_axis((0, m), name="k")
    y = te.compute((n,), lambda i: te.sum(te.if_then_else(edges[k] <= v[i], 1, 0), axis=k), name="bucket")
    return [edges, v], [y], {"edges": m, "n": n}, {}


# ------------------------------------------------------------------ compute


def _matmul(s: Shapes):
    from tvm import topi

    m, k, n = s.dim(8), s.dim(8), s.dim(8)
    a, b = _ph([m, k], "a"), _ph([k, n], "b")
    return [a, b], [topi.matmul(a, b)], {"M": m, "K": k, "N": n}, {}


def _dense(bias: bool):
    def build(s: Shapes):
        from tvm import topi

        m, k, n = s.dim(4), s.dim(8), s.dim(8)
        x, w = _ph([m, k], "x"), _ph([n, k], "weight")
        ins = [x, w]
        y = topi.nn.dense(x, w)
        if bias:
            b = _ph([n], "bias")
            ins.append(b)
            y = topi.add(y, b)
        return ins, [y], {"M": m, "K": k, "N": n, "bias": bias}, {}

    return build


def _batch_matmul(s: Shapes):
    from tvm import topi

    bsz, m, k, n = s.dim(1, 4), s.dim(4, 32), s.dim(4, 32), s.dim(4, 32)
    a, b = _ph([bsz, m, k], "a"), _ph([bsz, n, k], "b")
    return [a, b], [topi.nn.batch_matmul(a, b)], {"batch": bsz, "M": m, "K": k, "N": n, "transpose_b": True}, {}


def _conv2d(layout: str):
    def build(s: Shapes):
        from tvm import topi

        n, c, h, w = s.image()
        f, k = s.dim(2, 16), s.choice([1, 3])
        stride, pad = s.choice([1, 2]), k // 2
        if layout == "NCHW":
            x, wt = _ph([n, c, h, w], "x"), _ph([f, c, k, k], "weight")
            y = topi.nn.conv2d_nchw(x, wt, stride, pad, 1)
        else:
            x, wt = _ph([n, h, w, c], "x"), _ph([k, k, c, f], "weight")
            y = topi.nn.conv2d_nhwc(x, wt, stride, pad, 1)
        return [x, wt], [y], {"layout": layout, "shape": list(map(int, x.shape)), "filters": f, "kernel": k,
                              "stride": stride, "padding": pad}, {}

    return build


def _depthwise(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    k = s.choice([3, 5])
    x, wt = _ph([n, c, h, w], "x"), _ph([c, 1, k, k], "weight")
    y = topi.nn.depthwise_conv2d_nchw(x, wt, 1, k // 2, 1)
    return [x, wt], [y], {"shape": [n, c, h, w], "kernel": k, "padding": k // 2}, {}


def _group_conv(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    groups = 2
    c = max(2, c - c % 2)
    f = 2 * s.dim(1, 8)
    x, wt = _ph([n, c, h, w], "x"), _ph([f, c // groups, 3, 3], "weight")
    return [x, wt], [topi.nn.group_conv2d_nchw(x, wt, 1, 1, 1, groups)], {"shape": [n, c, h, w], "filters": f, "groups": groups}, {}


def _conv1d(s: Shapes):
    from tvm import topi

    n, c, length = s.dim(1, 4), s.dim(2, 16), s.dim(16, 64)
    f, k = s.dim(2, 16), s.choice([3, 5])
    x, wt = _ph([n, c, length], "x"), _ph([f, c, k], "weight")
    return [x, wt], [topi.nn.conv1d(x, wt, 1, k // 2, 1)], {"shape": [n, c, length], "filters": f, "kernel": k}, {}


def _pool(kind: str):
    def build(s: Shapes):
        from tvm import topi

        n, c, h, w = s.image()
        k = s.choice([2, 3])
        x = _ph([n, c, h, w], "x")
        y = topi.nn.pool2d(x, [k, k], [k, k], [1, 1], [0, 0, 0, 0], kind, layout="NCHW")
        return [x], [y], {"shape": [n, c, h, w], "kernel": k, "stride": k, "type": kind}, {}

    return build


def _global_pool(kind: str):
    def build(s: Shapes):
        from tvm import topi

        n, c, h, w = s.image()
        x = _ph([n, c, h, w], "x")
        return [x], [topi.nn.global_pool(x, kind, "NCHW")], {"shape": [n, c, h, w], "type": kind}, {}

    return build


def _conv2d_transpose(s: Shapes):
    from tvm import topi

    n, c, h, w = s.image()
    h, w = max(4, h // 2), max(4, w // 2)
    f = s.dim(2, 8)
    x, wt = _ph([n, c, h, w], "x"), _ph([c, f, 2, 2], "weight")
    y = topi.nn.conv2d_transpose_nchw(x, wt, [2, 2], [0, 0, 0, 0], "float32", [0, 0])
    return [x, wt], [y], {"shape": [n, c, h, w], "filters": f, "kernel": 2, "stride": 2}, {}


def _matvec(s: Shapes):
    from tvm import te

    m, k = s.dim(8, 256), s.dim(8, 128)
    a, v = _ph([m, k], "a"), _ph([k], "v")
    r = te.reduce_axis((0, k), name="r")
    return [a, v], [te.compute((m,), lambda i: te.sum(a[i, r] * v[r], axis=r), name="gemv")], {"M": m, "K": k}, {}


def _outer(s: Shapes):
    from tvm import te

    m, n = s.dim(), s.dim()
    a, b = _ph([m], "a"), _ph([n], "b")
    return [a, b], [te.compute((m, n), lambda i, j: a[i] * b[j], name="outer")], {"M": m, "N": n}, {}


# ------------------------------------------------------------------ the catalog

CATALOG: list[OpSpec] = [
    *[OpSpec(n, "elementwise", _unary(n, positive=n in ("log", "sqrt", "rsqrt", "reciprocal", "log2")))
      for n in ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "negative", "erf", "sin", "cos",
                "floor", "ceil", "round", "leaky_relu", "gelu", "silu", "softplus", "hardswish", "hardsigmoid",
                "elu", "mish", "square", "reciprocal", "log2", "atan", "trunc")],
    OpSpec("add", "elementwise", _binary("add")),
    OpSpec("subtract", "elementwise", _binary("subtract")),
    OpSpec("multiply", "elementwise", _binary("multiply")),
    OpSpec("divide", "elementwise", _binary("divide", positive_rhs=True)),
    OpSpec("maximum", "elementwise", _binary("maximum")),
    OpSpec("minimum", "elementwise", _binary("minimum")),
    OpSpec("power", "elementwise", _binary("power")),
    OpSpec("add_broadcast", "elementwise", _binary("add", broadcast=True)),
    OpSpec("multiply_broadcast", "elementwise", _binary("multiply", broadcast=True)),
    OpSpec("scale_shift", "elementwise", _scale_shift),
    OpSpec("bias_add", "elementwise", _bias_add_nchw),
    OpSpec("axpby", "elementwise", _axpby),
    OpSpec("fma", "elementwise", _fma3),
    OpSpec("sum", "reduction", _reduce("sum")),
    OpSpec("max", "reduction", _reduce("max")),
    OpSpec("min", "reduction", _reduce("min")),
    OpSpec("mean", "reduction", _reduce("mean")),
    OpSpec("prod", "reduction", _reduce("prod")),
    OpSpec("sum_keepdims", "reduction", _reduce("sum", keepdims=True)),
    OpSpec("softmax", "reduction", _softmax(False)),
    OpSpec("log_softmax", "reduction", _softmax(True)),
    OpSpec("layer_norm", "reduction", _layer_norm),
    OpSpec("rms_norm", "reduction", _rms_norm),
    OpSpec("group_norm", "reduction", _group_norm),
    OpSpec("instance_norm", "reduction", _instance_norm),
    OpSpec("variance", "reduction", _variance),
    OpSpec("l2_normalize", "reduction", _l2_normalize),
    OpSpec("logsumexp", "reduction", _logsumexp),
    OpSpec("cumsum", "reduction", _cumsum),
    OpSpec("argmax", "reduction", _argreduce("argmax")),
    OpSpec("argmin", "reduction", _argreduce("argmin")),
    OpSpec("frobenius_norm", "reduction", _norm_l2),
    OpSpec("transpose", "layout", _transpose),
    OpSpec("reshape_pad", "layout", _reshape_pad),
    OpSpec("pad", "layout", _pad),
    OpSpec("concat", "layout", _concat),
    OpSpec("split", "layout", _split),
    OpSpec("flip", "layout", _flip),
    OpSpec("strided_slice", "layout", _strided_slice),
    OpSpec("tile", "layout", _tile),
    OpSpec("repeat", "layout", _repeat),
    OpSpec("broadcast_to", "layout", _broadcast_to),
    OpSpec("depth_to_space", "layout", _depth_to_space),
    OpSpec("space_to_depth", "layout", _space_to_depth),
    OpSpec("nchw_to_nhwc", "layout", _nchw_to_nhwc),
    OpSpec("upsample_nearest", "layout", _upsample),
    OpSpec("take", "layout", _take),
    OpSpec("expand_squeeze", "layout", _expand_squeeze),
    OpSpec("channel_shuffle", "layout", _channel_shuffle),
    OpSpec("where", "logic", _where),
    *[OpSpec(n, "logic", _compare(n)) for n in ("greater", "less", "greater_equal", "less_equal", "not_equal")],
    OpSpec("clip", "logic", _clip),
    OpSpec("relu6", "logic", _relu6),
    OpSpec("sign", "logic", _sign),
    OpSpec("logical_and", "logic", _logical_and),
    OpSpec("logical_xor", "logic", _logical_xor),
    OpSpec("masked_fill", "logic", _masked_fill),
    OpSpec("causal_mask", "logic", _causal_mask),
    OpSpec("hardshrink", "logic", _hardshrink),
    OpSpec("one_hot", "logic", _one_hot),
    OpSpec("rank", "logic", _rank),
    OpSpec("topk_mask", "logic", _topk_mask),
    OpSpec("isclose", "logic", _isclose),
    OpSpec("bucketize", "logic", _searchsorted_count),
    OpSpec("matmul", "compute", _matmul),
    OpSpec("dense", "compute", _dense(False)),
    OpSpec("dense_bias", "compute", _dense(True)),
    OpSpec("batch_matmul", "compute", _batch_matmul),
    OpSpec("conv2d_nchw", "compute", _conv2d("NCHW")),
    OpSpec("conv2d_nhwc", "compute", _conv2d("NHWC")),
    OpSpec("depthwise_conv2d", "compute", _depthwise),
    OpSpec("group_conv2d", "compute", _group_conv),
    OpSpec("conv1d", "compute", _conv1d),
    OpSpec("max_pool2d", "compute", _pool("max")),
    OpSpec("avg_pool2d", "compute", _pool("avg")),
    OpSpec("global_avg_pool", "compute", _global_pool("avg")),
    OpSpec("global_max_pool", "compute", _global_pool("max")),
    OpSpec("conv2d_transpose", "compute", _conv2d_transpose),
    OpSpec("gemv", "compute", _matvec),
    OpSpec("outer", "compute", _outer),
]

BY_NAME = {spec.name: spec for spec in CATALOG}


def select(names: list[str]) -> list[OpSpec]:
    """Operators by name or category; all of them when `names` is empty."""
    if not names:
        return list(CATALOG)
    out: list[OpSpec] = []
    for name in names:
        if name in CATEGORIES:
            out += [s for s in CATALOG if s.category == name]
        elif name in BY_NAME:
            out.append(BY_NAME[name])
        else:
            raise KeyError(f"unknown operator or category {name!r} (categories: {', '.join(CATEGORIES)})")
    return list(dict.fromkeys(out))


def instantiate(spec: OpSpec, rng: random.Random, bounds: Bounds, index: int) -> Workload:
    inputs, outputs, op_args, ranges = spec.build(Shapes(rng, bounds))
    return Workload(f"{spec.name}_{index}", spec.name, spec.category, op_args, inputs, outputs, ranges)
