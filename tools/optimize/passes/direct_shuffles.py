"""Straight-line warp shuffles read the sender's per-thread copy directly.

TVM's cross-thread reductions (and many hand-written ones) are chains of thread loops, one per
shuffle: `t[tid] = shfl_down(warp_k, tid, OFF, W); v[tid] = v[tid] + t[tid]; warp_k1.put(tid, v[tid]);`
where warp_k was filled, one value per thread, by the loop just before. After lane_arrays and
perthread_stack that lane array is a copy of `v` as it stood when the loop began, so the read can
take `v` itself, provided that

- the site is dense (every thread puts once, at the top of its loop: the lowering's comment says
  so) and the put is the last mention of `v` in its loop;
- the reading loop follows the putting loop directly (only comments or thread loops that never
  mention `v` between them), so nothing else wrote `v`;
- the reading loop writes `v` only at its own thread's index, and visits threads in increasing
  order (the lowering's tz/ty/tx nest): a shfl_down source (a higher thread) is then still
  unwritten when it is read; a read from a fixed lane is allowed only where the loop does not
  write `v` or the statement is `v[tid] = shfl(..., lane)` (the source lane writes its own value).

The arrays read this way get 32 more (never written, zero) entries, so that the source index is
always in bounds and a thread beyond the block reads T{} as the lane array gave. The reads become
selects of two loads that g++ vectorizes; lane arrays no longer read are removed with their puts,
and so are per-thread copies of __activemask() that nothing reads.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform

_TID = re.compile(r"const std::size_t tid = \(std::size_t\(tz\) \* blockDim\.y \+ ty\) \* blockDim\.x \+ tx;")
_LANES_DECL = re.compile(r"cudaopt::Lanes<([\w: ]+)> (\w+)\(nthreads\);")
_STACK_DECL = re.compile(r"cudaopt::Id<([^;]*)> (\w+)\[(\d+)\] = \{\};")
_READ = re.compile(r"cudaopt::(shfl_down|shfl)\((\w+), tid, (\d+)u?, (\d+)u?\)")
_POW2 = {1, 2, 4, 8, 16, 32}
_WRITE_AT = r"{name}\s*\[([^\]]*)\](?:\[[^\]]*\])*\s*(?:\+\+|--|(?:[-+*/%&|^]|<<|>>)?=(?!=))"


def _containing(nests: list[C.ThreadNest], pos: int) -> C.ThreadNest | None:
    return next((n for n in nests if n.open < pos < n.close), None)


def _put(body: str, lanes: str) -> tuple[int, int, str] | None:
    """(start, end, value) of the one `lanes.put(tid, value);` statement, or None."""
    found = [m for m in re.finditer(rf"\b{lanes}\.put\(tid, ", body)]
    if len(found) != 1:
        return None
    m = found[0]
    close = C.call_end(body, m.end() - len("tid, ") - 1)
    if body[close + 1] != ";":
        return None
    return m.start(), close + 2, body[m.end():close]


def _dense(body: str, nest: C.ThreadNest, lanes: str) -> bool:
    base, _, site = lanes.rpartition("_")
    before = body[:nest.start].rstrip()
    return before.endswith(f"// {base}, site {site}: every thread writes")


def _own_writes_only(text: str, name: str) -> bool:
    if re.search(rf"(?:\+\+|--)\s*{name}\b", text):
        return False
    return all(w[1].strip() == "tid" for w in re.finditer(_WRITE_AT.format(name=name), text))


def _read_first(loop: str, at: int, name: str) -> bool:
    """In the loop text before `at` (the assignment the read is the value of aside): no write of
    `name` and no inner loop (the read happens once per thread, before the thread changes its copy)."""
    before = re.sub(rf"{name}\[tid\](?:\[\d+\])* = $", "", loop[:at])
    return not re.search(_WRITE_AT.format(name=name), before) and not re.search(r"\b(for|while|do)\b", before)


def _rewrite_reads(body: str, stack: dict[str, str], lanes_types: dict[str, str]) -> tuple[str, set[str]]:
    """Reads rewritten, and the stack arrays now read at other threads' indices."""
    nests = C.thread_nests(body)
    edits: list[tuple[int, int, str]] = []
    padded: set[str] = set()
    for m in _READ.finditer(body):
        fn, lanes, lane_or_off, width = m[1], m[2], int(m[3]), int(m[4])
        read_nest = _containing(nests, m.start())
        put = _put(body, lanes)
        if lanes not in lanes_types or width not in _POW2 or read_nest is None or put is None:
            continue
        put_nest = _containing(nests, put[0])
        value = re.fullmatch(r"(\w+)\[tid\]((?:\[\d+\])*)", put[2].strip())
        if put_nest is None or value is None or value[1] not in stack or not _dense(body, put_nest, lanes):
            continue
        name, suffix = value[1], value[2]
        if put_nest.chain != read_nest.chain or put_nest.start >= read_nest.start:
            continue
        between = [n for n in nests if put_nest.start < n.start < read_nest.start]
        if any(re.search(rf"\b{name}\b", body[n.start:n.close]) for n in between):
            continue
        if re.search(rf"\b{name}\b", body[put[1]:put_nest.close]) or not _TID.search(body, read_nest.open, read_nest.close):
            continue
        read_loop = body[read_nest.open:read_nest.close]
        if not _own_writes_only(read_loop, name) or not _read_first(read_loop, m.start() - read_nest.open, name):
            continue
        own = f"{name}[tid]{suffix}"
        if fn == "shfl_down":
            source = f"((tid % {width}u) + {lane_or_off}u < {width}u ? {name}[tid + {lane_or_off}]{suffix} : {own})" \
                if lane_or_off < width else own
        else:
            statement = re.search(rf"(?:^|[;{{}}])\s*{re.escape(own)} = {re.escape(m[0])};$", body[:m.end() + 1])
            writes = re.findall(_WRITE_AT.format(name=name), read_loop)
            if writes and not (len(writes) == 1 and statement):
                continue
            source = f"{name}[tid - tid % {width}u + {lane_or_off % width}]{suffix}"
        edits.append((m.start(), m.end(), f"static_cast<{lanes_types[lanes]}>({source})"))
        padded.add(name)
    for start, end, text in sorted(edits, reverse=True):
        body = body[:start] + text + body[end:]
    return body, padded


def _drop_unread(body: str, lanes_types: dict[str, str]) -> str:
    """Lane arrays that nothing reads any more: declaration, clears and puts removed."""
    for lanes in lanes_types:
        if re.search(rf"cudaopt::\w+\({lanes}[,)]", body):
            continue
        put = _put(body, lanes)
        if put is None or re.search(rf"\b{lanes}\.(?!put\b)", body):
            continue
        body = body[:put[0]] + body[put[1]:]
        body = re.sub(rf"[ \t]*cudaopt::Lanes<[\w: ]+> {lanes}\(nthreads\);", "", body, count=1)
    return body


def _drop_unread_masks(body: str, stack: dict[str, str]) -> str:
    """Per-thread copies of __activemask() that nothing reads (the lowered shuffles never take
    their mask): the stores and the declaration removed."""
    for name in stack:
        store = rf"[ \t]*{name}\[tid\](?:\[\d+\])* = cudacpu::active_mask\(tid, nthreads\);[ \t]*\n?"
        decl = rf"[ \t]*cudaopt::Id<[^;]*> {name}\[\d+\] = \{{\}};[ \t]*\n?"
        rest = re.sub(decl, "", re.sub(store, "", body))
        if rest != body and not re.search(rf"\b{name}\b", rest):
            body = rest
    return body


def direct_shuffles(ctx: Context, code: str) -> str | None:
    """Shuffles whose lane array copies a per-thread array read that array (see module doc)."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        lanes_types = {m[2]: m[1] for m in _LANES_DECL.finditer(body)}
        stack = {m[2]: m[1] for m in _STACK_DECL.finditer(body)}
        if not lanes_types or not stack:
            continue
        new, padded = _rewrite_reads(body, stack, lanes_types)
        if not padded:
            continue
        for name in padded:
            decl = re.search(rf"cudaopt::Id<[^;]*> {name}\[(\d+)\] = \{{\}};", new)
            new = new[:decl.start(1)] + f"{int(decl[1]) + 32}" + new[decl.end(1):]
        code = C.with_body(code, k, _drop_unread_masks(_drop_unread(new, lanes_types), stack))
        changed = True
    return code if changed else None


DIRECT_SHUFFLES = Transform("direct_shuffles", "straight-line shuffles read the sender's per-thread copy (no lane arrays)",
                            direct_shuffles)
