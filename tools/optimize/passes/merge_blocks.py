"""merge_blocks: consecutive blocks run together as the lanes of one SIMD loop (issue 8: "thread
coarsening and block merging").

A launch of many small blocks whose reads run contiguously across blockIdx.x (TVM's reductions
over a leading axis: 16 threads per block, `x[k * cols + blockIdx.x]`) spends its time on each
block's short thread loops, and its loads are strided within a block but contiguous across
blocks. Merging V consecutive blocks makes each thread loop's body run for the V blocks in an
`omp simd` loop: the loads become vector loads, and the per-block overhead is paid once per V.
Each merged block keeps its own copy of the per-thread and shared state (one more subscript,
innermost), so the V blocks never see each other's values.

Exact: each block still runs its phases (the thread loops between barriers) in order, and a
phase of block b reads only block b's state, which earlier phases of block b wrote; blocks of a
launch are independent in CUDA (no ordering between them), and kernels with atomics, warp
exchanges, dynamic shared memory or jumps out of a thread's body are left alone.
"""

from __future__ import annotations

import re

from ..analysis import code as C
from ..analysis.block_nest import BLOCK_NEST, PARALLEL_FOR, PERTHREAD_DECL, REGION_FOR, SHARED_ARRAY_DECL
from ..analysis.machine import vector_bytes
from ..base import Context, NotApplicable, Transform

# the reads that make merging pay: a subscript ending in `+ blockIdx.x` (unit stride across blocks)
_UNIT_STRIDE = re.compile(r"\+\s*\(*(?:\(int\))?\(*blockIdx\.x\)*\s*\]")
_THREAD_NEST = re.compile(r"for \(unsigned int tz = [^;]*; tz < [^;]*; \+\+tz\)\s*for \(unsigned int ty = [^;]*; ty < [^;]*; "
                          r"\+\+ty\)\s*(?P<simd>#pragma omp simd\s*)?for \(unsigned int tx = [^;]*; tx < [^;]*; \+\+tx\) \{")
_THREAD_HEAD = re.compile(r"\s*(?:const uint3 threadIdx = [^;]*;|const (?:std::size_t|unsigned int) tid = [^;]*;)")
# what a thread's body may not hold: jumps out of it, OpenMP constructs, atomics and the
# lowering's runtime objects (warp exchanges, barriers, dynamic shared memory)
_REFUSED = re.compile(r"\b(?:break|return|goto|atomic\w*|__sync\w*|cudacpu::\w+|omp)\b|#pragma")
_REFUSED_SERIAL = re.compile(r"\b(?:return|goto|atomic\w*|__sync\w*)\b")
_UNIFORM_LOOP = re.compile(r"for \((?:int|unsigned int|unsigned|std::size_t) \w+ = [^;]*;[^;]*;[^)]*\) \{")
_BLOCK_DEPENDENT = re.compile(r"\b(?:bx|blockIdx|tid|tx|ty|tz)\b|\[")  # a subscript may read per-block state
_DECLARATION = re.compile(r"(?:const\s+)?[\w:]+(?:\s+[\w:]+)*\s+\w+\s*=[^;{]*;")
_COMPOUND = re.compile(r"(?:#pragma[^\n]*\n\s*)*(?:(?:for|if|while|switch)\b|\{)")
_CAST_BEFORE = re.compile(r"\(\((?:volatile\s+)?[\w\s]+\*\)$")
_STACK_BYTES = 1 << 18  # merged per-thread arrays live on each OpenMP thread's stack


def merge_blocks(ctx: Context, code: str) -> str | None:
    changed, why = False, []
    for k in reversed(C.kernels(code)):
        body = k.body(code)
        if (refused := _refusal(body)) is not None:
            why.append(f"{k.name}: {refused}")
            continue
        new = _kernel(body, _lanes())
        if new is None:
            why.append(f"{k.name}: its block's body holds statements that blocks cannot run as lanes together")
            continue
        code, changed = C.with_body(code, k, new), True
    if not changed:
        raise NotApplicable("; ".join(why) or "no kernel")
    return code


def _refusal(body: str) -> str | None:
    """Why the kernel is not one merge_blocks knows how to merge, at a glance; None if it may be."""
    if len(BLOCK_NEST.findall(body)) != 1:
        return "not one loop over the blocks"
    if not _UNIT_STRIDE.search(body):
        return "no read is contiguous across blockIdx.x (nothing to gain from running blocks as lanes)"
    if "dynamicSharedBytes)" in body:
        return "it uses dynamic shared memory"
    return None


def _lanes() -> int:
    return max(8, vector_bytes() // 4)


def _kernel(body: str, lanes: int) -> str | None:
    nest = next(BLOCK_NEST.finditer(body))
    line_start = body.rfind("\n", 0, nest.start()) + 1
    pragma_start = body.rfind("\n", 0, line_start - 1) + 1
    if body[pragma_start:line_start].strip() not in (REGION_FOR, PARALLEL_FOR) or (nest["bx"], nest["by"], nest["bz"]) != (
            "bx", "by", "bz"):
        return None
    open_brace = nest.end() - 1
    close = C.matching_brace(body, open_brace)
    block = _merged_block(body[open_brace + 1:close], lanes)
    if block is None:
        return None
    state = {m["pname"] or m["sname"]: m for m in PERTHREAD_DECL.finditer(body[:pragma_start])}
    shared = {m["name"]: m["decl"].count("[") for m in SHARED_ARRAY_DECL.finditer(block)}
    dims = {name: 1 for name in state} | shared
    block = _with_lane_subscripts(block, dims, lanes)
    if block is None or any(re.search(rf"(?<![\w.]){name}\b", body[close:]) for name in state):
        return None
    head = _with_merged_state(body[:pragma_start], state, lanes)
    if head is None:
        return None
    loop = (f"for (unsigned int cudaopt_bx0 = 0; cudaopt_bx0 < gridDim.x; cudaopt_bx0 += {lanes}) {{  "
            f"// tools.optimize: {lanes} blocks at a time, as SIMD lanes\n"
            f"{C.indent_at(body, open_brace)}    const unsigned int cudaopt_nv = gridDim.x - cudaopt_bx0 < {lanes}u ? "
            f"gridDim.x - cudaopt_bx0 : {lanes}u;")
    bx_loop = body.rindex("for (unsigned int bx", nest.start(), open_brace)
    return head + body[pragma_start:bx_loop] + loop + block + body[close:]


def _merged_block(block: str, lanes: int) -> str | None:
    """The block's body with every thread loop's body run for the merged blocks in a SIMD loop;
    a loop around thread loops whose header no block index reaches is entered (its trips are the
    same for all merged blocks), any other compound statement runs once per merged block. None
    where the body declares anything but the block index, shared arrays and values no block
    index reaches."""
    out, pos, i = [], 0, C.skip_space(block, 0)
    while i < len(block):
        end = C.statement_span(block, i)
        if end is None:
            return None
        text = block[i:end]
        nest = _THREAD_NEST.match(text)
        uniform = _UNIFORM_LOOP.match(text)
        if text == "const uint3 blockIdx = make_uint3(bx, by, bz);":
            out.append(block[pos:i].rstrip(" \t"))
            pos = end
        elif SHARED_ARRAY_DECL.match(text + "  // __shared__: one per block") and block[end:].startswith("  // __shared__"):
            pass
        elif _DECLARATION.fullmatch(text) and not _BLOCK_DEPENDENT.search(text):
            pass  # the same value for every merged block
        elif nest is not None:
            merged = _merged_nest(text, nest, lanes)
            if merged is None:
                return None
            out.append(block[pos:i] + merged)
            pos = end
        elif uniform is not None and _THREAD_NEST.search(text) and not _BLOCK_DEPENDENT.search(uniform[0]) and (
                C.matching_brace(text, uniform.end() - 1) == len(text) - 1):
            inner = _merged_block(text[uniform.end():-1], lanes)
            if inner is None:
                return None
            out.append(block[pos:i] + text[:uniform.end()] + inner + "}")
            pos = end
        elif _COMPOUND.match(text) and not _REFUSED_SERIAL.search(C.strip_comments(text)):
            indent = C.indent_at(block, i)
            out.append(block[pos:i] + f"for (unsigned int cudaopt_v = 0; cudaopt_v < cudaopt_nv; ++cudaopt_v) {{  "
                       f"// tools.optimize: once per merged block\n{indent}    const unsigned int bx = cudaopt_bx0 + cudaopt_v;"
                       f"\n{indent}    const uint3 blockIdx = make_uint3(bx, by, bz);\n{indent}    "
                       + text.replace("\n", "\n    ") + f"\n{indent}}}")
            pos = end
        else:
            return None
        i = C.skip_space(block, end)
    return "".join(out) + block[pos:]


def _merged_nest(text: str, nest: re.Match, lanes: int) -> str | None:
    open_brace = nest.end() - 1
    close = C.matching_brace(text, open_brace)
    if close != len(text) - 1:
        return None
    head = _THREAD_HEAD.match(text, open_brace + 1)
    start = open_brace + 1
    while head is not None:
        start = head.end()
        head = _THREAD_HEAD.match(text, start)
    inner = text[start:close]
    if _REFUSED.search(C.strip_comments(inner)):
        return None
    indent = C.indent_at(text, close) + "    "
    lanes_loop = (f"\n{indent}#pragma omp simd\n{indent}for (unsigned int cudaopt_v = 0; cudaopt_v < cudaopt_nv; ++cudaopt_v) {{\n"
                  f"{indent}    const unsigned int bx = cudaopt_bx0 + cudaopt_v;\n"
                  f"{indent}    const uint3 blockIdx = make_uint3(bx, by, bz);")
    simd = nest["simd"]
    outer = text[:open_brace + 1] if simd is None else text[:nest.start("simd")] + text[nest.end("simd"):open_brace + 1]
    return outer + text[open_brace + 1:start] + lanes_loop + inner.replace("\n", "\n    ") + f"}}\n{indent[:-4]}}}"


def _with_lane_subscripts(block: str, dims: dict[str, int], lanes: int) -> str | None:
    """Every use of a merged array with `[cudaopt_v]` after its own subscripts (a shared array's
    declaration with `[lanes]`); None where one is used otherwise (whole, or with fewer
    subscripts)."""
    for name, count in dims.items():
        block = _flat_casts(block, name, lanes) if count == 1 else block
        out, pos = [], 0
        for m in re.finditer(rf"(?<![\w.]){name}\b", block):
            if m.start() < pos or (block.startswith(")[", m.end()) and _CAST_BEFORE.search(block, 0, m.start())):
                continue  # a cast pointer's subscript, flattened by _flat_casts
            i = m.end()
            for _ in range(count):
                if i >= len(block) or block[i] != "[":
                    return None
                i = C.call_end(block, i) + 1
            declared = re.search(r"__shared__", block[i:block.find("\n", i)])
            out += [block[pos:i], f"[{lanes}]" if declared else "[cudaopt_v]"]
            pos = i
        block = "".join(out) + block[pos:]
    return block


def _flat_casts(block: str, name: str, lanes: int) -> str:
    """`((volatile float*)a)[i]` (TVM's reads of a shared array through a cast pointer) for
    `a[n][lanes]`: element i of merged block v sits at i * lanes + v."""
    out, pos = [], 0
    for m in re.finditer(rf"\(\((?:volatile\s+)?[\w\s]+\*\){name}\)\[", block):
        close = C.call_end(block, m.end() - 1)
        out += [block[pos:m.end()], f"({block[m.end():close]}) * {lanes} + cudaopt_v"]
        pos = close
    return "".join(out) + block[pos:]


def _with_merged_state(head: str, state: dict[str, re.Match], lanes: int) -> str | None:
    """The per-thread declarations before the block loop with one copy per merged block."""
    for name, m in state.items():
        if m["pname"]:
            if "[" in m["ptype"]:
                return None  # T[lanes] would put the lanes before the array's own extent
            new = f"cudacpu::PerThread<{m['ptype']}[{lanes}]> {name}(nthreads);"
        else:
            if int(m["n"]) * lanes * 16 > _STACK_BYTES:
                return None
            new = f"{m['stack']} {name}[{m['n']}][{lanes}] = {{}};"
        head = head.replace(m[0], new, 1)
    return head


MERGE_BLOCKS = Transform("merge_blocks", "consecutive blocks run together as SIMD lanes (reads contiguous across "
                         "blockIdx.x)", merge_blocks)
