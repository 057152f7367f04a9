"""Whole-file products of the lowering: the device side of a file (`lower_source`), a task's
translation unit with its entry function (`lower_task`) and a host+device port (`translate_file`)."""

from __future__ import annotations

import ctypes
import os
import re
from pathlib import Path

import clang.cindex as ci
from pydantic import BaseModel

from tools.spec import c_type

from . import frontend as fe
from . import kernel_ir as ir
from .frontend import CudaModule, Translation, parse_translation
from .coop_groups import rewrite_cooperative_groups
from .lowering import PRELUDE, K, KernelLowering, LoweringUnsupported
from .macros import call_arguments, expand_device_macros, expand_header_macros
from .names import rename_clashing_locals
from .params import localize_assigned_parameters
from .printer import print_kernel

NAMESPACE = "cudacpu_kernels"


class Unsupported(BaseModel):
    feature: str
    file: str
    line: int
    message: str
    kernel: str | None = None  # the kernel that could not be lowered because of it

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: unsupported {self.feature}: {self.message}"


class LoweringError(Exception):
    """A kernel that a task needs cannot be lowered; the message names file, line and feature."""

    def __init__(self, message: str, unsupported: list[Unsupported] | None = None):
        super().__init__(message)
        self.unsupported = unsupported or []


class LoweredKernel(BaseModel):
    name: str
    file: str
    line: int
    lowered: bool
    thread_loops: int = 0  # regions: loops over the block's threads
    per_thread: list[str] = []  # variables kept per thread across barriers
    sets_coordinates: bool = False  # sets the thread-local coordinates, for code that reads them
    features: list[str] = []


class LoweredModule(BaseModel):
    cpp: str
    kernels: list[LoweredKernel] = []
    unsupported: list[Unsupported] = []
    module: CudaModule | None = None
    host_dropped: list[str] = []  # host functions left out, each "name (file:line)"

    def kernel(self, name: str) -> LoweredKernel:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)


# ---------------------------------------------------------------------------------------


def _facts(tr: Translation) -> tuple[set[fe.DefinitionKey], set[fe.DefinitionKey]]:
    facts = fe._device_fn_facts(tr)
    # Inlined: functions and methods (not constructors, which make objects as written)
    methods = {off for off, m in tr.members.items() if m.kind == K.CXX_METHOD}
    sync = {off for off, (_, s, _) in facts.items() if s and (off in tr.functions or off in methods)}
    coords = {off for off, (c, _, _) in facts.items() if c and off not in sync}
    return sync, coords


def _kernel_ir(tr: Translation, cursor: ci.Cursor, sync: set[fe.DefinitionKey],
               coords: set[fe.DefinitionKey]) -> tuple[ir.Kernel, KernelLowering]:
    """The IR of one lowered kernel (kernel_ir.py), and the lowering that built it."""
    info = tr.module.kernel(cursor.spelling)  # type: ignore[union-attr]
    low = KernelLowering(tr, cursor, sync, coords)
    low.lower_body()
    low.analyze()  # reports unsupported constructs of the kernel itself, with their lines
    for feat in info.features:  # ... and those of the device functions it calls
        if feat.startswith("unsupported:"):
            what = feat.split(":", 1)[1]
            raise LoweringUnsupported(what, cursor.location.line, f"kernel {cursor.spelling} calls code that uses {what}")
    return low.build_ir(), low


def _lower_kernel(tr: Translation, cursor: ci.Cursor, sync: set[fe.DefinitionKey], coords: set[fe.DefinitionKey]) -> tuple[str, LoweredKernel]:
    kernel, low = _kernel_ir(tr, cursor, sync, coords)
    text = print_kernel(kernel)
    record = LoweredKernel(name=cursor.spelling, file=tr.filename, line=cursor.location.line, lowered=True,
                           thread_loops=len([r for r in low.regions if r.items]),
                           per_thread=[v.name for v in low.vars if v.promoted], features=tr.module.kernel(cursor.spelling).features,  # type: ignore[union-attr]
                           sets_coordinates=low.uses_coord_functions)
    return text, record


TEMPLATE_PARAMETERS = (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER)


def _template_head(cursor: ci.Cursor, tr: Translation, named: bool = False) -> str:
    """`template <typename T, int N>` as a kernel template writes it ("" for a plain kernel);
    `named`: its unnamed parameters (`typename = void`, SFINAE's `enable_if<...>::type = 0`)
    given names, `cudacpu_template_parameter_N` by position, so that they can be passed on."""
    if cursor.kind != K.FUNCTION_TEMPLATE:
        return ""
    pieces, at = [], cursor.extent.start.offset
    for n, c in enumerate(c for c in cursor.get_children() if c.kind in TEMPLATE_PARAMETERS):
        if named and not c.spelling:  # where its name would be written
            pieces += [tr.text(at, c.location.offset), f" {_unnamed_template_parameter(n)} "]
            at = c.location.offset
    text = "".join(pieces) + tr.text(at, cursor.extent.end.offset)
    m = re.match(r"template\s*<", text)
    if not m:
        return ""
    depth, i = 0, m.end() - 1
    for i in range(m.end() - 1, len(text)):
        depth += text[i] == "<"
        depth -= text[i] == ">"
        if depth == 0:
            break
    return text[: i + 1]


def _unnamed_template_parameter(position: int) -> str:
    return f"cudacpu_template_parameter_{position}"


def _stub(cursor: ci.Cursor, tr: Translation, problem: Unsupported) -> str:
    params = fe.params_of(cursor)
    extra = ", " + tr.text(params[0].extent.start.offset, params[-1].extent.end.offset) if params else ""
    head = _template_head(cursor, tr)
    msg = str(problem).replace("\\", "\\\\").replace('"', '\\"')
    return (f"{head}{chr(10) if head else ''}void {cursor.spelling}(dim3, dim3, std::size_t{extra}) {{\n"
            f"    cudacpu::unsupported(\"{msg}\");\n}}")


def _host_stub(cursor: ci.Cursor, tr: Translation, declaration: bool = False) -> str | None:
    """The kernel's host stub, as nvcc makes one: a function with the kernel's own parameters,
    which runs the lowered kernel with the configuration pushed before the call. A pointer to the
    kernel (`kernel_fn table[] = {k1, k2}`, `&k`) is a pointer to it, and a launch through such a
    pointer calls it. None where it cannot be written: unnamed parameters, parameter packs,
    explicit specializations."""
    params = fe.params_of(cursor)
    head = _template_head(cursor, tr, named=True)
    if any(not p.spelling for p in params) and not declaration:
        return None
    before_name = tr.text(cursor.extent.start.offset, cursor.location.offset).split()
    if "..." in "".join(before_name) or any(p.type.spelling.endswith("...") for p in params):
        return None
    if head.replace(" ", "") == "template<>" or (cursor.kind == K.FUNCTION_DECL and cursor.get_num_template_arguments() > 0):
        return None
    written = tr.text(params[0].extent.start.offset, params[-1].extent.end.offset) if params else ""
    linkage = "static " if "static" in before_name else ""
    signature = f"{head}{' ' if head else ''}{linkage}void {cursor.spelling}({written})"
    if declaration:
        return signature + ";"
    targs = [c.spelling or _unnamed_template_parameter(n)
             for n, c in enumerate(c for c in cursor.get_children() if c.kind in TEMPLATE_PARAMETERS)]
    lowered = f"{NAMESPACE}::{cursor.spelling}" + (f"<{', '.join(targs)}>" if targs else "")
    args = "".join(f", {p.spelling}" for p in params)
    config = "cudacpu_configuration"  # a name no parameter has (the lowering reserves the cudacpu prefix)
    return (f"{signature} {{\n    const cuda_cpu::LaunchConfiguration {config} = cuda_cpu::pop_launch_configuration(\"{cursor.spelling}\");\n"
            f"    {lowered}({config}.grid, {config}.block, {config}.shared{args});\n}}")


# `assert` in device code is CUDA's device-side assert: a failure is reported and leaves the
# sticky cudaErrorAssert for the host's next synchronisation; the process goes on.
_DEVICE_ASSERT = ('\n#pragma push_macro("assert")\n#undef assert\n#ifdef NDEBUG\n#define assert(e) ((void)0)\n#else\n'
                  '#define assert(e) ((e) ? (void)0 : cuda_cpu::device_assert_fail(#e, __FILE__, __LINE__, __func__))\n'
                  '#endif\n')
_HOST_ASSERT = '\n#pragma pop_macro("assert")\n'


def _device_code(text: str) -> str:
    return _DEVICE_ASSERT + text + _HOST_ASSERT


def _wrap(text: str, kernel: bool = False) -> str:
    if kernel:
        text = _device_code(text)
        # The kernel's own comparisons of unsigned thread ids with ints are CUDA's semantics, and
        # shared memory written by some threads is read by others in a later thread loop, which
        # g++ cannot see: neither warning is about the lowering.
        # A thread's variable recomputed in each loop over threads that may read it is not
        # read by every one of them either.
        text = ('#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored "-Wsign-compare"\n'
                '#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"\n#pragma GCC diagnostic ignored "-Wunused-variable"\n'
                f"{text}\n#pragma GCC diagnostic pop")
    return f"namespace {NAMESPACE} {{\n{text}\n}}  // namespace {NAMESPACE}"


def _named_like(file: str | None, main: str) -> str:
    """A header's path as the user knows it: relative to the folder of the file translated."""
    if file is None or file == main:
        return main
    relative = os.path.relpath(Path(file).resolve(), Path(main).resolve().parent)
    return file if relative.startswith("..") else relative


def _outer_extent(cursor: ci.Cursor) -> tuple[int, int]:
    parent = cursor.lexical_parent
    if parent is not None and parent.kind == K.LINKAGE_SPEC and len(list(parent.get_children())) == 1:
        return parent.extent.start.offset, parent.extent.end.offset
    return cursor.extent.start.offset, cursor.extent.end.offset


def _drop_method_body(method: ci.Cursor, edits: fe.SourceEdits) -> None:
    """A method with barriers or warp intrinsics is inlined into the kernels that call it: the class
    keeps its declaration (`T shfl(T v) const;`), a definition outside the class goes."""
    parent = method.lexical_parent
    if parent is not None and parent.kind in (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE,
                                              K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, K.UNION_DECL):
        body = fe.body_of(method)
        edits.replace(body.extent.start.offset, body.extent.end.offset,
                      f"; // __device__ {method.spelling}: inlined into the kernels that call it")
    else:
        edits.replace(method.extent.start.offset, method.extent.end.offset,
                      f"// __device__ {method.spelling}: inlined into the kernels that call it")


def _transform(tr: Translation, *, kernels: list[str] | None, keep_host: bool, drop_main: bool) -> LoweredModule:
    mod = tr.module
    assert mod is not None
    result = LoweredModule(cpp="", module=mod)
    sync, coords = _facts(tr)
    edits = fe.SourceEdits(tr)
    wanted = set(kernels) if kernels else None
    if wanted:
        missing = wanted - set(tr.kernels)
        if missing:
            raise LoweringError(f"{tr.filename}: no kernel named {', '.join(sorted(missing))}")
    stubbed: set[str] = set()  # kernels of this file that have a host stub
    for cursor in tr.kernel_definitions:
        name = cursor.spelling
        start, end = _outer_extent(cursor)
        if wanted is not None and name not in wanted:
            edits.replace(start, end, "")
            continue
        try:
            text, record = _lower_kernel(tr, cursor, sync, coords)
        except LoweringUnsupported as exc:
            problem = Unsupported(feature=exc.feature, file=_named_like(exc.file, tr.filename),
                                  line=exc.line or cursor.location.line, message=exc.message, kernel=name)
            result.unsupported.append(problem)
            text = _stub(cursor, tr, problem)
            record = LoweredKernel(name=name, file=tr.filename, line=cursor.location.line, lowered=False,
                                   features=mod.kernel(name).features)
        result.kernels.append(record)
        stub = _host_stub(cursor, tr) if keep_host else None  # host code only: a task's entry may bear the kernel's name
        if stub is not None:
            stubbed.add(name)
            if not _template_head(cursor, tr) and sum(k.name == name for k in mod.kernels) == 1:
                # cudaLaunchKernel((void*)k, ...) finds the stub by its address, with its arguments as void*
                # (the stub's own type named: a host function may share the kernel's name)
                types = ", ".join(p.type.spelling for p in fe.params_of(cursor))
                stub += (f"\nstatic const bool cudacpu_registered_{name} = "
                         f"cuda_cpu::register_kernel<static_cast<void (*)({types})>(&{name})>();")
        edits.replace(start, end, f"// CUDA kernel {name} ({tr.filename}:{cursor.location.line}), lowered\n" + _wrap(text, kernel=True)
                      + (f"\n// its host stub: what a pointer to {name} points to\n{stub}" if stub else ""))
    for start, end, text in _explicit_instantiations(tr):
        edits.replace(start, end, text)
    # Device functions of the project's headers are compiled as the headers write them: those
    # that read thread coordinates need the variables the lowered kernels set.
    # So do the constructors and methods of device classes, which are kept as written.
    # A kernel that calls code the parse cannot name (a functor of a header's kernel template) sets them too.
    coord_fn_kept = any(fe.in_project_header(fn) and fe.definition_key(fn) in coords for fn in tr.functions.values()) \
        or any(key in coords for key in tr.members) or any(k.sets_coordinates for k in result.kernels)
    for c in tr.walk_main():
        if c.kind == K.CXX_METHOD and tr.in_main(c) and c.is_definition() and fe.definition_key(c) in sync:
            _drop_method_body(c, edits)
            continue
        if not tr.in_main(c) or c.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE):
            continue
        start, end = _outer_extent(c)
        if fe.is_kernel(c):
            if not c.is_definition():  # a prototype: of the lowered kernel and of its host stub
                stub = _host_stub(c, tr, declaration=True) if keep_host else None
                edits.replace(start, _after(tr, end), _wrap(_prototype(c, tr)) + (f"\n{stub}" if stub else ""))
            continue
        if fe.is_device(c):
            if c.is_definition() and fe.definition_key(c) in sync:
                edits.replace(start, end, f"// __device__ {c.spelling}: inlined into the kernels that call it")
            elif c.is_definition():
                coord_fn_kept = coord_fn_kept or fe.definition_key(c) in coords
                if not fe.has_attr(c, K.CUDAHOST_ATTR):
                    edits.replace(start, end, _device_code(tr.text(start, end)))
            continue
        if not c.is_definition():
            continue
        if (drop_main and c.spelling == "main") or not keep_host:
            edits.replace(start, end, "")
            result.host_dropped.append(f"{c.spelling} ({tr.filename}:{c.location.line})")
    if keep_host:
        launched_up_to = -1  # the end of the last launch rewritten: its kernel's name is part of it
        for c in tr.walk_main():
            if c.kind == K.CALL_EXPR and tr.in_main(c):
                launch = fe.parse_launch(c, tr)
                if launch is not None:
                    edits.replace(launch.start, launch.end, _launch_call(launch))
                    launched_up_to = launch.end
            elif c.kind == K.DECL_REF_EXPR and tr.in_main(c) and c.extent.start.offset >= launched_up_to \
                    and c.referenced is not None and _names_kernel(c.referenced) and c.referenced.spelling not in stubbed:
                # A kernel named outside a launch (`cudaFuncSetCacheConfig(k, ...)`, `&k`) names its
                # host stub where it has one; else the lowered kernel, in its namespace.
                start, end = c.extent.start.offset, c.extent.end.offset
                written = tr.text(start, end)
                if written.startswith(c.spelling):
                    edits.replace(start, end, _in_kernel_namespace(written))
            elif c.kind == K.MACRO_DEFINITION and tr.in_main(c):
                for start, end, call in _macro_launches(c):
                    edits.replace(start, end, call)
    head = ['#include "cuda_runtime.h"', PRELUDE.rstrip()]
    if coord_fn_kept:
        # Guarded: a translated header and the unit that includes it may both declare them.
        head.append("// Thread coordinates for __device__ functions that read them; the lowered kernels set them.\n"
                    "#ifndef CUDACPU_THREAD_COORDINATES\n#define CUDACPU_THREAD_COORDINATES\n"
                    "[[maybe_unused]] static thread_local uint3 threadIdx, blockIdx;\n"
                    "[[maybe_unused]] static thread_local dim3 blockDim, gridDim;\n#endif")
    result.cpp = _unroll_pragmas("\n".join(head) + "\n\n" + edits.apply())
    return result


def _explicit_instantiations(tr: Translation) -> list[tuple[int, int, str]]:
    """`[extern] template __global__ void k<float, 256>(const float*, float*, int);`: each explicit
    instantiation of a kernel template, as one of its lowered template (whose parameters start
    with the launch configuration). libclang gives such declarations no cursor: read from tokens."""
    kernels = set(tr.kernels)
    tokens = list(tr.tu.get_tokens(extent=tr.tu.cursor.extent))
    out = []
    for i, tok in enumerate(tokens):
        if tok.spelling != "template" or i + 1 >= len(tokens) or tokens[i + 1].spelling == "<":
            continue
        first = i - 1 if i > 0 and tokens[i - 1].spelling == "extern" else i
        end = next((j for j in range(i, len(tokens)) if tokens[j].spelling in (";", "{")), None)
        if end is None or tokens[end].spelling != ";":
            continue
        words = [t.spelling for t in tokens[i:end]]
        name_at = next((j for j, w in enumerate(words) if w in kernels and j + 1 < len(words) and words[j + 1] in ("<", "(")),
                       None)
        if "__global__" not in words or name_at is None:
            continue
        paren = words.index("(", name_at)
        targs = " ".join(words[name_at + 1:paren])
        params = " ".join(words[paren + 1:-1]).strip()
        params = "" if params in ("", "void") else ", " + params
        extern = "extern " if first < i else ""
        out.append((tokens[first].extent.start.offset, tokens[end].extent.end.offset,
                    f"{extern}template void cudacpu_kernels::{words[name_at]}{targs}"
                    f"(dim3, dim3, std::size_t{params});"))
    return out


def _overloaded_decls(ref: ci.Cursor) -> list[ci.Cursor]:
    """The functions an overload set (OVERLOADED_DECL_REF) names: libclang's C API has them, its
    Python binding does not."""
    lib = ci.conf.lib
    count, decl = lib.clang_getNumOverloadedDecls, lib.clang_getOverloadedDecl
    count.argtypes, count.restype = [ci.Cursor], ctypes.c_uint
    decl.argtypes, decl.restype, decl.errcheck = [ci.Cursor, ctypes.c_uint], ci.Cursor, ci.Cursor.from_result
    return [decl(ref, i) for i in range(count(ref))]


def _names_kernel(referenced: ci.Cursor) -> bool:
    """A kernel, or an overload set of kernels only: `k<float, 128>` passed where nothing fixes its
    type (`cudaFuncGetAttributes(&a, k<float, 128>)`) stays unresolved for the parser."""
    if referenced.kind == K.OVERLOADED_DECL_REF:
        decls = _overloaded_decls(referenced)
        return bool(decls) and all(fe.is_kernel(d) for d in decls)
    return fe.is_kernel(referenced)


def _unroll_pragmas(text: str) -> str:
    """`#pragma unroll N` -> `#pragma GCC unroll N`; a bare `#pragma unroll` is left to g++ (as a comment)."""
    text = re.sub(r"^(\s*)#\s*pragma\s+unroll\s+(\d+)\s*$", r"\1#pragma GCC unroll \2", text, flags=re.M)
    return re.sub(r"^(\s*)#\s*pragma\s+unroll\b(.*)$", r"\1// #pragma unroll\2", text, flags=re.M)


def _after(tr: Translation, end: int) -> int:
    src = tr.source
    i = end
    while i < len(src) and src[i:i + 1] in (b" ", b"\t"):
        i += 1
    return i + 1 if src[i:i + 1] == b";" else end


def _prototype(c: ci.Cursor, tr: Translation) -> str:
    params = fe.params_of(c)
    extra = ", " + tr.text(params[0].extent.start.offset, params[-1].extent.end.offset) if params else ""
    head = _template_head(c, tr)
    return f"{head}{' ' if head else ''}void {c.spelling}(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes{extra});"


def _in_kernel_namespace(kernel: str) -> str:
    """`k<T>` -> `cudacpu_kernels::k<T>`, `ns::k` -> `ns::cudacpu_kernels::k`."""
    name, angle, arguments = kernel.partition("<")
    qual, sep, last = name.rpartition("::")
    return f"{qual}::{NAMESPACE}::{last}{angle}{arguments}" if sep else f"{NAMESPACE}::{kernel}"


def _launch_call(launch: fe.Launch, dim3: str = "dim3") -> str:
    cfg = launch.config + ["0"] * (3 - len(launch.config))
    if launch.through_pointer:  # the pointer is to a host stub, which takes the configuration pushed
        return (f"(cuda_cpu::push_launch_configuration(dim3({cfg[0]}), dim3({cfg[1]}), {cfg[2]}), "
                f"({launch.kernel_text}))({launch.args_text})")
    kernel = _in_kernel_namespace(launch.kernel_text)
    args = f", {launch.args_text}" if launch.args_text.strip() else ""
    return f"{kernel}({dim3}({cfg[0]}), {dim3}({cfg[1]}), {cfg[2]}{args})"


MACRO_DIM3 = "cudacpu_dim3"  # vector_types.h


def _macro_launches(macro: ci.Cursor) -> list[tuple[int, int, str]]:
    """The launches written in a macro's body (`k <<<g, b, shared>>> (args)`, k often a macro
    parameter): each one's byte range and its call of the lowered kernel. The compiler sees such
    a launch only where the macro is used, as a single token range it cannot rewrite. Every name
    the call adds is one no parameter of the macro plausibly has (cudacpu_dim3, not dim3): the
    preprocessor would put the argument in its place."""
    toks = list(macro.get_tokens())[1:]  # the macro's name first
    words = [t.spelling for t in toks]
    out = []
    for i, word in enumerate(words):
        if word != "<<<" or ">>>" not in words[i:]:
            continue
        first, j = _kernel_start(words, i), words.index(">>>", i)
        call = call_arguments(words, j + 1)
        if first is None or call is None:
            continue
        args, after = call
        start, end = toks[first].extent.start.offset, toks[after - 1].extent.end.offset
        launch = fe.Launch(info=None, start=start, end=end, kernel_text=" ".join(words[first:i]),  # type: ignore[arg-type]
                           config=fe._split_top(" ".join(words[i + 1:j])),
                           args_text=", ".join(" ".join(a) for a in args))
        out.append((start, end, _launch_call(launch, MACRO_DIM3)))
    return out


def _kernel_start(words: list[str], launch: int) -> int | None:
    """Index of the first token of the kernel named before `<<<` (`k`, `ns::k`, `k<T, 4>`)."""
    i = launch - 1
    if i >= 0 and words[i] == ">":
        depth = 0
        while i >= 0:
            depth += {">": 1, "<": -1}.get(words[i], 0)
            if depth == 0:
                break
            i -= 1
        i -= 1
    while i >= 0 and (words[i].isidentifier() or words[i] == "::"):
        i -= 1
    return i + 1 if i + 1 < launch and words[i + 1].isidentifier() else None


# ---------------------------------------------------------------------------------------
# Public API


def _parse(source: str, filename: str, include_dirs: list[str] | None = None,
           options: list[str] | None = None) -> Translation:
    """The file parsed, then parsed again with the project's macros expanded in its device code
    where it uses any (the lowering rewrites what the macros' expansions name), again with
    the kernel parameters that kernels assign made per-thread locals, and again with device-code
    locals named like the lowering's own variables renamed."""
    tr = parse_translation(source, filename, include_dirs, options)
    own = [Path(filename).parent] + [Path(d) for d in include_dirs or []]
    expanded, headers = expand_device_macros(tr, own), expand_header_macros(tr, own)
    if expanded is not None or headers:
        tr = parse_translation(expanded or source, filename, include_dirs, options, headers)
    rewritten = rewrite_cooperative_groups(tr)  # cooperative groups and CUB collectives as barriers, warp intrinsics
    if rewritten is not None:
        tr = parse_translation(rewritten, filename, include_dirs, options, headers)
    localized = localize_assigned_parameters(tr)
    if localized is not None:
        tr = parse_translation(localized, filename, include_dirs, options, headers)
    renamed = rename_clashing_locals(tr)  # the lowering's own names stay its own (names.py)
    return tr if renamed is None else parse_translation(renamed, filename, include_dirs, options, headers)


def lower_source(source: str, filename: str = "input.cu", *, kernels: list[str] | None = None) -> LoweredModule:
    """The device side of a file as C++: kernels lowered, __device__ code kept, host functions dropped."""
    tr = _parse(source, filename)
    return _transform(tr, kernels=kernels, keep_host=False, drop_main=True)


def kernel_irs(source: str, filename: str = "input.cu", *, kernels: list[str] | None = None) -> list[ir.Kernel]:
    """The IR of each kernel of a file (of `kernels` where given), in the file's order, parsed as
    `lower_source` parses it; `printer.print_kernel` prints each as the lowering emits it. A kernel
    the lowering cannot lower raises LoweringUnsupported."""
    tr = _parse(source, filename)
    sync, coords = _facts(tr)
    return [_kernel_ir(tr, cursor, sync, coords)[0] for cursor in tr.kernel_definitions
            if not kernels or cursor.spelling in kernels]


def emitted_kernel(kernel: ir.Kernel) -> str:
    """The kernel's text as a lowered translation unit holds it: `print_kernel`'s, with the file's
    `#pragma unroll`s written for g++ (which the lowering does to the whole output)."""
    return _unroll_pragmas(print_kernel(kernel))


def translate_file(source: str, filename: str = "input.cu", include_dirs: list[str] | None = None,
                   options: list[str] | None = None) -> LoweredModule:
    """The whole file for a CPU port: host code as written, kernels lowered, launches rewritten.
    `include_dirs`: where the file's own headers are (besides its directory); `options`: the
    project's preprocessor options for it (-D, -U, -I, -include)."""
    tr = _parse(source, filename, include_dirs, options)
    return _transform(tr, kernels=None, keep_host=True, drop_main=False)


def lower_task(task) -> str:
    """A complete translation unit for a kernel task: the lowered kernels and the entry function."""
    if not task.launches:
        raise LoweringError(f"task {task.name}: no launches given (the planner infers them; the compiler needs them)")
    needed = sorted({launch.kernel for launch in task.launches})
    filename = str(task.source_path() or f"{task.name}.cu")
    tr = _parse(task.source(), filename)
    missing = [k for k in needed if k not in tr.kernels]
    if missing:
        raise LoweringError(f"{filename}: task {task.name} launches {', '.join(missing)}, which the file does not define")
    lowered = _transform(tr, kernels=needed, keep_host=False, drop_main=True)
    if lowered.unsupported:
        first = lowered.unsupported[0]
        raise LoweringError(str(first), lowered.unsupported)
    lines = [task.entry_signature() + " {"]
    for launch in task.launches:
        lines.append("    " + _task_launch(task, launch, tr))
    lines.append("}")
    return lowered.cpp + "\n\n// Entry point of the task: the launches in order.\n" + "\n".join(lines) + "\n"


def _maybe_stateless(param: ci.Cursor, kernel: ci.Cursor, launch) -> str | None:
    """The type of a parameter that may be a stateless struct passed by value (a struct, or a
    template parameter the launch binds), spelled for the task's entry; None for any other."""
    ptype = param.type
    if ptype.get_canonical().kind == ci.TypeKind.RECORD:
        return ptype.spelling
    names = [c.spelling for c in kernel.get_children() if c.kind in (
        K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER)]
    bare = " ".join(re.sub(r"\bconst\b", " ", ptype.spelling).split())
    if bare in names and names.index(bare) < len(launch.template_args):
        return launch.template_args[names.index(bare)]
    return None


def _task_launch(task, launch, tr: Translation) -> str:
    (gx, gy, gz), (bx, by, bz) = launch.dims()
    kernel = tr.kernels[launch.kernel]
    params = fe.params_of(kernel)
    if len(params) != len(launch.args):
        raise LoweringError(f"task {task.name}: {launch.kernel} takes {len(params)} arguments, the launch gives "
                            f"{len(launch.args)}")
    tparams = {c.spelling for c in kernel.get_children() if c.kind in (K.TEMPLATE_TYPE_PARAMETER,
                                                                       K.TEMPLATE_NON_TYPE_PARAMETER)}
    buffers = {b.name: b for b in task.buffers}
    placeholders = {sc.name for sc in task.scalars if sc.dtype == "uint8"}
    args = []
    for p, a in zip(params, launch.args):
        text = str(a).lower() if isinstance(a, bool) else str(a)
        ptype = p.type.spelling
        if isinstance(a, str) and a in buffers and "*" in ptype and not any(
                re.search(rf"\b{re.escape(t)}\b", ptype) for t in tparams):
            pointee = re.sub(r"\b(const|volatile|__restrict)\b|\*", "", ptype).strip()
            if " ".join(pointee.split()) != c_type(buffers[a].dtype):
                text = f"reinterpret_cast<{ptype}>({a})"
        elif p.type.get_canonical().kind == ci.TypeKind.ENUM:  # the task holds an enum as its integer
            text = f"static_cast<{ptype}>({text})"
        elif isinstance(a, str) and a in placeholders and (stateless_type := _maybe_stateless(p, kernel, launch)):
            # a stateless argument (an empty struct, such as a functor): the task holds a placeholder byte
            # (a generic lambda, so that the branch not taken is not compiled)
            text = (f"[](auto value) {{ if constexpr (std::is_empty_v<{stateless_type}>) return {stateless_type}{{}}; "
                    f"else return static_cast<{stateless_type}>(value); }}({text})")
        args.append(text)
    targs = f"<{', '.join(launch.template_args)}>" if launch.template_args else ""
    arglist = "".join(", " + x for x in args)
    return (f"{NAMESPACE}::{launch.kernel}{targs}(dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}), "
            f"{launch.shared_bytes}{arglist});")
