"""The one printer of the lowered kernel's IR (kernel_ir.py) as C++ text with OpenMP.

`print_kernel(kernel)` is the lowered function; `print_nodes(nodes, kernel, indent)` the lines of
block-level nodes (the lowering reads them to see which `__shared__` buffers the body names).
The leaves are text (see kernel_ir.py), so what a region or the block needs declared (`threadIdx`,
the flat thread id, `blockIdx`, the thread count) and whether a region may be `#pragma omp simd`
are read from the printed leaves.
"""

from __future__ import annotations

import re

from .kernel_ir import (AnyThread, Assign, BarrierCheck, Declare, ExchangePut, GridBarrier, If, Jump, Kernel, LockstepLoad,
                        LockstepStore, Loop, LoopCondition, Mask, Region, ResetFlag, Scope, SetFlag, Statement,
                        Symbol)

INDENT = "    "
GRID_BARRIER = "cudacpu_grid"  # the launch's cudacpu::GridBarrier, shared by its blocks
# Calls and statements a `#pragma omp simd` loop must not run: they have effects in order, or jump.
_NOT_SIMD = re.compile(r"\b(atomic\w*|printf|fprintf|goto|asm|__threadfence\w*|put|rand|malloc|new)\b")


def reindent(text: str, column: int, indent: str) -> list[str]:
    """A statement written at `column` (1-based) of its file, as lines at `indent`."""
    lines = text.split("\n")
    out = [indent + lines[0].strip()]
    cut = max(column - 1, 0)
    if lines[0].lstrip().startswith("#") and len(lines) > 1:  # a pragma before the statement
        cut = len(lines[1]) - len(lines[1].lstrip(" \t"))
    for line in lines[1:]:
        lead = len(line) - len(line.lstrip(" \t"))
        out.append(indent + line[min(lead, cut):].rstrip())
    return out


def declarator(type_text: str, name: str) -> str:
    """`float[4]` + `v` -> `float v[4]`; `float (*)[4]` + `p` -> `float (*p)[4]`."""
    if "[" in type_text:
        i = type_text.index("[")
        return f"{type_text[:i].rstrip()} {name}{type_text[i:]}"
    if "(*)" in type_text:
        return type_text.replace("(*)", f"(*{name})", 1)
    return f"{type_text} {name}"


def ref(var: Symbol, tid: str | None) -> str:
    """How a thread reads the variable: its copy (`v[tid]`, `(*v[tid])` for a reference) or its name."""
    if var.per_thread:
        assert tid is not None, f"per-thread variable {var.name} read at block level"
        return f"(*{var.name}[{tid}])" if var.reference else f"{var.name}[{tid}]"
    return var.name


def bind(var: Symbol, tid: str | None, value: str) -> str:
    """The per-thread copy takes its initial value (a reference: its address)."""
    if var.reference:
        return f"{var.name}[{tid}] = &({value});"
    return f"{ref(var, tid)} = {value};"


def _took(masks: list[Mask], tid: str) -> str:
    return " && ".join(f"{'' if m.taken else '!'}{m.flag.name}[{tid}]" for m in masks)


# ---- thread-level nodes ---------------------------------------------------------------------


def print_thread_node(node, indent: str, tid: str, kernel: Kernel) -> list[str]:
    n = kernel.names
    if isinstance(node, Statement):
        return reindent(node.text, node.column, indent)
    if isinstance(node, Declare):
        if node.var.per_thread:
            return [indent + bind(node.var, tid, node.value)]
        return [f"{indent}{declarator(node.var.type, node.var.name)} = {node.value};"]
    if isinstance(node, Assign):
        if node.var.per_thread:
            return [f"{indent}{ref(node.var, tid)} = {node.value};"]
        return [f"{indent}{declarator(node.var.type, node.var.name)} = {node.value};"]
    if isinstance(node, SetFlag):
        return [f"{indent}{ref(node.flag, tid)} = {node.value};"]
    if isinstance(node, LoopCondition):
        return [f"{indent}if ({ref(node.flag, tid)}) {ref(node.flag, tid)} = {node.condition};"]
    if isinstance(node, LockstepLoad):
        return [f"{indent}{ref(node.temporary, tid)} = {node.value};"]
    if isinstance(node, LockstepStore):
        return [f"{indent}{node.target} = {ref(node.temporary, tid)};"]
    if isinstance(node, ExchangePut):
        if node.value_type is None:
            return [f"{indent}{n.warp}.put({node.site}, {tid}, static_cast<int>(({node.value}) != 0));"]
        return [f"{indent}{n.warp}.put<{node.value_type}>({node.site}, {tid}, {node.value});"]
    raise TypeError(f"not a thread-level node: {node!r}")


# ---- block-level nodes ----------------------------------------------------------------------


def region_body(r: Region, kernel: Kernel) -> list[str]:
    """The lines a region's thread loop runs (at column 0, before the label and the thread's
    coordinates): empty where the region prints no loop nest."""
    body = list(r.recomputed)
    for item in r.items:
        body += print_thread_node(item, "", kernel.names.tid, kernel)
    return body if any(line.strip() for line in body) else []


def region_is_simd(r: Region, kernel: Kernel) -> bool:
    """Whether the region's thread loop may be `#pragma omp simd`: no call or statement with
    effects in order (atomics, I/O, asm, ...) and no jump to the end of the thread's iteration."""
    return not r.needs_label and not _NOT_SIMD.search("\n".join(region_body(r, kernel)))


def print_region(r: Region, indent: str, kernel: Kernel) -> list[str]:
    n = kernel.names
    tid = n.tid
    inner = indent + " " * 12
    body = [inner + text for text in r.recomputed]
    for item in r.items:
        body += print_thread_node(item, inner, tid, kernel)
    hoisted = [indent + text for text in r.hoisted]
    if not any(line.strip() for line in body):
        return hoisted
    if r.needs_label:
        body = [inner + "{"] + [INDENT + line for line in body] + [inner + "}", inner + f"{r.label}:;"]
    text = "\n".join(body)
    guards = []
    if kernel.exit_flags is not None:
        guards.append(f"if ({n.exited}[{tid}]) continue;")
    for mask in r.guards:
        guards.append(f"if ({'!' if mask.taken else ''}{mask.flag.name}[{tid}]) continue;")
    if r.sets_coordinates or (kernel.sets_coordinates and re.search(r"\w+\(", text)):
        guards.append("::threadIdx = threadIdx;")
    uses_tid = bool(guards and any(tid in g for g in guards)) or re.search(rf"\b{tid}\b", text)
    uses_idx = re.search(r"\bthreadIdx\b", text) or any("threadIdx" in g for g in guards)
    head = []
    if uses_idx:
        head.append(inner + f"const uint3 threadIdx = make_uint3({n.tx}, {n.ty}, {n.tz});")
    if uses_tid:
        head.append(inner + f"const unsigned int {tid} = ({n.tz} * blockDim.y + {n.ty}) * blockDim.x + {n.tx};")
    head += [inner + g for g in guards]
    simd = region_is_simd(r, kernel)
    pragma = "#pragma omp parallel for simd schedule(static)" if kernel.parallel_threads else "#pragma omp simd"
    lines = hoisted + [f"{indent}{n.warp}.begin({s});" for s in r.exchange_begins]
    lines.append(f"{indent}for (unsigned int {n.tz} = 0; {n.tz} < blockDim.z; ++{n.tz})")
    lines.append(f"{indent}    for (unsigned int {n.ty} = 0; {n.ty} < blockDim.y; ++{n.ty})")
    if simd:
        lines.append(f"{indent}        {pragma}")
    lines.append(f"{indent}        for (unsigned int {n.tx} = 0; {n.tx} < blockDim.x; ++{n.tx}) {{")
    lines += head + body
    lines.append(f"{indent}        }}")
    return lines


def _barrier_check(check: BarrierCheck, indent: str, kernel: Kernel) -> list[str]:
    n = kernel.names
    t = n.tid
    skip = f"if ({n.exited}[{t}]) continue; " if kernel.exit_flags is not None else ""
    where = check.where.replace("\\", "\\\\").replace('"', '\\"')
    return [f"{indent}{{",
            f"{indent}    unsigned int reached = 0, alive = 0;",
            f"{indent}    for (unsigned int {t} = 0; {t} < {n.nthreads}; ++{t}) {{ {skip}++alive; reached += {_took(check.masks, t)}; }}",
            f"{indent}    if (reached != 0 && reached != alive) cudacpu::divergent_barrier(\"{where}\", reached, alive);",
            f"{indent}}}"]


def print_nodes(nodes: list, kernel: Kernel, indent: str = INDENT * 4) -> list[str]:
    """The lines of block-level nodes at `indent`."""
    n = kernel.names
    out: list[str] = []
    deeper = indent + INDENT
    for it in nodes:
        if isinstance(it, Region):
            out += print_region(it, indent, kernel)
        elif isinstance(it, Scope):
            out += [indent + "{"] + print_nodes(it.items, kernel, deeper) + [indent + "}"]
        elif isinstance(it, If):
            out.append(f"{indent}if ({it.condition}) {{")
            out += print_nodes(it.then, kernel, deeper)
            if it.orelse is not None:
                out.append(f"{indent}}} else {{")
                out += print_nodes(it.orelse, kernel, deeper)
            out.append(indent + "}")
        elif isinstance(it, Loop):
            cond = it.condition or ""
            if it.kind == "for":
                init = (it.init or "").rstrip().rstrip(";")
                out.append(f"{indent}for ({init}; {cond}; {it.increment or ''}) {{")
                out += print_nodes(it.body, kernel, deeper) + [indent + "}"]
            elif it.kind == "while":
                out.append(f"{indent}while ({cond or 'true'}) {{")
                out += print_nodes(it.body, kernel, deeper) + [indent + "}"]
            else:
                out.append(f"{indent}do {{")
                out += print_nodes(it.body, kernel, deeper) + [f"{indent}}} while ({cond});"]
        elif isinstance(it, Jump):
            out.append(f"{indent}{it.kind};")
        elif isinstance(it, ResetFlag):
            out.append(f"{indent}{it.flag.name}.fill(false);")
        elif isinstance(it, BarrierCheck):
            out += _barrier_check(it, indent, kernel)
        elif isinstance(it, GridBarrier):
            out.append(f"{indent}{GRID_BARRIER}.wait();")
        elif isinstance(it, AnyThread):
            exited = f", &{n.exited}" if kernel.exit_flags is not None else ""
            out.append(f"{indent}if (!cudacpu::any_thread({it.flag.name}, {n.nthreads}{exited})) break;")
        else:
            raise TypeError(f"not a block-level node: {it!r}")
    return out


# ---- the kernel -------------------------------------------------------------------------------


def _shared_lines(kernel: Kernel) -> list[str]:
    n = kernel.names
    out = []
    for buf in kernel.shared:
        if buf.dynamic:
            elem = buf.element_type
            out.append(f"{elem}* {buf.symbol.name} = {n.dynamic_shared}.as<{elem}>();  // extern __shared__")
        else:
            out.append(f"{buf.declaration};  // __shared__: one per block")
    return out


def signature(kernel: Kernel) -> str:
    shared = "dynamicSharedBytes" if kernel.dynamic_shared is not None else "/*dynamicSharedBytes*/"
    extra = ", " + kernel.parameters_as_written if kernel.parameters_as_written else ""
    return f"{kernel.template_header}void {kernel.name}(dim3 gridDim, dim3 blockDim, std::size_t {shared}{extra})"


def print_kernel(kernel: Kernel) -> str:
    """The lowered kernel as C++: the grid's blocks as an OpenMP loop, each block's regions inside."""
    n = kernel.names
    body = print_nodes(kernel.body, kernel)
    state = [f"cudacpu::PerThread<{p.element_type}> {p.symbol.name}({n.nthreads});" for p in kernel.per_thread]
    if kernel.exit_flags is not None:
        state.append(f"cudacpu::PerThread<{kernel.exit_flags.element_type}> {kernel.exit_flags.symbol.name}({n.nthreads});")
    if kernel.warp_exchange is not None:
        state.append(f"cudacpu::WarpExchange {kernel.warp_exchange.symbol.name}({kernel.warp_exchange.sites}, {n.nthreads});")
    if kernel.dynamic_shared is not None:
        state.append(f"cudacpu::SharedBuffer {kernel.dynamic_shared.symbol.name}(dynamicSharedBytes);")
    block_head = []
    if any(re.search(r"\bblockIdx\b", line) for line in body) or kernel.sets_coordinates:
        block_head.append(f"const uint3 blockIdx = make_uint3({n.bx}, {n.by}, {n.bz});")
    if kernel.sets_coordinates:
        block_head.append("::blockIdx = blockIdx; ::blockDim = blockDim; ::gridDim = gridDim;")
    block_head += _shared_lines(kernel)
    if kernel.exit_flags is not None:
        block_head.append(f"{kernel.exit_flags.symbol.name}.fill(false);")
    ind = INDENT
    lines = [signature(kernel) + " {"]
    lines += [ind + text for text in kernel.compile_time]
    if any(re.search(rf"\b{n.nthreads}\b", x) for x in state + body):
        lines.append(f"{ind}const unsigned int {n.nthreads} = blockDim.x * blockDim.y * blockDim.z;")
    # A kernel that spins on memory other blocks write relies on its blocks being resident
    # together, as on a GPU: each block gets a thread of its own (the OS interleaves them).
    team, schedule = (" num_threads(cudacpu::coresident_threads(gridDim))",
                      "static, cudacpu::coresident_chunk(gridDim)") if kernel.spins_on_blocks else ("", "static")
    if kernel.grid_sync:  # blocks that wait for each other: one thread each
        lines.append(f"{ind}cudacpu::GridBarrier {GRID_BARRIER}(gridDim);")
        team, schedule = f" num_threads({GRID_BARRIER}.blocks())", "static, 1"
        block_head.insert(0, f"{GRID_BARRIER}.require_team(omp_get_num_threads());")
    if kernel.parallel_threads:  # the regions' thread loops are the parallel loops
        if state or kernel.spins_on_blocks or kernel.grid_sync:
            raise ValueError(f"kernel {kernel.name}: blocks in order, but it keeps block state, spins on other blocks "
                             "or synchronizes its grid")
        lines.append(f"{ind}// blocks in order: too few to share")
        loop_ind = ind
    elif state:
        lines.append(f"{ind}#pragma omp parallel{team}")
        lines.append(f"{ind}{{")
        lines += [ind * 2 + s for s in state]
        lines.append(f"{ind * 2}#pragma omp for collapse(3) schedule({schedule})")
        loop_ind = ind * 2
    else:
        lines.append(f"{ind}#pragma omp parallel for collapse(3) schedule({schedule}){team}")
        loop_ind = ind
    lines.append(f"{loop_ind}for (unsigned int {n.bz} = 0; {n.bz} < gridDim.z; ++{n.bz})")
    lines.append(f"{loop_ind}    for (unsigned int {n.by} = 0; {n.by} < gridDim.y; ++{n.by})")
    lines.append(f"{loop_ind}        for (unsigned int {n.bx} = 0; {n.bx} < gridDim.x; ++{n.bx}) {{")
    inner = loop_ind + ind * 3
    lines += [inner + h for h in block_head]
    shift = len(inner) - len(INDENT * 4)
    lines += [(" " * shift + line) if shift > 0 else line[-shift:] if shift < 0 else line for line in body]
    lines.append(f"{loop_ind}        }}")
    if state:
        lines.append(f"{ind}}}")
    lines.append("}")
    return "\n".join(lines)
