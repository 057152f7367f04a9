"""Transformations for kernels with barriers and warp intrinsics (see tools/optimize/__init__.py).

They remove emulation that a CPU running a block's threads as loops does not need, working
from the regular text the lowering (tools/cuda) emits; each returns None on any other shape,
and the search checks every result against the reference. In the order tried:

sync_together: all of the following that apply, as one variant.
warp_rounds: a loop of warp-shuffle rounds (a shuffle reduction or scan) runs warp by warp on a
    local array of the 32 lanes' values (exact: each lane's operations in the original order).
shared_atomics_plain: atomics on the block's own `__shared__` memory as plain read-modify-writes
    (a block runs on one OpenMP thread).
lane_arrays: the lowering's `cudacpu::WarpExchange` (16-byte slots, round stamps compared on
    every read) becomes one typed array per call site (`cudaopt::Lanes<T>`; a lane that did not
    write reads T{}, as the stamps encode); block counts (__syncthreads_count/_and/_or) and
    ballots are computed once per block or warp instead of once per thread.
perthread_stack: per-thread copies (values live across a barrier) as stack arrays sized by the
    task's largest block, bools as bytes, indexed by a 64-bit thread id: no aliasing with the
    kernel's pointers, affine accesses, vectorizable thread loops.
uniform_exits: loops whose exits test only values the block's threads share left once per block
    (tools/optimize/uniform_exits.py).
direct_shuffles: straight-line shuffles (TVM's cross-thread reductions) read the sender's
    per-thread copy instead of a lane array (tools/optimize/direct_shuffles.py).
live_lanes: then each step of such a reduction computes only the lanes read later
    (tools/optimize/live_lanes.py).
own_lane_simd: thread loops left scalar for their warp exchanges, which now touch only their own
    thread's copies, vectorized (tools/optimize/own_lane_simd.py).
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..base import Context, Transform, together
from .direct_shuffles import DIRECT_SHUFFLES
from .live_lanes import LIVE_LANES
from .own_lane_simd import OWN_LANE_SIMD
from .uniform_exits import UNIFORM_EXITS

# ---------------------------------------------------------------------------------------
# warp exchanges as plain per-site lane arrays

LANES_HEADER = """// ---- tools.optimize: warp exchanges as plain lane arrays ------------------------------------
// One array per call site of a warp intrinsic (or __syncthreads_count/_and/_or): the values the
// threads gave in the current round. A thread that did not write reads as T{} (cleared when a
// round begins), as the lowering's round stamps encode; lanes beyond the block are always T{}.
// Flags = true also records which threads wrote (for __all_sync and __syncthreads_and).
#ifndef CUDAOPT_LANES
#define CUDAOPT_LANES
namespace cudaopt {
template <class T, bool Flags = false>
class Lanes {
 public:
  explicit Lanes(std::size_t n)
      : n_(n), v_(new T[(n + 31) / 32 * 32 + 32]()), w_(new unsigned char[Flags ? (n + 31) / 32 * 32 + 32 : 1]()) {}
  ~Lanes() { delete[] v_; delete[] w_; }
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;
  void clear() {
    for (std::size_t i = 0; i < n_; ++i) v_[i] = T{};
    if (Flags)
      for (std::size_t i = 0; i < n_; ++i) w_[i] = 0;
  }
  void put(unsigned tid, const T& value) {
    v_[tid] = value;
    if (Flags) w_[tid] = 1;
  }
  T at(unsigned tid) const { return v_[tid]; }
  bool written(unsigned tid) const { return tid < n_ && w_[tid]; }
  std::size_t threads() const { return n_; }

 private:
  std::size_t n_;
  T* v_;
  unsigned char* w_;
};

template <class T, bool F>
inline T shfl(const Lanes<T, F>& x, unsigned tid, int src_lane, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int in_segment = ((src_lane % w) + w) % w;
  return x.at(cudacpu::shfl_source(tid, in_segment, w));
}

template <class T, bool F>
inline T shfl_up(const Lanes<T, F>& x, unsigned tid, unsigned delta, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  if (lane - static_cast<int>(delta) < 0) return x.at(tid);
  return x.at(cudacpu::shfl_source(tid, lane - static_cast<int>(delta), w));
}

template <class T, bool F>
inline T shfl_down(const Lanes<T, F>& x, unsigned tid, unsigned delta, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  if (lane + static_cast<int>(delta) >= w) return x.at(tid);
  return x.at(cudacpu::shfl_source(tid, lane + static_cast<int>(delta), w));
}

template <class T, bool F>
inline T shfl_xor(const Lanes<T, F>& x, unsigned tid, int lane_mask, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int lane = static_cast<int>(tid % 32u % static_cast<unsigned>(w));
  int src = lane ^ lane_mask;
  if (src < 0 || src >= w) return x.at(tid);
  return x.at(cudacpu::shfl_source(tid, src, w));
}

template <class T, bool F>
inline unsigned ballot(const Lanes<T, F>& x, unsigned tid, unsigned mask) {
  unsigned base = tid - tid % 32u, bits = 0;
  for (unsigned lane = 0; lane < 32; ++lane) bits |= (x.at(base + lane) != 0 ? 1u : 0u) << lane;
  return bits & mask;
}

template <class T>
inline unsigned participants(const Lanes<T, true>& x, unsigned tid, unsigned mask) {
  unsigned base = tid - tid % 32u, bits = 0;
  for (unsigned lane = 0; lane < 32; ++lane) bits |= (x.written(base + lane) ? 1u : 0u) << lane;
  return bits & mask;
}

template <class T, bool F>
inline int any(const Lanes<T, F>& x, unsigned tid, unsigned mask) { return ballot(x, tid, mask) != 0; }

template <class T>
inline int all(const Lanes<T, true>& x, unsigned tid, unsigned mask) {
  return ballot(x, tid, mask) == participants(x, tid, mask);
}

template <class T, bool F>
inline int block_count(const Lanes<T, F>& x) {
  int count = 0;
  for (unsigned t = 0; t < x.threads(); ++t) count += x.at(t) != 0;
  return count;
}

template <class T>
inline int block_participants(const Lanes<T, true>& x) {
  int count = 0;
  for (unsigned t = 0; t < x.threads(); ++t) count += x.written(t);
  return count;
}
}  // namespace cudaopt
#endif  // CUDAOPT_LANES
"""

_EXCHANGE = re.compile(r"cudacpu::WarpExchange (\w+)\((\d+), nthreads\);")
_SHUFFLE_READS = ("shfl", "shfl_up", "shfl_down", "shfl_xor")
_VOTE_READS = ("ballot", "any", "block_count")
_FLAG_READS = ("all", "participants", "block_participants")
_INTEGRAL = {"int", "unsigned int", "unsigned"}
_THREAD_NEST = re.compile(r"\s*" + C.THREAD_NEST)


def _code_positions(body: str, pattern: str) -> list[re.Match]:
    """Matches of pattern outside `//` comments (the optimizer's own notes mention lanes and warps)."""
    comments = [(m.start(), m.end()) for m in re.finditer(r"//[^\n]*", body)]
    return [m for m in re.finditer(pattern, body) if not any(a <= m.start() < b for a, b in comments)]


class _Site:
    def __init__(self):
        self.type: str | None = None
        self.flags = False
        self.puts = 0


def _exchange_edits(body: str, name: str, nsites: int) -> list[tuple[int, int, str]] | None:
    """(start, end, replacement) for every use of the exchange `name`, or None when some use is
    not one this transformation knows."""
    sites = [_Site() for _ in range(nsites)]
    edits, reads = [], []
    for m in _code_positions(body, rf"\b{name}\b"):
        s = m.start()
        if body.startswith(f"cudacpu::WarpExchange {name}(", s - len("cudacpu::WarpExchange ")):
            continue  # the declaration: replaced once the sites' types are known
        if (b := re.match(rf"{name}\.begin\((\d+)\);", body[s:])):
            edits.append((s, s + b.end(), ("begin", int(b[1]))))
            continue
        if (p := re.match(rf"{name}\.put(?:<([\w ]+)>)?\((\d+), tid, ", body[s:])):
            close = C.call_end(body, s + p.end() - len(f"{p[2]}, tid, ") - 1)
            value = body[s + p.end():close]
            site = int(p[2])
            ptype = p[1] or (c[1] if (c := re.fullmatch(r"static_cast<([\w ]+)>\(.*\)", value, re.S)) else None)
            if ptype is None or site >= nsites or sites[site].type not in (None, ptype):
                return None
            sites[site].type, sites[site].puts = ptype, sites[site].puts + 1
            edits.append((s, s + p.end(), ("put", site)))
            continue
        call = re.search(r"cudacpu::(\w+)(?:<([\w ]+)>)?\(\s*$", body[max(0, s - 60):s])
        after = re.match(rf"{name}, (\d+)(, |\))", body[s:])
        if call is None or after is None:
            return None
        fn, rtype, site = call[1], call[2], int(after[1])
        if site >= nsites or fn not in _SHUFFLE_READS + _VOTE_READS + _FLAG_READS:
            return None
        start = s - (len(call[0]) - call[0].index("cudacpu::"))
        reads.append((fn, rtype, site))
        sites[site].flags |= fn in _FLAG_READS
        edits.append((start, s + after.end(), ("read", fn, site, after[2])))
    for fn, rtype, site in reads:
        t = sites[site].type
        if t is None or (fn in _SHUFFLE_READS and rtype != t) or (fn not in _SHUFFLE_READS and t not in _INTEGRAL):
            return None
    if not any(site.puts for site in sites):
        return None
    dense = {i: _dense_site(body, name, i) for i in range(nsites)}
    # One array per site, NAME_SITE, under a prefix no name of the kernel starts (a user's local
    # renamed `warp_2` by the lowering would otherwise be redeclared).
    lanes = next(p for p in (name, *(f"{name}_lanes{n or ''}" for n in range(100)))
                 if not any(re.search(rf"\b{p}_{i}\b", body) for i in range(nsites)))
    out = []
    for start, end, what in edits:
        if what[0] == "begin":
            site = what[1]
            text = f"// {name}, site {site}: every thread writes" if dense[site] and not sites[site].flags else f"{lanes}_{site}.clear();"
        elif what[0] == "put":
            text = f"{lanes}_{what[1]}.put(tid, "
        else:
            _, fn, site, sep = what
            text = f"cudaopt::{fn}({lanes}_{site}{sep}"
        out.append((start, end, text))
    decl = " ".join(f"cudaopt::Lanes<{s.type}{', true' if s.flags else ''}> {lanes}_{i}(nthreads);"
                    for i, s in enumerate(sites) if s.type is not None)
    m = re.search(rf"cudacpu::WarpExchange {name}\(\d+, nthreads\);", body)
    out.append((m.start(), m.end(), decl))
    return out


def _dense_site(body: str, name: str, site: int) -> bool:
    """Every round of the site is `begin` followed directly by a full thread-loop nest whose body
    writes the site once, at its top level, and never skips a thread: no clearing needed."""
    begins = [m.end() for m in re.finditer(rf"\b{name}\.begin\({site}\);", body)]
    put = f"{name}.put"
    covered = 0
    for end in begins:
        nest = _THREAD_NEST.match(body, end)
        if nest is None:
            return False
        close = C.matching_brace(body, nest.end() - 1)
        loop = body[nest.end():close]
        puts = re.findall(rf"\b{name}\.put(?:<[\w ]+>)?\({site},", loop)
        if len(puts) != 1 or re.search(r"\b(continue|break|return|goto)\b", loop) or not _at_top(loop, put):
            return False
        covered += 1
    total = len(re.findall(rf"\b{name}\.put(?:<[\w ]+>)?\({site},", body))
    return covered == total and total > 0


def _at_top(loop: str, needle: str) -> bool:
    depth = 0
    for i, ch in enumerate(loop):
        if loop.startswith(needle, i) and depth != 0:
            return False
        depth += ch == "{"
        depth -= ch == "}"
    return True


_NEST_START = re.compile(r"(?P<ind>[ \t]*)for \(unsigned int tz = 0; tz < blockDim\.z; \+\+tz\)")
_BLOCK_COUNT = re.compile(r"cudaopt::(block_count|block_participants)\((\w+)\)")


_BALLOT = re.compile(r"cudaopt::(ballot|any|all)\((\w+), tid, ")


def _replace_ballots(loop: str, x: str, bits: str) -> str:
    """`cudaopt::ballot(x, tid, mask)` -> the warp's bits & mask (any: != 0; all: == the
    participants' bits & mask, kept in {bits}_who)."""
    while (b := re.search(rf"cudaopt::(ballot|any|all)\({x}, tid, ", loop)):
        close = C.call_end(loop, b.start() + len(f"cudaopt::{b[1]}"))
        mask = loop[b.end():close]
        got = f"({bits}[tid / 32u] & ({mask}))"
        got = {"ballot": got, "any": f"({got} != 0u)", "all": f"({got} == ({bits}_who[tid / 32u] & ({mask})))"}[b[1]]
        loop = loop[:b.start()] + got + loop[close + 1:]
    return loop


def _hoist_block_counts(body: str) -> str:
    """A block count (__syncthreads_count/_and/_or) read in a thread loop that does not write its
    site is the same for every thread: computed once before the loop, not once per thread; a
    ballot (or any) there is computed once per warp (the mask applied per thread)."""
    out, pos, n = [], 0, 0
    for m in _NEST_START.finditer(body):
        if m.start() < pos or not re.search(r"[;{}]\s*$", re.sub(r"(\s*//[^\n]*)+\s*$", "", body[:m.start()])):
            continue
        nest = _nest_at(body, m.start())
        if nest is None:
            continue
        loop = body[nest[0]:nest[1] + 1]
        counts = {c[0]: c for c in _BLOCK_COUNT.finditer(loop) if not re.search(rf"\b{c[2]}\.(put|clear)\(", loop)}
        ballots = {b[2] for b in _BALLOT.finditer(loop) if not re.search(rf"\b{b[2]}\.(put|clear)\(", loop)}
        if not counts and not (ballots and _TID_LINE in loop):
            continue
        decls = []
        for call, c in counts.items():
            n += 1
            decls.append(f"{m['ind']}const int cudaopt_count_{n} = {call};  // tools.optimize: the same for every thread\n")
            loop = loop.replace(call, f"cudaopt_count_{n}")
        for x in sorted(ballots) if _TID_LINE in loop else ():
            n += 1
            bits = f"cudaopt_bits_{n}"
            decls.append(f"{m['ind']}if (nthreads > 1024u) cudacpu::unsupported(\"a block of more than 1024 threads\");\n"
                         f"{m['ind']}unsigned int {bits}[32];  // tools.optimize: each warp's ballot, once per warp\n"
                         f"{m['ind']}for (unsigned int cudaopt_w = 0; cudaopt_w < nthreads; cudaopt_w += 32)\n"
                         f"{m['ind']}    {bits}[cudaopt_w / 32] = cudaopt::ballot({x}, cudaopt_w, 0xffffffffu);\n")
            if re.search(rf"cudaopt::all\({x}, tid, ", loop):
                decls.append(f"{m['ind']}unsigned int {bits}_who[32];  // and the lanes that took part\n"
                             f"{m['ind']}for (unsigned int cudaopt_w = 0; cudaopt_w < nthreads; cudaopt_w += 32)\n"
                             f"{m['ind']}    {bits}_who[cudaopt_w / 32] = cudaopt::participants({x}, cudaopt_w, 0xffffffffu);\n")
            loop = _replace_ballots(loop, x, bits)
        out.append(body[pos:m.start()] + "".join(decls) + body[m.start():nest[0]] + loop)
        pos = nest[1] + 1
    out.append(body[pos:])
    return "".join(out)


def lane_arrays(ctx: Context, code: str) -> str | None:
    """Warp exchanges become one plain typed array per call site (see LANES_HEADER): stores and
    inline reads instead of 16-byte slots with round stamps."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        edits = []
        for m in _EXCHANGE.finditer(body):
            found = _exchange_edits(body, m[1], int(m[2]))
            if found is not None:
                edits += found
        if not edits:
            continue
        for start, end, text in sorted(edits, reverse=True):
            body = body[:start] + text + body[end:]
        body = _hoist_block_counts(body)
        code = C.with_body(code, k, body)
        changed = True
    if not changed:
        return None
    return C.with_support(code, LANES_HEADER)


# ---------------------------------------------------------------------------------------
# rounds of warp shuffles run warp by warp

WARP_LANES_HEADER = """// ---- tools.optimize: shuffles among the 32 lanes of one warp ----------------------------------
// in[l] is lane l's value of the current round (T{} for a lane that did not write or lies beyond
// the block), as cudacpu's WarpExchange reads it; width is a power of two <= 32.
#ifndef CUDAOPT_WARP_LANES
#define CUDAOPT_WARP_LANES
namespace cudaopt {
template <class T>
inline T lane_shfl(const T* in, unsigned lane, int src_lane, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int in_segment = ((src_lane % w) + w) % w;
  return in[lane - lane % static_cast<unsigned>(w) + static_cast<unsigned>(in_segment)];
}
template <class T>
inline T lane_shfl_up(const T* in, unsigned lane, unsigned delta, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int l = static_cast<int>(lane % static_cast<unsigned>(w));
  if (l - static_cast<int>(delta) < 0) return in[lane];
  return in[lane - static_cast<unsigned>(l) + static_cast<unsigned>(l - static_cast<int>(delta))];
}
template <class T>
inline T lane_shfl_down(const T* in, unsigned lane, unsigned delta, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int l = static_cast<int>(lane % static_cast<unsigned>(w));
  if (l + static_cast<int>(delta) >= w) return in[lane];
  return in[lane - static_cast<unsigned>(l) + static_cast<unsigned>(l + static_cast<int>(delta))];
}
template <class T>
inline T lane_shfl_xor(const T* in, unsigned lane, int lane_mask, int width = 32) {
  int w = width > 0 && width <= 32 ? width : 32;
  int l = static_cast<int>(lane % static_cast<unsigned>(w));
  int src = l ^ lane_mask;
  if (src < 0 || src >= w) return in[lane];
  return in[lane - static_cast<unsigned>(l) + static_cast<unsigned>(src)];
}
}  // namespace cudaopt
#endif  // CUDAOPT_WARP_LANES
"""

_TID_LINE = "const unsigned int tid = (tz * blockDim.y + ty) * blockDim.x + tx;"
_THREADIDX_LINE = "const uint3 threadIdx = make_uint3(tx, ty, tz);"
_ROUND_LOOP = re.compile(r"(?P<ind>[ \t]*)for \((?P<head>[^{};]*;[^{};]*;[^{}]*)\) \{\s*(?P<x>\w+)\.begin\((?P<site>\d+)\);")
_PERTHREAD = re.compile(r"cudacpu::PerThread<([^;]*)> (\w+)\(nthreads\);|cudaopt::(?:Id<([^;]*)>|Flag) (\w+)\[\d+\] = \{\};")
_POW2_WIDTHS = {"1", "2", "4", "8", "16", "32"}
_ASSIGN = re.compile(r"(?:\+\+|--)\s*(\w+)|(\w+)\s*(?:\[[^\]]*\])*\s*(?:\+\+|--|(?:[-+*/%&|^]|<<|>>)?=(?!=))")


def _nest_at(body: str, pos: int) -> tuple[int, int] | None:
    """(open, close) of the tx loop's braces when a full tz/ty/tx thread nest starts at pos."""
    m = _THREAD_NEST.match(body, pos)
    if m is None:
        return None
    return m.end() - 1, C.matching_brace(body, m.end() - 1)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in C.strip_comments(text).strip().split("\n") if line.strip()]


def _lane_private(text: str, perthread: set[str], local: set[str]) -> bool:
    """Every subscript is a per-thread array at [tid]; every write goes to one or to a local."""
    for m in re.finditer(r"(\w+)\s*\[", text):
        if m[1] not in perthread or not text.startswith("tid]", m.end()):
            return False
    for m in _ASSIGN.finditer(text):
        name = m[1] or m[2]
        if name not in perthread and name not in local:
            return False
    return "*" not in re.sub(r"[\w\])]\s*\*\s*[\w(]", "", text)  # no dereferences (only products)


def _round_loop(body: str, m: re.Match, perthread: set[str]) -> tuple[str, int, int] | None:
    """The per-warp form of one loop of shuffle rounds (see warp_rounds), or None."""
    x, site = m["x"], m["site"]
    open_i = body.index("{", m.start() + len(m["ind"]) + 4 + len(m["head"]))
    close = C.matching_brace(body, open_i)
    put = _nest_at(body, m.end())
    read = put and _nest_at(body, put[1] + 1)
    if not put or not read or body[read[1] + 1:close].strip():
        return None
    put_lines, read_lines = _lines(body[put[0] + 1:put[1]]), _lines(body[read[0] + 1:read[1]])
    if not put_lines or put_lines[0] != _TID_LINE:
        return None
    guard = put_lines[1] if len(put_lines) == 3 else None
    if guard is not None and not re.fullmatch(r"if \([^;]*\) continue;", guard):
        return None
    pm = re.fullmatch(rf"{x}\.put<([\w ]+)>\({site}, tid, (.*)\);", put_lines[-1], re.S)
    if pm is None or len(put_lines) > 3:
        return None
    t, value = pm[1], pm[2]
    if read_lines[:1] == [_THREADIDX_LINE]:
        read_lines = read_lines[1:]
    if read_lines[:1] != [_TID_LINE]:
        return None
    read_lines = read_lines[1:]
    if guard is not None:
        if read_lines[:1] != [guard]:
            return None
        read_lines = read_lines[1:]
    stmts = "\n".join(read_lines)
    calls = list(re.finditer(rf"cudacpu::(shfl|shfl_up|shfl_down|shfl_xor)<{re.escape(t)}>\({x}, {site}, tid, ", stmts))
    if len(calls) != 1 or len(re.findall(rf"\b{x}\b", stmts)) != 1 or stmts.count("cudacpu::") != 1:
        return None
    args = C.split_params(stmts[calls[0].end():C.call_end(stmts, calls[0].start() + calls[0][0].index("("))])
    if len(args) not in (1, 2) or (len(args) == 2 and args[1] not in _POW2_WIDTHS):
        return None
    if re.search(r"\b(return|break|continue|goto|atomic\w*|printf)\b", stmts):
        return None
    local = set(re.findall(r"\b[\w:]+\s+(\w+)\s*=", stmts))
    if not all(_lane_private(text, perthread, local) for text in (value, guard or "", stmts)):
        return None
    head_names = {a[1] or a[2] for a in _ASSIGN.finditer(m["head"])}
    if any((a[1] or a[2]) in head_names for a in _ASSIGN.finditer(stmts)):
        return None  # the threads write the round loop's own variable
    if re.search(rf"\b{x}\.(begin|put)\S*\({site}\b|\(\s*{x}, {site}\b", body[:m.start()] + body[close + 1:]):
        return None  # the site is used outside this loop too
    call_text = stmts[calls[0].start():C.call_end(stmts, calls[0].start() + calls[0][0].index("(")) + 1]
    lane_call = f"cudaopt::lane_{calls[0][1]}(cudaopt_in, cudaopt_l, {', '.join(args)})"
    hoist = not any(re.search(rf"\b{n}\b", ", ".join(args)) for n in local | {"tid", "tx", "ty", "tz", "threadIdx"})
    stmts = stmts.replace(call_text, "cudaopt_got[cudaopt_l]" if hoist else lane_call, 1)
    ind = m["ind"]
    coords = ""
    if re.search(r"\b(tx|ty|tz|threadIdx)\b", stmts):
        flat = "blockDim.y == 1 && blockDim.z == 1"  # then tid is threadIdx.x: no division
        coords = (f"{ind}            const unsigned int cudaopt_t = static_cast<unsigned int>(tid);\n"
                  f"{ind}            const unsigned int tx = {flat} ? cudaopt_t : cudaopt_t % blockDim.x;\n"
                  f"{ind}            const unsigned int ty = {flat} ? 0u : cudaopt_t / blockDim.x % blockDim.y;\n"
                  f"{ind}            const unsigned int tz = {flat} ? 0u : cudaopt_t / blockDim.x / blockDim.y;\n"
                  f"{ind}            {_THREADIDX_LINE}\n")
    skip = f"{ind}            {guard}\n" if guard else ""
    inner = "\n".join(f"{ind}            {line}" for line in stmts.split("\n"))
    lanes = f"{ind}        for (unsigned int cudaopt_l = 0; cudaopt_l < cudaopt_n; ++cudaopt_l) {{\n" \
            f"{ind}            const std::size_t tid = std::size_t(cudaopt_w) + cudaopt_l;\n"
    got = (f"{ind}        {t} cudaopt_got[32];  // the shuffle's result for every lane\n"
           f"{ind}        #pragma omp simd\n"
           f"{ind}        for (unsigned int cudaopt_l = 0; cudaopt_l < 32; ++cudaopt_l)\n"
           f"{ind}            cudaopt_got[cudaopt_l] = {lane_call};\n") if hoist else ""
    any_lane = (f"{ind}    bool cudaopt_any = false;  // some lane of the warp takes part\n"
                f"{ind}    for (unsigned int cudaopt_l = 0; cudaopt_l < cudaopt_n; ++cudaopt_l) {{\n"
                f"{ind}        const std::size_t tid = std::size_t(cudaopt_w) + cudaopt_l;\n"
                f"{ind}        {guard}\n"
                f"{ind}        cudaopt_any = true;\n"
                f"{ind}    }}\n"
                f"{ind}    if (!cudaopt_any) continue;\n") if guard else ""
    return (f"{ind}for (unsigned int cudaopt_w = 0; cudaopt_w < nthreads; cudaopt_w += 32) {{"
            f"  // tools.optimize: each warp runs all its rounds\n"
            f"{ind}    const unsigned int cudaopt_n = nthreads - cudaopt_w < 32u ? nthreads - cudaopt_w : 32u;  // its lanes in the block\n"
            f"{any_lane}"
            f"{ind}    for ({m['head']}) {{\n"
            f"{ind}        {t} cudaopt_in[32] = {{}};  // lanes that do not write (or lie beyond the block) read as {t}{{}}\n"
            f"{lanes}{skip}"
            f"{ind}            cudaopt_in[cudaopt_l] = {value};\n"
            f"{ind}        }}\n"
            f"{got}{lanes}{coords}{skip}{inner}\n"
            f"{ind}        }}\n"
            f"{ind}    }}\n"
            f"{ind}}}"), m.start(), close + 1


def warp_rounds(ctx: Context, code: str) -> str | None:
    """A loop whose every iteration is one round of a warp shuffle (`begin`, the lanes' puts,
    the lanes' reads: a shuffle reduction or scan) runs warp by warp: each warp keeps its 32
    lanes' values of a round in a local array and runs all rounds before the next warp. Only
    where the threads touch nothing but their own per-thread values (so warps are independent);
    the order of every lane's operations is the original one."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        # per-thread values, not pointers (a pointer may lead to memory other lanes see)
        perthread = {n1 or n2 for t1, n1, t2, n2 in _PERTHREAD.findall(body) if "*" not in t1 + t2}
        found = []
        for m in _ROUND_LOOP.finditer(body):
            got = _round_loop(body, m, perthread)
            if got is not None:
                found.append(got)
        if not found:
            continue
        for text, start, end in sorted(found, key=lambda f: f[1], reverse=True):
            body = body[:start] + text + body[end:]
        code = C.with_body(code, k, body)
        changed = True
    if not changed:
        return None
    return C.with_support(code, WARP_LANES_HEADER)


# ---------------------------------------------------------------------------------------
# per-thread copies as arrays on the stack

PERTHREAD_HEADER = """// ---- tools.optimize: per-thread copies as arrays on the stack ---------------------------------
#ifndef CUDAOPT_STACK_PERTHREAD
#define CUDAOPT_STACK_PERTHREAD
namespace cudaopt {
template <class T>
using Id = T;  // so that `Id<float[4]> v[N]` declares N arrays of 4 floats
// A bool kept in a byte that g++ vectorizes masks with (bool arrays often stop it).
struct Flag {
  unsigned char v;
  Flag& operator=(bool b) { v = b; return *this; }
  Flag& operator|=(bool b) { v = v | b; return *this; }
  Flag& operator&=(bool b) { v = v & b; return *this; }
  Flag& operator^=(bool b) { v = v ^ b; return *this; }
  operator bool() const { return v != 0; }
};
inline bool any_thread(const Flag* in_loop, std::size_t nthreads, const Flag* exited = nullptr) {
  for (std::size_t t = 0; t < nthreads; ++t)
    if (in_loop[t] && !(exited && exited[t])) return true;
  return false;
}
}  // namespace cudaopt
#endif  // CUDAOPT_STACK_PERTHREAD
"""
_STACK_LIMIT = 256 * 1024  # bytes of per-thread copies one OpenMP thread may keep on its stack


def _value_bytes(t: str) -> int:
    """A generous size of a value of type t (its array extents multiplied)."""
    n = 1
    for extent in re.findall(r"\[(\d+)\]", t):
        n *= int(extent)
    return 16 * n


def perthread_stack(ctx: Context, code: str) -> str | None:
    """Per-thread copies (values live across a barrier) become arrays sized by the task's largest
    block, declared where `cudacpu::PerThread` was (one per OpenMP thread, zero-initialised): g++
    then knows they alias no kernel argument, keeps them in registers across inner loops and
    vectorizes the thread loops. A launch with a larger block stops with a message."""
    changed = False
    for k in reversed(C.kernels(code)):
        block = ctx.largest_block(k.name)
        if not block:
            continue
        body = k.body(code)
        decls = list(_PERTHREAD_DECL.finditer(body))
        head = "const unsigned int nthreads = blockDim.x * blockDim.y * blockDim.z;"
        if not decls or head not in body or sum(_value_bytes(m[1]) for m in decls) * block > _STACK_LIMIT:
            continue
        new = body
        for m in decls:
            name = m[2]
            kind = "cudaopt::Flag" if m[1].strip() == "bool" else f"cudaopt::Id<{m[1]}>"
            new = new.replace(m[0], f"{kind} {name}[{block}] = {{}};", 1)
            new = re.sub(rf"\b{name}\.fill\(([^;]*)\);",
                         lambda f: f"for (unsigned int cudaopt_i = 0; cudaopt_i < nthreads; ++cudaopt_i) {name}[cudaopt_i] = {f[1]};",
                         new)
            new = re.sub(rf"cudacpu::any_thread\({name}, nthreads(?:, &(\w+))?\)",
                         lambda a: f"cudaopt::any_thread({name}, nthreads{', ' + a[1] if a[1] else ''})", new)
        uses_ok = all(_only_indexed(new, m[2]) for m in decls)
        if not uses_ok:
            continue
        new = _WIDE_TID.sub(r"const std::size_t \1 = (std::size_t(\2) * blockDim.y + \3) * blockDim.x + \4;", new)
        check = f'if (nthreads > {block}u) cudacpu::unsupported("{k.name}: optimized for blocks of at most {block} threads");'
        new = new.replace(head, f"{head}\n    {check}", 1)
        code = C.with_body(code, k, new)
        changed = True
    if not changed:
        return None
    return C.with_support(code, PERTHREAD_HEADER)


def _only_indexed(body: str, name: str) -> bool:
    """Every use of `name` is a subscript or an argument of cudaopt::any_thread (a qualified name,
    such as the runtime's `cudacpu::any`, or a member is another entity)."""
    for u in _code_positions(body, rf"(?<![\w.'])(?<!::)(?<!->){name}\b"):
        after = body[u.end():u.end() + 12]
        if not (after.startswith("[") or after.startswith(", nthreads") or
                re.match(r"\)", after) and body[:u.start()].rstrip().endswith(",")):
            return False
    return True


# The thread's linear id as a 64-bit index: g++ then sees the per-thread arrays' accesses as affine
# (an unsigned 32-bit sum may wrap) and vectorizes the thread loops over them.
_WIDE_TID = re.compile(r"const unsigned int (tid\w*) = \((tz\w*) \* blockDim\.y \+ (ty\w*)\) \* blockDim\.x \+ (tx\w*);")
_PERTHREAD_DECL = re.compile(r"cudacpu::PerThread<([^;]*)> (\w+)\(nthreads\);")


# ---------------------------------------------------------------------------------------
# atomics on a block's own shared memory as plain read-modify-writes

PLAIN_ATOMICS_HEADER = """// ---- tools.optimize: atomics on a block's shared memory ---------------------------------------
// A block runs on one OpenMP thread, its threads one after another: a plain read-modify-write of
// its own shared memory is atomic for them. Same overloads and results as cuda_cpu's atomics
// (integer arithmetic wraps as the __atomic builtins do).
#ifndef CUDAOPT_PLAIN_ATOMICS
#define CUDAOPT_PLAIN_ATOMICS
namespace cudaopt {
namespace plain {
template <class T>
inline T wrap(T a, T b, bool subtract) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(subtract ? static_cast<U>(a) - static_cast<U>(b) : static_cast<U>(a) + static_cast<U>(b));
  } else {
    return subtract ? a - b : a + b;
  }
}
template <class T, class F>
inline T rmw(T* a, F f) {
  T old = *a;
  *a = f(old);
  return old;
}
#define CUDAOPT_PLAIN(name, T, expr) \\
  inline T name(T* a, T v) { return rmw(a, [v](T old) { (void)v; return static_cast<T>(expr); }); }
CUDAOPT_PLAIN(atomicAdd, int, wrap(old, v, false))
CUDAOPT_PLAIN(atomicAdd, unsigned int, wrap(old, v, false))
CUDAOPT_PLAIN(atomicAdd, unsigned long long, wrap(old, v, false))
CUDAOPT_PLAIN(atomicAdd, float, old + v)
CUDAOPT_PLAIN(atomicAdd, double, old + v)
CUDAOPT_PLAIN(atomicSub, int, wrap(old, v, true))
CUDAOPT_PLAIN(atomicSub, unsigned int, wrap(old, v, true))
CUDAOPT_PLAIN(atomicExch, int, v)
CUDAOPT_PLAIN(atomicExch, unsigned int, v)
CUDAOPT_PLAIN(atomicExch, unsigned long long, v)
CUDAOPT_PLAIN(atomicExch, float, v)
CUDAOPT_PLAIN(atomicMin, int, v < old ? v : old)
CUDAOPT_PLAIN(atomicMin, unsigned int, v < old ? v : old)
CUDAOPT_PLAIN(atomicMin, unsigned long long, v < old ? v : old)
CUDAOPT_PLAIN(atomicMin, long long, v < old ? v : old)
CUDAOPT_PLAIN(atomicMax, int, v > old ? v : old)
CUDAOPT_PLAIN(atomicMax, unsigned int, v > old ? v : old)
CUDAOPT_PLAIN(atomicMax, unsigned long long, v > old ? v : old)
CUDAOPT_PLAIN(atomicMax, long long, v > old ? v : old)
CUDAOPT_PLAIN(atomicInc, unsigned int, old >= v ? 0u : old + 1u)
CUDAOPT_PLAIN(atomicDec, unsigned int, (old == 0u || old > v) ? v : old - 1u)
CUDAOPT_PLAIN(atomicAnd, int, old & v)
CUDAOPT_PLAIN(atomicAnd, unsigned int, old & v)
CUDAOPT_PLAIN(atomicAnd, unsigned long long, old & v)
CUDAOPT_PLAIN(atomicOr, int, old | v)
CUDAOPT_PLAIN(atomicOr, unsigned int, old | v)
CUDAOPT_PLAIN(atomicOr, unsigned long long, old | v)
CUDAOPT_PLAIN(atomicXor, int, old ^ v)
CUDAOPT_PLAIN(atomicXor, unsigned int, old ^ v)
CUDAOPT_PLAIN(atomicXor, unsigned long long, old ^ v)
#undef CUDAOPT_PLAIN
template <class T>
inline T cas(T* a, T compare, T v) { T old = *a; if (old == compare) *a = v; return old; }
inline int atomicCAS(int* a, int c, int v) { return cas(a, c, v); }
inline unsigned int atomicCAS(unsigned int* a, unsigned int c, unsigned int v) { return cas(a, c, v); }
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long c, unsigned long long v) { return cas(a, c, v); }
inline unsigned short atomicCAS(unsigned short* a, unsigned short c, unsigned short v) { return cas(a, c, v); }
}  // namespace plain
}  // namespace cudaopt
#endif  // CUDAOPT_PLAIN_ATOMICS
"""
_ATOMIC_CALL = re.compile(r"(?<![\w.:>])(atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|And|Or|Xor|CAS))(?:_block)?\(")
_SIMD_TX = re.compile(r"#pragma omp simd\s*for \(unsigned int tx = 0; tx < blockDim\.x; \+\+tx\) \{")


def _in_simd_loop(body: str, pos: int) -> bool:
    """Is pos inside a thread loop marked `#pragma omp simd` (where lanes run together)?"""
    for m in _SIMD_TX.finditer(body, 0, pos):
        if C.matching_brace(body, m.end() - 1) > pos:
            return True
    return False


def shared_atomics_plain(ctx: Context, code: str) -> str | None:
    """Atomics whose target is the block's own `__shared__` memory become plain read-modify-
    writes (same overloads, same results): the block's threads run one after another on one
    OpenMP thread. Not where the call sits in a `#pragma omp simd` thread loop."""
    changed = False
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        shared = {a or b for a, b in C.SHARED_DECL.findall(body)}
        if not shared or "cudaopt::plain::" in body:
            continue
        edits = []
        for m in _ATOMIC_CALL.finditer(body):
            target = C.split_params(body[m.end():C.call_end(body, m.end() - 1)])[0]
            name = re.match(r"&?\s*\(?\s*(\w+)", target)
            if name is None or name[1] not in shared or _in_simd_loop(body, m.start()):
                continue
            if not re.fullmatch(rf"&\s*{name[1]}(\[.*\])?|{name[1]}(\s*\+.*)?", target, re.S):
                continue
            edits.append((m.start(), m.end(), f"cudaopt::plain::{m[1]}("))
        if not edits:
            continue
        for start, end, text in reversed(edits):
            body = body[:start] + text + body[end:]
        code = C.with_body(code, k, body)
        changed = True
    if not changed:
        return None
    return C.with_support(code, PLAIN_ATOMICS_HEADER)


def sync_together(ctx: Context, code: str) -> str:
    """Every one of the transformations below that applies, as one variant (tried first: they
    remove different emulation and gain more together than one by one)."""
    return together(ctx, code, SYNC_TRANSFORMS[1:])


SYNC_TOGETHER = Transform("sync_together", "warp rounds per warp, plain shared atomics, lane arrays, stack per-thread "
                          "copies, uniform loop exits, direct shuffle reads, live lanes only and own-lane loops vectorized, "
                          "together", sync_together)
WARP_ROUNDS = Transform("warp_rounds", "loops of warp-shuffle rounds run warp by warp on a local array of the 32 lanes",
                        warp_rounds)
SHARED_ATOMICS_PLAIN = Transform("shared_atomics_plain", "atomics on a block's own shared memory as plain read-modify-writes",
                                 shared_atomics_plain)
LANE_ARRAYS = Transform("lane_arrays", "warp exchanges as plain per-site lane arrays (no round stamps, inline reads)",
                        lane_arrays)
PERTHREAD_STACK = Transform("perthread_stack", "per-thread copies as stack arrays sized by the task's largest block",
                            perthread_stack)
SYNC_TRANSFORMS: list[Transform] = [SYNC_TOGETHER, WARP_ROUNDS, SHARED_ATOMICS_PLAIN, LANE_ARRAYS, PERTHREAD_STACK, UNIFORM_EXITS,
                                    DIRECT_SHUFFLES, LIVE_LANES, OWN_LANE_SIMD]
