"""Steps of a shuffle reduction computed only for the lanes whose values are read later.

After direct_shuffles, a warp reduction in TVM's form is a chain of thread loops, one per step,
with offsets halving down to 1:

    t[tid][0] = static_cast<T>(((tid % 32u) + 8u < 32u ? v[tid + 8][0] : v[tid][0]));
    v[tid][0] = (v[tid][0] + t[tid][0]);                  (any expression of v[tid] and t[tid])

and only lane 0 of each warp is read afterwards (`if (threadIdx.x % 32 == 0)` or
`if (threadIdx.x == 0)`). Lane 0's value after the last step (offset 1) needs lanes 0..1 before
it, those need lanes 0..3 before the step with offset 2, and so on: the step with offset O only
has to compute the lanes below O, which is 31 lane-steps per warp instead of 32 per step. Each
lane computed does exactly what it did before, so the result is the same to the bit.

Where it applies (else the kernel is left alone):
- the steps are consecutive thread loops of one straight-line stretch, each holding the two
  statements above (after its thread-id lines), the last one possibly followed by statements
  guarded by lane 0 that do not touch `t` and only read `v` (they move to a loop of their own);
- every other read of `v` anywhere in the kernel is under such a lane-0 guard, or is a step of a
  chain that a thread loop of its own straight-line stretch fully rewrites `v` before
  (`v[tid][0] = e;` at the top of a loop body, `e` not reading `v`), so no lane left out is read;
- `t` appears in such steps only (written, then read by the same thread);
- a chain inside a loop of the kernel is itself preceded by such a full rewrite of `v` (else its
  next round would read the lanes it left out).
A rewrite of the low lanes only, `if (threadIdx.x < K) { v[tid] = e; }` (TVM's reload of the
per-warp sums before the second stage), counts as full for a chain whose first offset O has
2 * O <= K <= 32, where lane 0 is only ever read as `threadIdx.x == 0` (the first warp of each row
of threads): those warps' lanes below K are all the chain reads; the other warps compute from stale
lanes that nobody reads.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_STEP = re.compile(r"(?P<t>\w+)\[tid\](?P<s>(?:\[\d+\])*) = static_cast<[\w: ]+>\(\(\(tid % 32u\) \+ (?P<o>\d+)u < 32u \? "
                   r"(?P<v>\w+)\[tid \+ (?P=o)\](?P=s) : (?P=v)\[tid\](?P=s)\)\);")
_ID_LINES = re.compile(r"const (?:std::size_t tid|uint3 threadIdx) = [^;]*;")
_LANE0 = re.compile(r"if \((?P<c>\(*(?:\((?:int|unsigned int|unsigned)\))?threadIdx\.x\)*(?: % 32\)*)? == 0)\) \{")
_LOW_LANES = r"if \(\(*(?:\((?:int|unsigned int|unsigned)\))?threadIdx\.x\)* < (?P<k>\d+)u?\) \{\s*"
_PURE = {"max", "min", "fmaxf", "fminf", "fmax", "fmin", "static_cast", "float", "double", "int", "unsigned"}


class _Step:
    def __init__(self, nest: C.ThreadNest, t: str, v: str, offset: int, statements: str, rest: str):
        self.nest, self.t, self.v, self.offset = nest, t, v, offset
        self.statements, self.rest = statements, rest  # the two step statements; what follows them


def _statements(body: str, nest: C.ThreadNest) -> list[str]:
    """The loop body's top-level statements (a braced one whole), thread-id lines dropped."""
    text = C.strip_comments(body[nest.open + 1:nest.close])
    out, start, parens, braces = [], 0, 0, 0
    for i, ch in enumerate(text):
        parens += (ch in "([") - (ch in ")]")
        braces += (ch == "{") - (ch == "}")
        if parens == 0 and braces == 0 and ch in ";}":
            out.append(text[start:i + 1].strip())
            start = i + 1
    if text[start:].strip():
        return []
    return [s for s in out if not _ID_LINES.fullmatch(s)]


def _in_loop(body: str, pos: int) -> bool:
    """Whether a loop of the kernel's own (not the block loops, not a loop of one trip) encloses pos."""
    stack: list[int] = []
    for i, ch in enumerate(body[:pos]):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            stack.pop()
    for open_ in stack:
        before = C.strip_comments(body[:open_]).rstrip()
        if before.endswith("do") and not before[-3:-2].isalnum():
            return True
        if not before.endswith(")"):
            continue
        depth, i = 0, len(before) - 1
        while i >= 0:
            depth += (before[i] == ")") - (before[i] == "(")
            if depth == 0:
                break
            i -= 1
        keyword = re.search(r"(\w+)\s*$", before[:i])
        once = re.fullmatch(r"\(int (\w+) = 0; \1 < 1; \+\+\1\)", before[i:])  # TVM's one-trip loops
        if keyword and keyword[1] in ("for", "while") and "bx < gridDim.x" not in before[i:] and not once:
            return True
    return False


def _update_ok(statement: str, v: str, t: str, suffix: str) -> bool:
    m = re.fullmatch(rf"{v}\[tid\]{re.escape(suffix)} = (.*);", statement, re.S)
    if m is None:
        return False
    expr = m[1].replace(f"{v}[tid]{suffix}", " ").replace(f"{t}[tid]{suffix}", " ")
    names = set(re.findall(r"[A-Za-z_]\w*", re.sub(r"\b\d[\w.+-]*", " ", expr)))
    return "[" not in expr and "=" not in expr.replace("==", "") and names <= _PURE


def _step(body: str, nest: C.ThreadNest) -> _Step | None:
    statements = _statements(body, nest)
    if len(statements) < 2 or not (m := _STEP.fullmatch(statements[0])):
        return None
    if not _update_ok(statements[1], m["v"], m["t"], m["s"]):
        return None
    rest = statements[2:]
    for s in rest:
        if not _lane0_guard(s) or re.search(rf"\b{m['t']}\b", s) or re.search(rf"\b{m['v']}\b[^;]*?(?<![=!<>])=(?!=)", s) \
                or re.search(rf"\b{m['v']}\b(?!\[tid\])", s):
            return None
    return _Step(nest, m["t"], m["v"], int(m["o"]), "\n".join(statements[:2]), "\n".join(rest))


def _chains(body: str, nests: list[C.ThreadNest]) -> list[list[_Step]]:
    """Maximal runs of adjacent steps on one array with offsets halving down to 1; only the last
    step of a run may carry lane-0 statements."""
    out, run = [], []
    for nest in nests:
        step = _step(body, nest)
        if step and run and step.nest.chain == run[-1].nest.chain and step.v == run[-1].v \
                and step.offset * 2 == run[-1].offset and not run[-1].rest:
            run.append(step)
            continue
        if run and run[-1].offset == 1:
            out.append(run)
        run = [step] if step else []
    if run and run[-1].offset == 1:
        out.append(run)
    return out


def _lane0_guard(text: str) -> re.Match | None:
    """`if (threadIdx.x % 32 == 0) {` or `if (threadIdx.x == 0) {` (casts, parentheses) at text's start."""
    m = _LANE0.match(text)
    return m if m and m["c"].count("(") == m["c"].count(")") else None


def _lane0_spans(body: str) -> list[tuple[int, int, bool]]:
    """(start, end, every warp's lane 0 rather than thread 0 of a row) of each lane-0 guard."""
    return [(i, C.matching_brace(body, i + m.end() - 1), "%" in m["c"]) for i in range(len(body))
            if body.startswith("if (", i) and (m := _lane0_guard(body[i:]))]


def _rewritten_before(body: str, nests: list[C.ThreadNest], step: _Step, v: str, steps_at: dict[int, _Step],
                      thread0_only: bool) -> bool:
    """In the step's straight-line stretch, the last thread loop before it that writes v in full
    or is a step on v is a full write (`v[tid] = e;` at its top level, e not reading v), or a write
    of the lanes below K >= 2 * offset where only thread 0 of a row reads v (see module doc): the
    lanes a pruned step left stale and this chain reads are all overwritten before it reads them."""
    last = None
    for n in nests:
        if n.chain != step.nest.chain or n.start >= step.nest.start:
            continue
        if n.start in steps_at and steps_at[n.start].v == v:
            last = False
        for s in _statements(body, n):
            w = re.fullmatch(rf"{v}\[tid\](?:\[\d+\])* = (.*);", s, re.S)
            if w and not re.search(rf"\b{v}\b", w[1]):
                last = True
            low = re.fullmatch(rf"{_LOW_LANES}{v}\[tid\](?:\[\d+\])* = ([^;]*);\s*\}}", s, re.S)
            if low and not re.search(rf"\b{v}\b", low[2]):
                last = thread0_only and 2 * step.offset <= int(low["k"]) <= 32
    return bool(last)


def _thread0_only(body: str, v: str, lane0: list[tuple[int, int, bool]]) -> bool:
    """Every lane-0 read of v is under `threadIdx.x == 0` (no `% 32`), and none is a broadcast."""
    return not re.search(rf"\b{v}\[tid - tid % 32u", body) and \
        not any(every_warp and re.search(rf"\b{v}\b", body[a:b]) for a, b, every_warp in lane0)


def _dead_elsewhere(body: str, chain: list[_Step], nests: list[C.ThreadNest], steps_at: dict[int, _Step],
                    lane0: list[tuple[int, int, bool]]) -> bool:
    v, t = chain[0].v, chain[0].t
    for m in re.finditer(rf"\b{v}\b", body):
        after = body[m.end():]
        if any(a < m.start() < b for a, b, _ in lane0) and after.startswith("[tid]") or \
                re.match(r"\[\d+\] = \{\};|\[tid - tid % 32u \+ 0\]", after):
            continue  # lane 0's own value under a lane-0 guard, the declaration, or a broadcast of lane 0
        nest = next((n for n in nests if n.open < m.start() < n.close), None)
        if nest is None:
            return False
        step = steps_at.get(nest.start)
        if step is None:
            if re.match(r"\[tid\](?:\[\d+\])* = ", body[m.end():]):
                continue  # a write
            return False
        if step.v == v and step not in chain and not _rewritten_before(body, nests, step, v, steps_at,
                                                                          _thread0_only(body, v, lane0)):
            return False
    for m in re.finditer(rf"\b{t}\b", body):
        nest = next((n for n in nests if n.open < m.start() < n.close), None)
        if nest is None:
            if re.match(r"\[\d+\] = \{\};", body[m.end():]):
                continue
            return False
        if nest.start not in steps_at or steps_at[nest.start].t != t:
            return False
    return True


def _indent(body: str, nest: C.ThreadNest) -> str:
    line_start = body.rfind("\n", 0, nest.start) + 1
    return re.match(r"[ \t]*", body[line_start:])[0]


def _pruned(body: str, step: _Step) -> str:
    """The step's loop over the lanes below its offset; the lane-0 statements that followed it in
    a loop over each warp's lane 0 (where its guard holds: it is false on every other lane)."""
    ind = _indent(body, step.nest)
    # a countable loop over the lanes (its bound a min, the lane a variable whose range g++ sees:
    # the select on `lane + offset < 32` folds away), so that the step vectorizes
    inner = "\n".join(f"{ind}        {line.strip().replace('(tid % 32u)', 'cudaopt_l')}" for line in step.statements.split("\n"))
    o = step.offset
    loop = (f"{ind}for (std::size_t cudaopt_w = 0; cudaopt_w < nthreads; cudaopt_w += 32) {{  "
            f"// tools.optimize: only lanes below {o} are read later\n"
            f"{ind}    const std::size_t cudaopt_n = nthreads - cudaopt_w < {o}u ? nthreads - cudaopt_w : {o}u;\n"
            + (f"{ind}    #pragma omp simd\n" if o >= 8 else "")  # 1 to 4 lanes: plain scalar code
            + f"{ind}    for (std::size_t cudaopt_l = 0; cudaopt_l < cudaopt_n; ++cudaopt_l) {{\n"
            f"{ind}        const std::size_t tid = cudaopt_w + cudaopt_l;\n"
            f"{inner}\n{ind}    }}\n{ind}}}\n")
    if not step.rest:
        return loop
    rest = body[step.nest.open + 1:step.nest.close]
    for line in step.statements.split("\n"):
        rest = re.sub(rf"[ \t]*{re.escape(line)}[ \t]*\n?", "", rest, count=1)
    rest = re.sub(r"[ \t]*const (?:std::size_t tid|uint3 threadIdx) = [^;]*;[ \t]*\n?", "", rest)
    if re.search(r"\b(tx|ty|tz)\b", rest):
        return loop + body[body.rfind("\n", 0, step.nest.start) + 1:step.nest.open + 1] + "\n" + \
            f"{ind}    const uint3 threadIdx = make_uint3(tx, ty, tz);\n" \
            f"{ind}    const std::size_t tid = (std::size_t(tz) * blockDim.y + ty) * blockDim.x + tx;\n" + rest.strip("\n").rstrip() + \
            f"\n{ind}}}\n"
    return loop + (f"{ind}for (std::size_t tid = 0; tid < nthreads; tid += 32) {{  // tools.optimize: lane 0 of each warp\n"
                   f"{ind}    const uint3 threadIdx = make_uint3(tid % blockDim.x, tid / blockDim.x % blockDim.y, "
                   f"tid / (blockDim.x * blockDim.y));\n" + rest.strip("\n").rstrip() + f"\n{ind}}}\n")


def live_lanes(ctx: Context, code: str) -> str | None:
    """Shuffle-reduction steps computed only for the lanes read later (see module doc)."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        launches = ctx.launches_of(k.name)
        # lane 0 of a warp is threadIdx.x % 32 == 0 only where rows of threads fill whole warps
        if "nthreads" not in body or not launches or any(b[0] % 32 and (b[1] > 1 or b[2] > 1)
                                                          for _, b in (launch.dims() for launch in launches)):
            continue
        nests = C.thread_nests(body)
        chains = _chains(body, nests)
        steps_at = {s.nest.start: s for chain in chains for s in chain}
        lane0 = _lane0_spans(body)
        chosen = [chain for chain in chains if _dead_elsewhere(body, chain, nests, steps_at, lane0) and
                  (not _in_loop(body, chain[0].nest.start) or
                   _rewritten_before(body, nests, chain[0], chain[0].v, steps_at, _thread0_only(body, chain[0].v, lane0)))]
        steps = sorted((s for chain in chosen for s in chain), key=lambda s: s.nest.start, reverse=True)
        if not steps:
            continue
        for step in steps:
            start = body.rfind("\n", 0, step.nest.start) + 1
            body = body[:start] + _pruned(body, step) + body[step.nest.close + 1:]
        code = C.with_body(code, k, body)
        changed = True
    return code if changed else None


LIVE_LANES = Transform("live_lanes", "shuffle-reduction steps computed only for the lanes read later", live_lanes)
