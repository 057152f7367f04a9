"""Model building blocks: small, complete pieces of well-known networks as one workload each.

Shapes are drawn at random within small ranges; weights are inputs (scaled so that
activations stay in a moderate range on uniform [-1, 1] data).
"""

from __future__ import annotations

import random
from typing import Callable

from .tvmgen import Workload


def _ph(shape, name: str):
    from tvm import te

    return te.placeholder([int(s) for s in shape], name=name)


def _shape(t) -> list[int]:
    return [int(s) for s in t.shape]


def _affine(x, scale, shift, name: str):
    """Inference batch norm folded to a per-channel scale and shift (NCHW)."""
    from tvm import te

    return te.compute(x.shape, lambda n, c, h, w: x[n, c, h, w] * scale[c] + shift[c], name=name)


def _scaled(x, factor: float):
    from tvm import topi

    return topi.multiply(x, factor)


def _conv(x, w, stride=1, pad=0, dilation=1):
    from tvm import topi

    fan_in = _shape(w)[1] * _shape(w)[2] * _shape(w)[3]
    return _scaled(topi.nn.conv2d_nchw(x, w, stride, pad, dilation), 1.0 / fan_in ** 0.5)


def inception(rng: random.Random):
    from tvm import topi

    n, c, h = rng.randint(1, 2), rng.choice([4, 8]), rng.choice([8, 12, 16])
    x = _ph([n, c, h, h], "x")
    f1, f3, f5, fp = (rng.choice([4, 8]) for _ in range(4))
    w1, w3r, w3, w5r, w5, wp = (_ph([f1, c, 1, 1], "w1x1"), _ph([f3, c, 1, 1], "w3x3_reduce"), _ph([f3, f3, 3, 3], "w3x3"),
                                _ph([f5, c, 1, 1], "w5x5_reduce"), _ph([f5, f5, 5, 5], "w5x5"), _ph([fp, c, 1, 1], "wpool"))
    b1 = topi.nn.relu(_conv(x, w1))
    b3 = topi.nn.relu(_conv(topi.nn.relu(_conv(x, w3r)), w3, pad=1))
    b5 = topi.nn.relu(_conv(topi.nn.relu(_conv(x, w5r)), w5, pad=2))
    pool = topi.nn.pool2d(x, [3, 3], [1, 1], [1, 1], [1, 1, 1, 1], "max")
    bp = topi.nn.relu(_conv(pool, wp))
    y = topi.concatenate([b1, b3, b5, bp], axis=1)
    return [x, w1, w3r, w3, w5r, w5, wp], [y], {"shape": [n, c, h, h], "filters": [f1, f3, f5, fp]}


def resnet_block(rng: random.Random):
    from tvm import topi

    n, c, h = rng.randint(1, 2), rng.choice([4, 8, 16]), rng.choice([8, 12, 16])
    x = _ph([n, c, h, h], "x")
    w1, w2 = _ph([c, c, 3, 3], "conv1_weight"), _ph([c, c, 3, 3], "conv2_weight")
    s1, t1, s2, t2 = _ph([c], "bn1_scale"), _ph([c], "bn1_shift"), _ph([c], "bn2_scale"), _ph([c], "bn2_shift")
    y = topi.nn.relu(_affine(_conv(x, w1, pad=1), s1, t1, "bn1"))
    y = _affine(_conv(y, w2, pad=1), s2, t2, "bn2")
    return [x, w1, s1, t1, w2, s2, t2], [topi.nn.relu(topi.add(y, x))], {"shape": [n, c, h, h]}


def depthwise_separable(rng: random.Random):
    from tvm import topi

    n, c, h, f = rng.randint(1, 2), rng.choice([4, 8, 16]), rng.choice([8, 12, 16]), rng.choice([8, 16])
    x = _ph([n, c, h, h], "x")
    dw, pw = _ph([c, 1, 3, 3], "depthwise_weight"), _ph([f, c, 1, 1], "pointwise_weight")
    y = topi.nn.relu(_scaled(topi.nn.depthwise_conv2d_nchw(x, dw, 1, 1, 1), 1.0 / 3.0))
    y = topi.nn.relu(_conv(y, pw))
    return [x, dw, pw], [y], {"shape": [n, c, h, h], "filters": f}


def inverted_residual(rng: random.Random):
    from tvm import topi

    n, c, h, e = rng.randint(1, 2), rng.choice([4, 8]), rng.choice([8, 12]), rng.choice([2, 4])
    x = _ph([n, c, h, h], "x")
    we, dw, wp = _ph([c * e, c, 1, 1], "expand_weight"), _ph([c * e, 1, 3, 3], "depthwise_weight"), _ph([c, c * e, 1, 1], "project_weight")
    y = topi.clip(_conv(x, we), 0.0, 6.0)
    y = topi.clip(_scaled(topi.nn.depthwise_conv2d_nchw(y, dw, 1, 1, 1), 1.0 / 3.0), 0.0, 6.0)
    y = topi.add(_conv(y, wp), x)
    return [x, we, dw, wp], [y], {"shape": [n, c, h, h], "expansion": e}


def squeeze_excite(rng: random.Random):
    from tvm import te, topi

    n, c, h, r = rng.randint(1, 2), rng.choice([8, 16, 32]), rng.choice([8, 12, 16]), rng.choice([2, 4])
    x = _ph([n, c, h, h], "x")
    w1, w2 = _ph([c // r, c], "fc1_weight"), _ph([c, c // r], "fc2_weight")
    pooled = topi.reshape(topi.nn.global_pool(x, "avg", "NCHW"), [n, c])
    s = topi.nn.relu(_scaled(topi.nn.dense(pooled, w1), 1.0 / c ** 0.5))
    s = topi.sigmoid(_scaled(topi.nn.dense(s, w2), 1.0 / (c // r) ** 0.5))
    y = te.compute(x.shape, lambda b, ch, i, j: x[b, ch, i, j] * s[b, ch], name="excite")
    return [x, w1, w2], [y], {"shape": [n, c, h, h], "reduction": r}


def gru_cell(rng: random.Random):
    from tvm import te, topi

    b, i, hd = rng.randint(1, 8), rng.choice([16, 32]), rng.choice([16, 32])
    x, h = _ph([b, i], "x"), _ph([b, hd], "h")
    wih, whh, bih, bhh = _ph([3 * hd, i], "w_ih"), _ph([3 * hd, hd], "w_hh"), _ph([3 * hd], "b_ih"), _ph([3 * hd], "b_hh")
    gi = topi.add(_scaled(topi.nn.dense(x, wih), 1.0 / i ** 0.5), bih)
    gh = topi.add(_scaled(topi.nn.dense(h, whh), 1.0 / hd ** 0.5), bhh)
    r = te.compute((b, hd), lambda n, k: te.sigmoid(gi[n, k] + gh[n, k]), name="reset")
    z = te.compute((b, hd), lambda n, k: te.sigmoid(gi[n, hd + k] + gh[n, hd + k]), name="update")
    cand = te.compute((b, hd), lambda n, k: te.tanh(gi[n, 2 * hd + k] + r[n, k] * gh[n, 2 * hd + k]), name="candidate")
    out = te.compute((b, hd), lambda n, k: (1.0 - z[n, k]) * cand[n, k] + z[n, k] * h[n, k], name="h_next")
    return [x, h, wih, whh, bih, bhh], [out], {"batch": b, "input": i, "hidden": hd}


def lstm_cell(rng: random.Random):
    from tvm import te, topi

    b, i, hd = rng.randint(1, 8), rng.choice([16, 32]), rng.choice([16, 32])
    x, h, c = _ph([b, i], "x"), _ph([b, hd], "h"), _ph([b, hd], "c")
    wih, whh, bias = _ph([4 * hd, i], "w_ih"), _ph([4 * hd, hd], "w_hh"), _ph([4 * hd], "bias")
    gates = topi.add(topi.add(_scaled(topi.nn.dense(x, wih), 1.0 / i ** 0.5), _scaled(topi.nn.dense(h, whh), 1.0 / hd ** 0.5)), bias)
    c_next = te.compute((b, hd), lambda n, k: te.sigmoid(gates[n, hd + k]) * c[n, k]
                        + te.sigmoid(gates[n, k]) * te.tanh(gates[n, 2 * hd + k]), name="c_next")
    h_next = te.compute((b, hd), lambda n, k: te.sigmoid(gates[n, 3 * hd + k]) * te.tanh(c_next[n, k]), name="h_next")
    return [x, h, c, wih, whh, bias], [h_next, c_next], {"batch": b, "input": i, "hidden": hd}


def transformer_block(rng: random.Random):
    from tvm import te, topi

    s, d, f = rng.choice([8, 16, 32]), rng.choice([16, 32]), rng.choice([32, 64])
    x = _ph([s, d], "x")
    g1, b1, g2, b2 = _ph([d], "ln1_gamma"), _ph([d], "ln1_beta"), _ph([d], "ln2_gamma"), _ph([d], "ln2_beta")
    wq, wk, wv, wo = (_ph([d, d], n) for n in ("wq", "wk", "wv", "wo"))
    w1, w2 = _ph([f, d], "ffn_w1"), _ph([d, f], "ffn_w2")
    hn = topi.nn.layer_norm(x, g1, b1, axis=[1], epsilon=1e-5)
    q, k, v = (_scaled(topi.nn.dense(hn, w), 1.0 / d ** 0.5) for w in (wq, wk, wv))
    scores = _scaled(topi.nn.dense(q, k), 1.0 / d ** 0.5)
    attn = topi.nn.softmax(scores, axis=1)
    ctx = topi.matmul(attn, v)
    x1 = topi.add(x, _scaled(topi.nn.dense(ctx, wo), 1.0 / d ** 0.5))
    h2 = topi.nn.layer_norm(x1, g2, b2, axis=[1], epsilon=1e-5)
    ff = _scaled(topi.nn.dense(h2, w1), 1.0 / d ** 0.5)
    ff = te.compute(ff.shape, lambda i, j: 0.5 * ff[i, j] * (1.0 + te.erf(ff[i, j] * 0.7071067811865476)), name="gelu")
    y = topi.add(x1, _scaled(topi.nn.dense(ff, w2), 1.0 / f ** 0.5))
    return [x, g1, b1, wq, wk, wv, wo, g2, b2, w1, w2], [y], {"seq": s, "dim": d, "ffn": f, "heads": 1}


def wavenet_block(rng: random.Random):
    from tvm import te, topi

    n, c, length, dil = 1, rng.choice([8, 16]), rng.choice([32, 64]), rng.choice([1, 2, 4])
    x = _ph([n, c, length], "x")
    wf, wg, wr, ws = _ph([c, c, 2], "filter_weight"), _ph([c, c, 2], "gate_weight"), _ph([c, c, 1], "residual_weight"), _ph([c, c, 1], "skip_weight")
    padded = topi.nn.pad(x, [0, 0, dil], [0, 0, 0])  # causal: pad on the left only
    filt = _scaled(topi.nn.conv1d(padded, wf, 1, 0, dil), 1.0 / (2 * c) ** 0.5)
    gate = _scaled(topi.nn.conv1d(padded, wg, 1, 0, dil), 1.0 / (2 * c) ** 0.5)
    z = te.compute(filt.shape, lambda b, ch, t: te.tanh(filt[b, ch, t]) * te.sigmoid(gate[b, ch, t]), name="gated")
    res = topi.add(x, _scaled(topi.nn.conv1d(z, wr, 1, 0, 1), 1.0 / c ** 0.5))
    skip = _scaled(topi.nn.conv1d(z, ws, 1, 0, 1), 1.0 / c ** 0.5)
    return [x, wf, wg, wr, ws], [res, skip], {"channels": c, "length": length, "dilation": dil}


def mlp_mixer_block(rng: random.Random):
    from tvm import topi

    p, c, hid = rng.choice([8, 16]), rng.choice([16, 32]), rng.choice([32, 64])
    x = _ph([p, c], "x")
    g, b = _ph([c], "ln_gamma"), _ph([c], "ln_beta")
    wt1, wt2 = _ph([hid, p], "token_w1"), _ph([p, hid], "token_w2")
    hn = topi.transpose(topi.nn.layer_norm(x, g, b, axis=[1], epsilon=1e-5), [1, 0])  # [c, p]
    t = topi.tanh(_scaled(topi.nn.dense(hn, wt1), 1.0 / p ** 0.5))
    t = _scaled(topi.nn.dense(t, wt2), 1.0 / hid ** 0.5)  # [c, p]
    return [x, g, b, wt1, wt2], [topi.add(x, topi.transpose(t, [1, 0]))], {"patches": p, "channels": c, "hidden": hid}


def attention_causal(rng: random.Random):
    from tvm import te, topi

    s, d = rng.choice([8, 16, 32]), rng.choice([8, 16, 32])
    q, k, v = _ph([s, d], "q"), _ph([s, d], "k"), _ph([s, d], "v")
    scores = _scaled(topi.nn.dense(q, k), 1.0 / d ** 0.5)
    masked = te.compute(scores.shape, lambda i, j: te.if_then_else(j > i, -1e9, scores[i, j]), name="causal")
    return [q, k, v], [topi.matmul(topi.nn.softmax(masked, axis=1), v)], {"seq": s, "dim": d, "causal": True}


KINDS: list[tuple[str, Callable]] = [
    ("inception", inception), ("resnet_block", resnet_block), ("depthwise_separable", depthwise_separable),
    ("squeeze_excite", squeeze_excite), ("gru_cell", gru_cell), ("lstm_cell", lstm_cell),
    ("transformer_block", transformer_block), ("wavenet_block", wavenet_block), ("inverted_residual", inverted_residual),
    ("mlp_mixer_block", mlp_mixer_block), ("causal_attention", attention_causal),
]


def build(index: int, rng: random.Random) -> Workload:
    """The index-th block (kinds cycle), with shapes drawn from rng."""
    kind, make = KINDS[index % len(KINDS)]
    inputs, outputs, args = make(rng)
    return Workload(f"{kind}_{index}", kind, "block", args, inputs, outputs)
