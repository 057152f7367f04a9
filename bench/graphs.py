"""Graph-based augmentation: random DAGs of operators lowered and fused as one workload.

A graph grows from one or two inputs by three moves, each checked for shapes:
- random connection: a unary operator (or one with its own new weight) on an existing value;
- branch expansion: two different operators on the same value, giving two branches;
- branch merging: a binary operator (add, multiply, maximum, matmul, concat) over two
  values whose shapes fit.
Values that nothing consumes become the outputs (equal-shaped ones are merged first).
TVM then lowers the whole DAG as one function: its GPU schedule fuses what it can and
emits several kernels, launched in order, for the rest.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .catalog import Bounds
from .tvmgen import Workload

UNARY = ("relu", "sigmoid", "tanh", "gelu", "leaky_relu", "softmax", "layer_norm", "scale", "clip", "center",
         "transpose", "dense", "abs_sqrt", "sum_broadcast")
MERGE = ("add", "multiply", "maximum", "subtract", "matmul", "concat")


@dataclass
class _Graph:
    rng: random.Random
    inputs: list = field(default_factory=list)
    values: list = field(default_factory=list)  # every tensor produced (and the inputs)
    consumed: set = field(default_factory=set)
    nodes: list = field(default_factory=list)  # the DAG, for op_args

    def placeholder(self, shape, prefix: str):
        from tvm import te

        t = te.placeholder([int(s) for s in shape], name=f"{prefix}{len(self.inputs)}")
        self.inputs.append(t)
        return t

    def add(self, op: str, args: list, out) -> None:
        for a in args:
            self.consumed.add(self._id(a))
        self.values.append(out)
        self.nodes.append({"op": op, "in": [self._id(a) for a in args], "out": self._id(out), "shape": _shape(out)})

    def _id(self, t) -> str:
        """A node's label: its position among the values (TVM op names repeat)."""
        for i, v in enumerate(self.values):
            if v.same_as(t):
                return t.name if i < len(self.inputs) and t in self.inputs else f"v{i}"
        raise KeyError(t.name)


def _shape(t) -> list[int]:
    return [int(s) for s in t.shape]


def _unary(g: _Graph, op: str, x):
    """Apply `op` to x; returns (tensor, extra weight inputs) or None where the shape does not fit."""
    from tvm import te, topi

    m, n = _shape(x)
    if op == "relu":
        return topi.nn.relu(x)
    if op == "sigmoid":
        return topi.sigmoid(x)
    if op == "tanh":
        return topi.tanh(x)
    if op == "gelu":
        return te.compute(x.shape, lambda i, j: 0.5 * x[i, j] * (1.0 + te.erf(x[i, j] * 0.7071067811865476)), name="gelu")
    if op == "leaky_relu":
        return topi.nn.leaky_relu(x, 0.1)
    if op == "softmax":
        return topi.nn.softmax(x, axis=1)
    if op == "layer_norm":
        gamma, beta = g.placeholder([n], "gamma"), g.placeholder([n], "beta")
        return topi.nn.layer_norm(x, gamma, beta, axis=[1], epsilon=1e-5)
    if op == "scale":
        return te.compute(x.shape, lambda i, j: x[i, j] * 0.5 + 0.25, name="scale")
    if op == "clip":
        return topi.clip(x, -1.0, 1.0)
    if op == "center":
        mean = topi.sum(x, axis=1, keepdims=True)
        return te.compute(x.shape, lambda i, j: x[i, j] - mean[i, 0] / float(n), name="center")
    if op == "transpose":
        return topi.transpose(x, [1, 0])
    if op == "dense":
        k = g.rng.choice([8, 16, 24, 32, n])
        w = g.placeholder([k, n], "w")
        return topi.divide(topi.nn.dense(x, w), float(n) ** 0.5)
    if op == "abs_sqrt":
        return te.compute(x.shape, lambda i, j: te.sqrt(te.abs(x[i, j]) + 1e-3), name="abs_sqrt")
    if op == "sum_broadcast":
        s = topi.sum(x, axis=0, keepdims=True)
        return te.compute(x.shape, lambda i, j: x[i, j] + s[0, j] / float(m), name="add_colmean")
    raise ValueError(op)


def _merge(g: _Graph, op: str, a, b):
    from tvm import topi

    sa, sb = _shape(a), _shape(b)
    if op in ("add", "multiply", "maximum", "subtract"):
        if sa != sb:
            return None
        return {"add": topi.add, "multiply": topi.multiply, "maximum": topi.maximum, "subtract": topi.subtract}[op](a, b)
    if op == "matmul":
        if sa[1] == sb[0]:
            return topi.divide(topi.matmul(a, b), float(sa[1]) ** 0.5)
        if sa[1] == sb[1]:
            return topi.divide(topi.nn.dense(a, b), float(sa[1]) ** 0.5)
        return None
    if op == "concat":
        return topi.concatenate([a, b], axis=1) if sa[0] == sb[0] else None
    raise ValueError(op)


def _pick(g: _Graph):
    """A value to grow from, preferring those nothing consumes yet."""
    free = [v for v in g.values if g._id(v) not in g.consumed]
    return g.rng.choice(free or g.values)


def random_graph(rng: random.Random, bounds: Bounds, index: int, nodes: tuple[int, int] = (3, 7)) -> Workload:
    g = _Graph(rng)
    m = rng.randint(max(4, bounds.min_dim), min(bounds.max_dim, 128))
    n = rng.randint(max(4, bounds.min_dim), min(bounds.max_dim, 128))
    for _ in range(rng.choice([1, 1, 2])):
        g.values.append(g.placeholder([m, n], "x"))
    target = rng.randint(*nodes)
    while len(g.nodes) < target:
        move = rng.choice(["connect", "expand", "merge"])
        if move == "merge" and _try_merge(g):
            continue
        x = _pick(g)
        ops = rng.sample(UNARY, 2 if move == "expand" else 1)
        for op in ops:
            g.add(op, [x], _unary(g, op, x))
    outputs = _outputs(g)
    names = [nd["op"] for nd in g.nodes]
    return Workload(f"graph_{index}", "graph_" + "_".join(dict.fromkeys(names)), "graph",
                    {"nodes": g.nodes, "inputs": [t.name for t in g.inputs]}, g.inputs, outputs)


def _try_merge(g: _Graph) -> bool:
    free = [v for v in g.values if g._id(v) not in g.consumed]
    pairs = [(a, b) for i, a in enumerate(free) for b in free[i + 1:]]
    g.rng.shuffle(pairs)
    for a, b in pairs:
        for op in g.rng.sample(MERGE, len(MERGE)):
            out = _merge(g, op, a, b)
            if out is not None:
                g.add(op, [a, b], out)
                return True
    return False


def _outputs(g: _Graph) -> list:
    """Sinks, with equal-shaped ones merged by addition so that few outputs remain."""
    from tvm import topi

    sinks = [v for v in g.values if g._id(v) not in g.consumed and v not in g.inputs]
    by_shape: dict[tuple, list] = {}
    for v in sinks:
        by_shape.setdefault(tuple(_shape(v)), []).append(v)
    outs = []
    for group in by_shape.values():
        acc = group[0]
        for v in group[1:]:
            out = topi.add(acc, v)
            g.add("add", [acc, v], out)
            acc = out
        outs.append(acc)
    return outs
