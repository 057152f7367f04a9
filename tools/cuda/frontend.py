"""CUDA front end on libclang: what a .cu file contains, with no CUDA installation.

The source is parsed in clang's CUDA mode (host side) with `shim/cuda_shim.h` force-included:
it declares the thread coordinates, barriers, warp intrinsics, atomics, math intrinsics,
vector and half types and enough of the host runtime API for host code to parse.
`parse_cuda` returns a `CudaModule` of plain records; the lowering uses `parse_translation`,
which also keeps the libclang cursors.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci
from pydantic import BaseModel

from tools.user_cache import cache_dir, keep_newest

SHIM_DIR = Path(__file__).parent / "shim"
RUNTIME_INCLUDE = Path(__file__).parent / "runtime" / "include"
DefinitionKey = tuple[str, int]  # a function definition across the files of one parse: (file, offset)

# A thread's index in its block, and the block's thread count, as CUDA source.
LINEAR_THREAD = "((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x)"
BLOCK_THREADS = "(blockDim.x * blockDim.y * blockDim.z)"
BUILTIN_VARS = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}
# cooperative groups' grid.sync(), as coop_groups.py rewrites it: every block of the grid waits there
GRID_SYNC = "cudacpu_grid_sync"
BARRIERS = {"__syncthreads", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or", GRID_SYNC}
WARP_SYNC = {"__syncwarp"}
WARP_EXCHANGE = {
    "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
    "__shfl", "__shfl_up", "__shfl_down", "__shfl_xor",
    "__ballot_sync", "__any_sync", "__all_sync", "__ballot", "__any", "__all",
    "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
    "__match_any_sync", "__match_all_sync",
}
WARP_LOCAL = {"__activemask", "__lanemask_lt"}
ATOMICS = {
    "atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicCAS", "atomicAnd",
    "atomicOr", "atomicXor", "atomicInc", "atomicDec",
}
# Calls whose presence makes a kernel unsupported, with the feature name reported.
UNSUPPORTED_CALLS = {
    # Texture objects are supported (tools/cuda/runtime/include/cuda_cpu/textures.h) except cubemaps and gathers.
    **{n: "textures" for n in ("texCubemap", "texCubemapLayered", "texCubemapLod", "tex2Dgather")},
    **{n: "surfaces" for n in ("surf1Dread", "surf1Dwrite", "surf2Dread", "surf2Dwrite", "surf3Dread", "surf3Dwrite")},
    # a back-off in a loop that waits for another thread or block, which a block run as loops never lets run
    "__nanosleep": "__nanosleep",
    "cudaDeviceSynchronize": "dynamic parallelism",
    "cudaLaunchKernel": "dynamic parallelism",
    "cudaMalloc": "device-side malloc",
    "malloc": "device-side malloc",
}
# Cooperative groups: tools/cuda/coop_groups.py rewrites the operations it supports before the
# lowering; what remains of these is reported (cooperative_groups_feature).
COOPERATIVE_GROUPS = "cooperative_groups"
_CG_KEPT = {"this_thread_block", "this_grid", "tiled_partition", "coalesced_threads"}  # make the group values that stay in the lowered code
_CG_OPERATORS = {"plus", "less", "greater", "bit_and", "bit_or", "bit_xor"}
_CG_METHODS = {"sync", "thread_rank", "size", "num_threads", "meta_group_rank", "meta_group_size", "shfl", "shfl_up",
               "shfl_down", "shfl_xor", "any", "all", "ballot", "match_any", "match_all", "group_index", "thread_index",
               "group_dim", "dim_threads", "block_rank", "num_blocks", "block_index", "is_valid", "dim_blocks"}
MATH_INTRINSICS = re.compile(r"^(__[a-z0-9]+(_r[nzud])?|rsqrtf?|fmaf?|__saturatef)$")


class CudaParseError(Exception):
    """The source could not be parsed at all; the message names the file."""


class CudaSyntaxError(CudaParseError):
    """The file is no valid CUDA: `errors` are libclang's syntax errors in it, each
    `file:line:col: message`; the message is the first (and how many more there are)."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        more = f" (and {len(errors) - 1} more syntax errors)" if len(errors) > 1 else ""
        super().__init__(errors[0] + more)


# Syntax errors of clang's that nvcc does not make: `__shared__ alignas(64) float x[8]` (TVM's output).
NVCC_ACCEPTS = {"an attribute list cannot appear here"}


def _where(d: ci.Diagnostic, filename: str) -> str:
    loc = d.location
    return f"{loc.file.name}:{loc.line}:{loc.column}" if loc.file is not None else filename


def syntax_errors(tu: ci.TranslationUnit, filename: str) -> list[str]:
    """`file:line:col: message` of each syntax error (libclang's parse issues of severity error or
    fatal) in the file itself. Semantic errors are left out: parsing the host side alone, clang
    reports some in valid CUDA (a __device__ call of a host-only math function)."""
    return [f"{_where(d, filename)}: {d.spelling}" for d in tu.diagnostics
            if d.severity >= ci.Diagnostic.Error and d.category_name == "Parse Issue" and d.spelling not in NVCC_ACCEPTS
            and d.location.file is not None and d.location.file.name == filename]


class Param(BaseModel):
    name: str
    type: str


class KernelInfo(BaseModel):
    name: str
    params: list[Param]
    template_params: list[str] = []
    file: str
    line: int
    launch_bounds: str | None = None
    features: list[str] = []


class DeviceFunction(BaseModel):
    name: str
    file: str
    line: int
    is_template: bool = False
    uses_thread_coordinates: bool = False
    has_sync: bool = False


class SharedVar(BaseModel):
    name: str
    type: str
    kernel: str | None  # None: declared at file scope
    extern: bool
    file: str
    line: int


class ConstantVar(BaseModel):
    name: str
    type: str
    file: str
    line: int


class LaunchSite(BaseModel):
    kernel: str
    template_args: str | None = None
    grid: str
    block: str
    shared_bytes: str | None = None
    stream: str | None = None
    args: list[str]
    function: str | None = None  # the host function containing the launch
    file: str
    line: int


class RuntimeCall(BaseModel):
    name: str
    function: str | None = None
    file: str
    line: int


class CudaModule(BaseModel):
    filename: str
    kernels: list[KernelInfo] = []
    device_functions: list[DeviceFunction] = []
    shared: list[SharedVar] = []
    constants: list[ConstantVar] = []
    launches: list[LaunchSite] = []
    runtime_calls: list[RuntimeCall] = []
    diagnostics: list[str] = []

    def kernel(self, name: str) -> KernelInfo:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)


# ---------------------------------------------------------------------------------------
# Parsing


@functools.cache
def _gcc_include_dir() -> str | None:
    """gcc's own headers (stddef.h, ...): the PyPI libclang ships no resource directory."""
    try:
        out = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    path = out.stdout.strip()
    return path if path and Path(path, "stddef.h").is_file() else None


def clang_args(filename: str, include_dirs: list[str] | None = None, options: list[str] | None = None) -> list[str]:
    """`options`: the project's own preprocessor options for the file (-D, -U, -I, -include)."""
    args = _shim_args()
    own = ["-include", str(SHIM_DIR / "cuda_shim.h"), *(options or []), "-I", str(Path(filename).parent or ".")]
    own += [arg for inc in include_dirs or [] for arg in ("-I", inc)]
    return args[:-2] + own + args[-2:]  # ahead of the runtime's last-resort -idirafter


def _shim_args() -> list[str]:
    """The arguments of every parse, less the shim itself and the file's own include directories."""
    args = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "-std=c++17",
            "--cuda-path=/nonexistent-cuda", "-Wno-unknown-cuda-version", "-Wno-unused-value", "-ferror-limit=0", "-DCUDA_CPU_PARSE_SHIM=1",
            "-I", str(SHIM_DIR / "include")]
    if gcc_inc := _gcc_include_dir():
        args += ["-isystem", gcc_inc]
    # Last resort for library headers (thrust, cuBLAS, cuRAND): the CPU runtime's.
    return args + ["-idirafter", str(RUNTIME_INCLUDE)]


@functools.cache
def _shim_pch() -> str | None:
    """cuda_shim.h and the headers it includes, precompiled once per machine (by libclang, its
    arguments and the shim's files) in the user's cache directory: most of a parse is theirs
    (0.6 s of 0.7 s on a small kernel, 0.1 s with it). None where it cannot be built or stored."""
    args = _shim_args()
    key = hashlib.sha256("\0".join([ci.conf.lib._name, str(os.stat(ci.conf.lib._name).st_mtime_ns), *args]).encode())
    for path in sorted(SHIM_DIR.rglob("*")):
        if path.is_file():
            key.update(path.name.encode() + path.read_bytes())
    cache = cache_dir()
    pch = cache / f"cuda_shim-{key.hexdigest()[:16]}.pch"
    if pch.is_file():
        return str(pch)
    try:
        tu = ci.Index.create().parse(str(SHIM_DIR / "cuda_shim.h"), args=args)
        if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
            return None
        cache.mkdir(parents=True, exist_ok=True)
        partial = pch.with_name(f"{pch.name}.{os.getpid()}")
        tu.save(str(partial))
        os.replace(partial, pch)  # whole or absent for a parse running beside this one
    except (OSError, ci.TranslationUnitLoadError, ci.TranslationUnitSaveError):
        return None
    keep_newest("cuda_shim-*.pch", 8)
    return str(pch)


def _parse(index: ci.Index, filename: str, source: str, include_dirs: list[str] | None,
           options: list[str] | None = None, headers: dict[str, str] | None = None) -> ci.TranslationUnit:
    """The file parsed with the precompiled shim, or, where that fails (a stale or damaged
    precompiled header), with the shim's text as before; `headers`: texts of project headers
    to read instead of their files."""
    args = clang_args(filename, include_dirs, options)
    unsaved = [(filename, source), *(headers or {}).items()]
    opts = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    pch = _shim_pch()
    if pch is not None:
        shim = args.index("-include")
        with_pch = args[:shim] + ["-include-pch", pch] + args[shim + 2:]
        try:
            tu = index.parse(filename, args=with_pch, unsaved_files=unsaved, options=opts)
            if not any(d.severity >= ci.Diagnostic.Fatal for d in tu.diagnostics):
                return tu
        except ci.TranslationUnitLoadError:
            pass
    tu = index.parse(filename, args=args, unsaved_files=unsaved, options=opts)
    if pch is not None and not any(d.severity >= ci.Diagnostic.Fatal for d in tu.diagnostics):
        Path(pch).unlink(missing_ok=True)  # the file is fine, the precompiled header is not: built again next time
        _shim_pch.cache_clear()
    return tu


@dataclass
class Translation:
    """A parsed file: its libclang unit, its bytes and the cursors the lowering needs."""

    filename: str
    source: bytes
    tu: ci.TranslationUnit
    kernels: dict[str, ci.Cursor] = field(default_factory=dict)  # name -> first definition (a template's primary)
    kernel_definitions: list[ci.Cursor] = field(default_factory=list)  # every one: overloads, specializations
    functions: dict[DefinitionKey, ci.Cursor] = field(default_factory=dict)  # definition_key -> device fn definition
    # (of this file, and of the project's headers where this file's code calls them)
    members: dict[DefinitionKey, ci.Cursor] = field(default_factory=dict)  # device constructors and methods, alike
    _header_methods: dict[str, list[ci.Cursor]] | None = None
    identifiers: set[str] = field(default_factory=set)
    module: CudaModule | None = None
    _main_cursors: list[ci.Cursor] | None = None
    _headers: dict[str, bytes] = field(default_factory=dict)  # project headers' bytes, as parsed
    _run_time_device_variables: set[str] | None = None

    def text(self, start: int, end: int, file: str | None = None) -> str:
        return self.source_of(file)[start:end].decode()

    def source_of(self, file: str | None) -> bytes:
        """The bytes of the file parsed, or of one of the project's headers it includes (as
        libclang read them from disk: the offsets of their cursors index these bytes)."""
        if file is None or file == self.filename:
            return self.source
        if file not in self._headers:
            self._headers[file] = Path(file).read_bytes()
        return self._headers[file]

    def in_main(self, cursor: ci.Cursor) -> bool:
        return bool(_from_main_file()(cursor.location))  # the file parsed: self.filename

    def walk_main(self) -> list[ci.Cursor]:
        """Every cursor under the file's own top-level declarations, in preorder. Walking only
        these (not the included headers' hundreds of thousands of cursors) is what keeps a
        parse fast; callers still check `in_main` for what a macro or include put inside."""
        if self._main_cursors is None:
            self._main_cursors = [c for top in self.tu.cursor.get_children() if self.in_main(top)
                                  for c in top.walk_preorder()]
        return self._main_cursors

    def run_time_device_variables(self) -> set[str]:
        """Names of the file's device-side variables whose contents the program sets as it runs:
        `__device__` globals not declared const (kernels write them, the host copies to and from them) and
        `__constant__` symbols without an initializer or copied to with cudaMemcpyToSymbol. A
        kernel's launch alone does not say what they hold."""
        if self._run_time_device_variables is None:
            copied_to, constants, names = set(), set(), set()
            for c in self.walk_main():
                if c.kind == ci.CursorKind.CALL_EXPR and call_name(c) in ("cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync"):
                    target = next(c.get_arguments(), None)
                    copied_to |= {t.spelling for t in target.get_tokens()} if target is not None else set()
                elif (c.kind in (ci.CursorKind.VAR_DECL, ci.CursorKind.UNEXPOSED_DECL)  # a variable template: unexposed
                      and c.semantic_parent is not None
                      and c.semantic_parent.kind in (ci.CursorKind.TRANSLATION_UNIT, ci.CursorKind.NAMESPACE)):
                    if has_attr(c, ci.CursorKind.CUDADEVICE_ATTR) and not _read_only(c.type):
                        names.add(c.spelling)
                    elif has_attr(c, ci.CursorKind.CUDACONSTANT_ATTR) and c.spelling:
                        constants.add(c.spelling)
                        after_name = self.source[c.location.offset:c.extent.end.offset]
                        if b"=" not in after_name and b"{" not in after_name:
                            names.add(c.spelling)
            self._run_time_device_variables = names | (copied_to & constants)
        return self._run_time_device_variables

    def called_definition(self, call: ci.Cursor) -> ci.Cursor | None:
        """The device function of this file or of a project header that a call calls; for
        dependent calls in templates (no resolved callee) the one definition of that name, if
        there is exactly one."""
        found = self.function_definition(callee(call))
        if found is not None:
            return found
        if (ref := call.referenced) is not None and ref.kind in MEMBER_KINDS:  # `Local l(p)`, `acc.add(v)`
            if (member := self.function_definition(ref, self.members)) is not None:
                return member
        members = [f for m in qualified_members(call) if (f := self.function_definition(m)) is not None]
        if members:
            return members[0] if len(members) == 1 else None
        name = call_name(call)
        same = [f for f in self.functions.values() if f.spelling == name]
        return _as_template(same[0]) if len(same) == 1 else None

    def unresolved_call(self, call: ci.Cursor) -> bool:
        """A call that may run device code of the project which `called_definition` cannot name: an
        object called (a functor or a lambda, often of a template parameter's type, whose operator()
        the instantiation picks), a method of an object of dependent type, or a name that several
        device functions of the project overload. What such code reads or waits on is unknown here."""
        if self.called_definition(call) is not None:
            return False
        ref = call.referenced
        if ref is not None:
            return ref.kind in _POINTER_HOLDERS  # an object (or a function pointer) called
        first = next(call.get_children(), None)
        if first is not None and first.kind == ci.CursorKind.MEMBER_REF_EXPR and not first.spelling:
            return True  # `callable.run(x)` with `callable` of dependent type
        return bool(self.named_candidates(call))

    def named_candidates(self, call: ci.Cursor) -> list[ci.Cursor]:
        """The project's device functions and methods named as `call` names its callee (`Op::apply`
        in a template where Op is a parameter): one of them runs."""
        name = call_name(call)
        return [f for f in (self.functions | self.members).values() if f.spelling == name]

    def functors_launched(self, kernel: ci.Cursor, call: ci.Cursor) -> list[ci.Cursor]:
        """The operator() definitions that `call` (a kernel parameter called: `callable(args...)`) runs,
        as far as the kernel's launches in this file name the parameter's class; [] where none does
        (a launch inside a host template passes an object of dependent type)."""
        params = params_of(kernel)
        ref = call.referenced
        at = next((i for i, p in enumerate(params) if ref is not None and p == ref), None)
        if at is None:
            return []
        found: dict[DefinitionKey, ci.Cursor] = {}
        for c in self.walk_main():
            target = c.referenced if c.kind == ci.CursorKind.CALL_EXPR else None
            if target is None or target.spelling != kernel.spelling or not is_kernel(target):
                continue
            args = list(c.get_children())[2:]  # after the callee and the configuration
            if at >= len(args):
                continue
            cls = args[at].type.get_canonical().get_declaration()
            for m in cls.get_children() if cls is not None else []:
                if m.kind in (ci.CursorKind.CXX_METHOD, ci.CursorKind.FUNCTION_TEMPLATE) and m.spelling == "operator()":
                    d = m.get_definition() or m
                    found[definition_key(d)] = d
        return list(found.values())

    def function_definition(self, callee: ci.Cursor, among: dict[DefinitionKey, ci.Cursor] | None = None
                            ) -> ci.Cursor | None:
        """The definition in this file or a project header of a called function (template or not);
        `among`: where to look, the device functions unless given (the members)."""
        if callee is None or callee.location.file is None:
            return None
        among = self.functions if among is None else among
        return _as_template(among.get(definition_key(callee)) or among.get(definition_key(callee.get_definition())))


def _as_template(found: ci.Cursor | None) -> ci.Cursor | None:
    """A header's function template may be known by the specialization a call instantiated: its
    text is the template's, whose parameters the call binds."""
    template = ci.conf.lib.clang_getSpecializedCursorTemplate(found) if found is not None else None
    return template if template is not None and template.kind == ci.CursorKind.FUNCTION_TEMPLATE else found


class SourceEdits:
    """Replacements of byte ranges of the file parsed, applied in order of position; a range
    that starts inside one already replaced is dropped (it was part of that text)."""

    def __init__(self, tr: Translation, file: str | None = None):
        self.tr = tr
        self.file = file  # a project header's path; None: the file parsed
        self.edits: list[tuple[int, int, str]] = []

    def replace(self, start: int, end: int, text: str) -> None:
        self.edits.append((start, end, text))

    def apply(self) -> str:
        out, pos = [], 0
        for s, e, text in sorted(self.edits):
            if s < pos:
                continue
            out.append(self.tr.text(pos, s, self.file))
            out.append(text)
            pos = e
        out.append(self.tr.source_of(self.file)[pos:].decode())
        return "".join(out)


def definition_key(fn: ci.Cursor | None) -> DefinitionKey:
    """A function definition's identity across the files of one parse: (file, offset)."""
    if fn is None or fn.location.file is None:
        return ("", -1)
    return fn.location.file.name, fn.location.offset


def in_project_header(cursor: ci.Cursor) -> bool:
    """Declared in a header of the user's project: not the parse shim's, the CPU runtime's or
    a system header."""
    file = cursor.location.file
    if file is None or cursor.location.is_in_system_header:
        return False
    path = Path(file.name).resolve()
    return not any(path.is_relative_to(d) for d in (SHIM_DIR.resolve(), RUNTIME_INCLUDE.resolve()))


def overloads(ref: ci.Cursor) -> list[ci.Cursor]:
    """The declarations an OVERLOADED_DECL_REF names (a dependent call's candidates)."""
    lib = ci.conf.lib
    count, decl = lib.clang_getNumOverloadedDecls, lib.clang_getOverloadedDecl
    count.argtypes, count.restype = [ci.Cursor], ctypes.c_uint
    decl.argtypes, decl.restype = [ci.Cursor, ctypes.c_uint], ci.Cursor
    found = []
    for i in range(count(ref)):
        d = decl(ref, i)
        d._tu = ref._tu
        found.append(d)
    return found


def _header_functions(tr: "Translation") -> None:
    """Adds to `tr.functions` the device functions of project headers that the file's kernels and
    device functions call, and those they call in turn: the lowering inlines the synchronizing
    ones (the header's own translation leaves them out) and sets coordinates for the others."""
    pending = list(tr.kernel_definitions) + list(tr.functions.values())
    seen = {definition_key(f) for f in pending}
    while pending:
        fn = pending.pop()
        for c in fn.walk_preorder():
            if c.kind != ci.CursorKind.CALL_EXPR:
                continue
            candidates = [callee(c)]
            if candidates[0] is None:
                candidates = qualified_members(c) or [d for x in c.walk_preorder()
                                                      if x.kind == ci.CursorKind.OVERLOADED_DECL_REF
                                                      for d in overloads(x)][:16]
            if (ref := c.referenced) is not None and ref.kind in MEMBER_KINDS:  # a constructor or a method
                candidates.append(ref)
            elif _dependent_member_call(c):  # `op.reduce(v)`, `B::Tid()`: the header's methods so named
                candidates += _header_methods(tr).get(call_name(c), [])
            for cand in candidates:
                if cand is None or not in_project_header(cand):
                    continue
                d = cand if cand.is_definition() else cand.get_definition()
                if d is None or d.kind not in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE,
                                               *MEMBER_KINDS) or not is_device(d) or is_kernel(d) \
                        or definition_key(d) in seen:
                    continue
                seen.add(definition_key(d))
                is_member = d.kind in MEMBER_KINDS and not d.is_static_method()  # static: called as a function
                (tr.members if is_member else tr.functions)[definition_key(d)] = d
                pending.append(d)


def _dependent_member_call(call: ci.Cursor) -> bool:
    """`op.reduce(v)` or `B::Tid()`, `op` or `B` of a template parameter's type: a method the parse cannot name."""
    first = next(call.get_children(), None)
    return call.referenced is None and first is not None and (
        first.kind == ci.CursorKind.MEMBER_REF_EXPR or first.kind == ci.CursorKind.DECL_REF_EXPR and first.referenced is None)


def _header_methods(tr: "Translation") -> dict[str, list[ci.Cursor]]:
    """The methods of the classes that project headers declare at their top level (or in their
    namespaces), by name."""
    if tr._header_methods is None:
        found: dict[str, list[ci.Cursor]] = {}
        pending = [c for c in tr.tu.cursor.get_children() if not tr.in_main(c) and in_project_header(c)]
        while pending:
            c = pending.pop()
            if c.kind in (ci.CursorKind.NAMESPACE, ci.CursorKind.STRUCT_DECL, ci.CursorKind.CLASS_DECL,
                          ci.CursorKind.CLASS_TEMPLATE):
                pending.extend(c.get_children())
            elif c.kind == ci.CursorKind.CXX_METHOD:
                found.setdefault(c.spelling, []).append(c)
        tr._header_methods = found
    return tr._header_methods


@functools.cache
def _from_main_file():
    """libclang's own test, where the expansion of a location is in the file parsed (comparing file
    names through the bindings cost a third of a parse: the headers have thousands of top-level
    declarations)."""
    test = ci.conf.lib.clang_Location_isFromMainFile
    test.argtypes, test.restype = [ci.SourceLocation], ctypes.c_int
    return test


def parse_translation(source: str, filename: str = "input.cu", include_dirs: list[str] | None = None,
                      options: list[str] | None = None, headers: dict[str, str] | None = None) -> Translation:
    """`headers`: project headers' texts to parse instead of their files (path -> text)."""
    index = ci.Index.create()
    try:
        tu = _parse(index, filename, source, include_dirs, options, headers)
    except ci.TranslationUnitLoadError as exc:
        raise CudaParseError(f"{filename}: libclang could not parse the file ({exc})") from None
    tr = Translation(filename=filename, source=source.encode(), tu=tu,
                     _headers={path: text.encode() for path, text in (headers or {}).items()})
    fatal = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Fatal]
    if fatal:
        raise CudaParseError(f"{_where(fatal[0], filename)}: {fatal[0].spelling}")
    if errors := syntax_errors(tu, filename):
        raise CudaSyntaxError(errors)
    # Names the code itself uses (not words of its comments or strings): fresh names avoid these.
    tr.identifiers = {t.spelling for t in tu.get_tokens(extent=tu.cursor.extent) if t.kind == ci.TokenKind.IDENTIFIER}
    for cur in tr.walk_main():
        if cur.kind not in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE, *MEMBER_KINDS) \
                or not tr.in_main(cur) or not cur.is_definition():
            continue
        if cur.kind in MEMBER_KINDS:
            if is_device(cur):
                tr.members[definition_key(cur)] = cur
        elif is_kernel(cur):
            tr.kernels.setdefault(cur.spelling, cur)
            tr.kernel_definitions.append(cur)
        elif is_device(cur):
            tr.functions[definition_key(cur)] = cur
    _header_functions(tr)
    tr.module = _build_module(tr)
    return tr


def parse_cuda(source: str, filename: str = "input.cu") -> CudaModule:
    """Kernels, device functions, shared/constant variables, launches and runtime calls of a file."""
    return parse_translation(source, filename).module  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------
# Cursor helpers


def has_attr(cursor: ci.Cursor, kind: ci.CursorKind) -> bool:
    return any(c.kind == kind for c in cursor.get_children())


def is_kernel(cursor: ci.Cursor) -> bool:
    return has_attr(cursor, ci.CursorKind.CUDAGLOBAL_ATTR)


def _read_only(t: ci.Type) -> bool:
    """A const variable, or an array of const elements (a `__device__ const` table)."""
    while t.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY):
        t = t.element_type
    return t.is_const_qualified()


# A kernel's feature: it reads or writes device-side variables the program sets as it runs.
RUN_TIME_DEVICE_VARIABLES = "device variables set at run time"


def is_device(cursor: ci.Cursor) -> bool:
    return has_attr(cursor, ci.CursorKind.CUDADEVICE_ATTR)


def strip(c: ci.Cursor) -> ci.Cursor:
    """Past parentheses and implicit conversions (not explicit casts, which may narrow)."""
    while c.kind in (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR) and len(list(c.get_children())) == 1:
        c = next(c.get_children())
    return c


def template_args(spelling: str) -> list[str]:
    """`A, B<C, D>` from the type spelling `X<A, B<C, D>>` (libclang's spelling of a type)."""
    if "<" not in spelling:
        return []
    inner = spelling[spelling.index("<") + 1: spelling.rindex(">")]
    return [a.strip() for a in _split_angles(inner)]


def _split_angles(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<([{"
        depth -= ch in ">)]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur] if cur.strip() else parts


def member_name(member: ci.Cursor, obj: ci.Cursor) -> str:
    """The member named by a dependent member expression (libclang leaves its spelling empty)."""
    for t in member.get_tokens():
        if t.extent.start.offset >= obj.extent.end.offset and t.kind == ci.TokenKind.IDENTIFIER:
            return t.spelling
    return ""


def is_shared(cursor: ci.Cursor) -> bool:
    return cursor.kind == ci.CursorKind.VAR_DECL and has_attr(cursor, ci.CursorKind.CUDASHARED_ATTR)


def is_constant(cursor: ci.Cursor) -> bool:
    return cursor.kind == ci.CursorKind.VAR_DECL and has_attr(cursor, ci.CursorKind.CUDACONSTANT_ATTR)


def body_of(fn: ci.Cursor) -> ci.Cursor | None:
    for c in fn.get_children():
        if c.kind == ci.CursorKind.COMPOUND_STMT:
            return c
    return None


def returns_of(root: ci.Cursor) -> list[ci.Cursor]:
    """The return statements below `root` that return from its function, not from a lambda inside it."""
    found, todo = [], [root]
    while todo:
        c = todo.pop()
        if c.kind == ci.CursorKind.RETURN_STMT:
            found.append(c)
        todo.extend(ch for ch in c.get_children() if ch.kind != ci.CursorKind.LAMBDA_EXPR)
    return sorted(found, key=lambda r: r.extent.start.offset)


def walk_with_parents(root: ci.Cursor):
    """(node, parent) for root (parent None) and every cursor below it, depth first."""
    stack = [(root, None)]
    while stack:
        node, parent = stack.pop()
        yield node, parent
        stack.extend((child, node) for child in node.get_children())


def called_function(node: ci.Cursor) -> str | None:
    """The function a call calls, also where libclang could not resolve it (a host-only <cmath>
    function called from device code parses as an unexposed expression naming its overloads);
    None for anything but a call."""
    if node.kind == ci.CursorKind.CALL_EXPR:
        return call_name(node)
    if node.kind == ci.CursorKind.UNEXPOSED_EXPR:
        first = next(node.get_children(), None)
        if first is not None and first.kind == ci.CursorKind.DECL_REF_EXPR and first.type.spelling == "<overloaded function type>":
            return first.spelling or next((c.spelling for c in first.get_children()), "")
    return None


def in_cooperative_groups(decl: ci.Cursor | None) -> bool:
    parent = decl.semantic_parent if decl is not None else None
    while parent is not None and parent.kind != ci.CursorKind.TRANSLATION_UNIT:
        if parent.kind == ci.CursorKind.NAMESPACE and parent.spelling == COOPERATIVE_GROUPS:
            return True
        parent = parent.semantic_parent
    return False


def cooperative_groups_feature(call: ci.Cursor, tr: "Translation") -> str | None:
    """The unsupported feature a call of a cooperative-groups operation left after the rewrite
    (tools/cuda/coop_groups.py) is, with the operation's name; None for any other call, for the
    constructors and operator objects of the groups and for the calls that make the group values
    the lowered code keeps (`this_thread_block()`, `tiled_partition<N>(g)`). A call named like a
    group's operation on an object of a template parameter's type (`g.shfl(v, 0)`) counts where no
    method of the project is so named; else the type the parameter is bound to decides, which the
    lowering knows where it inlines the call (group_call_on_template_type)."""
    ref = call.referenced
    if ref is None:
        found = group_call_on_template_type(call)
        if found is None or tr.named_candidates(call):
            return None
        return group_call_feature(found[0])
    if ref.kind == ci.CursorKind.CONSTRUCTOR or not in_cooperative_groups(ref):
        return None
    owner = ref.semantic_parent.spelling if ref.kind == ci.CursorKind.CXX_METHOD else ""
    if owner in _CG_OPERATORS:
        return None
    name = ref.spelling
    if ref.kind != ci.CursorKind.CXX_METHOD:
        if name in _CG_KEPT:  # its result's operations are reported where not rewritten
            return None
        return f"cooperative groups {name}"
    if owner == "coalesced_group":
        return f"cooperative groups coalesced_group::{name}"
    return f"cooperative groups {owner}::{name}"


def group_call_on_template_type(call: ci.Cursor) -> tuple[str, ci.Cursor] | None:
    """A dependent call named like a group's operation (`g.shfl(v, 0)`) on a variable or parameter
    whose type is a template parameter of its function: the operation's name and the object's
    expression; None for any other call."""
    head = next(call.get_children(), None)
    if call.referenced is not None or head is None or head.kind != ci.CursorKind.MEMBER_REF_EXPR:
        return None
    obj = next(head.get_children(), None)
    if obj is None or obj.type.spelling not in ("<dependent type>",) and "type-parameter" not in obj.type.get_canonical().spelling:
        return None
    name = next((t.spelling for t in head.get_tokens() if t.extent.start.offset >= obj.extent.end.offset
                 and t.kind == ci.TokenKind.IDENTIFIER), "")
    if name in _CG_METHODS and obj.referenced is not None and _group_typed(obj.referenced):
        return name, obj
    return None


def group_call_feature(name: str) -> str:
    return f"cooperative groups {name} on a group of template type"


def _group_typed(decl: ci.Cursor) -> bool:
    """A variable or parameter whose type is a template parameter of its function (a group, maybe)."""
    return decl.kind in (ci.CursorKind.PARM_DECL, ci.CursorKind.VAR_DECL) and "type-parameter" in decl.type.get_canonical().spelling


def call_name(call: ci.Cursor) -> str:
    """The callee's name, also for dependent calls in templates (whose spelling is empty)."""
    if call.spelling:
        return call.spelling
    if written := written_callee(call):
        return written[-1]
    children = list(call.get_children())
    if children:
        first = children[0]
        for c in first.walk_preorder():
            if c.kind in (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.OVERLOADED_DECL_REF, ci.CursorKind.MEMBER_REF_EXPR) and c.spelling:
                return c.spelling
    return ""


def written_callee(call: ci.Cursor) -> list[str] | None:
    """The names written before a call's argument list, outside template arguments:
    `Qk_dot<T, N>::dot(q, k)` -> [`Qk_dot`, `dot`], `f<2>(x)` -> [`f`], `acc.add(v)` -> [`acc`, `add`];
    None where the call starts otherwise (`(*fp)(x)`)."""
    names, depth = [], 0
    for tok in call.get_tokens():
        s = tok.spelling
        if depth == 0 and s == "(":
            return names or None
        if s == "<" and (depth or names):
            depth += 1
        elif depth and s in (">", ">>"):
            depth = max(0, depth - len(s))
        elif depth == 0 and tok.kind == ci.TokenKind.IDENTIFIER:
            names.append(s)
        elif depth == 0 and s not in ("::", ".", "->", "template"):
            return None
    return None


def qualified_members(call: ci.Cursor) -> list[ci.Cursor]:
    """The static members of a class template that a call in a template names through its
    dependent class (`Qk_dot<T, N>::dot(q, k)`), which clang leaves unresolved."""
    written = written_callee(call)
    callee_expr = next(call.get_children(), None)
    if written is None or len(written) < 2 or callee_expr is None:
        return []
    for c in callee_expr.walk_preorder():
        if c.kind == ci.CursorKind.TEMPLATE_REF and c.spelling == written[-2] and c.referenced is not None:
            return [m for m in c.referenced.get_children() if m.spelling == written[-1]
                    and m.kind in (ci.CursorKind.FUNCTION_TEMPLATE, ci.CursorKind.CXX_METHOD)]
    return []


def callee(call: ci.Cursor) -> ci.Cursor | None:
    ref = call.referenced
    if ref is not None and ref.kind in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE, ci.CursorKind.CXX_METHOD):
        return ref
    for c in call.walk_preorder():
        if c.kind in (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.OVERLOADED_DECL_REF):
            ref = c.referenced
            if ref is not None and ref.kind in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE):
                return ref
            break
    return None


def operator_of(c: ci.Cursor) -> str:
    """The operator of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT / UNARY_OPERATOR cursor."""
    ch = list(c.get_children())
    toks = list(c.get_tokens())
    if c.kind == ci.CursorKind.UNARY_OPERATOR:
        if not toks:
            return ""
        if ch and toks[0].extent.start.offset < ch[0].extent.start.offset:
            return toks[0].spelling
        return toks[-1].spelling
    if not ch:
        return ""
    lhs_end = ch[0].extent.end.offset
    for t in toks:
        if t.extent.start.offset >= lhs_end:
            return t.spelling
    return ""


def calls_in(cursor: ci.Cursor):
    for c in cursor.walk_preorder():
        if c.kind == ci.CursorKind.CALL_EXPR:
            yield c


def template_params(fn: ci.Cursor, tr: Translation) -> list[str]:
    out = []
    for c in fn.get_children():
        if c.kind in (ci.CursorKind.TEMPLATE_TYPE_PARAMETER, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
                      ci.CursorKind.TEMPLATE_TEMPLATE_PARAMETER):
            out.append(tr.text(c.extent.start.offset, c.extent.end.offset))
    return out


def params_of(fn: ci.Cursor) -> list[ci.Cursor]:
    return [c for c in fn.get_children() if c.kind == ci.CursorKind.PARM_DECL]


def launch_bounds(fn: ci.Cursor, tr: Translation) -> str | None:
    toks = [t.spelling for t in fn.get_tokens()]
    if "__launch_bounds__" not in toks:
        return None
    i = toks.index("__launch_bounds__") + 1
    depth, out = 0, []
    for t in toks[i:]:
        depth += t == "("
        depth -= t == ")"
        out.append(t)
        if depth == 0:
            break
    return " ".join(out[1:-1])


# ---------------------------------------------------------------------------------------
# The module summary


def _device_fn_facts(tr: Translation) -> dict[DefinitionKey, tuple[bool, bool, set[str]]]:
    """Per device function (by definition_key): (uses coordinates, has sync, features), closed over calls."""
    direct: dict[DefinitionKey, tuple[bool, bool, set[str], set[DefinitionKey]]] = {}
    for off, fn in (tr.functions | tr.members).items():
        coords, sync, feats, callees = _scan(fn, tr)
        direct[off] = (coords, sync, feats, callees)
    closed: dict[DefinitionKey, tuple[bool, bool, set[str]]] = {}
    for off in direct:
        seen, stack = set(), [off]
        coords, sync, feats = False, False, set()
        while stack:
            cur = stack.pop()
            if cur in seen or cur not in direct:
                continue
            seen.add(cur)
            c, s, f, callees = direct[cur]
            coords, sync, feats = coords or c, sync or s, feats | f
            stack.extend(callees)
        closed[off] = (coords, sync, feats)
    return closed


def _scan(fn: ci.Cursor, tr: Translation) -> tuple[bool, bool, set[str], set[DefinitionKey]]:
    coords = sync = False
    feats: set[str] = set()
    callees: set[DefinitionKey] = set()
    if not is_kernel(fn) and any("volatile" in p.type.spelling for p in params_of(fn)):
        sync = True  # warp-synchronous code on volatile memory: inlined and run in lockstep
        feats.add("warp-synchronous volatile code")
    if is_kernel(fn) and returns_of(fn):
        feats.add("early return")
    for c in fn.walk_preorder():
        k = c.kind
        if k == ci.CursorKind.DECL_REF_EXPR and c.spelling in BUILTIN_VARS and not tr.in_main(c.referenced or c):
            if c.spelling != "warpSize":
                coords = True
        elif k == ci.CursorKind.CALL_EXPR:
            name = call_name(c)
            if name in BARRIERS:
                sync = True
                feats.add("barriers")
            elif name in WARP_EXCHANGE or name in WARP_SYNC:
                sync = True
                feats.add("warp intrinsics")
            elif name in WARP_LOCAL:
                feats.add("warp intrinsics")
            elif re.sub(r"_(block|system)$", "", name) in ATOMICS:
                feats.add("atomics")
            elif name in UNSUPPORTED_CALLS:
                feats.add("unsupported:" + UNSUPPORTED_CALLS[name])
            elif cg := cooperative_groups_feature(c, tr):
                feats.add("unsupported:" + cg)
            elif MATH_INTRINSICS.match(name):
                feats.add("math intrinsics")
            d = tr.called_definition(c)
            if d is not None:
                callees.add(definition_key(d))
                feats.add("device functions")
            elif tr.unresolved_call(c):  # `op.reduce(v)` with `op` of a template's type: any method so named
                callees.update(definition_key(m) for m in tr.named_candidates(c))
        elif k == ci.CursorKind.VAR_DECL and is_shared(c):
            feats.add("dynamic shared memory" if c.type.kind == ci.TypeKind.INCOMPLETEARRAY else "shared memory")
        elif k == ci.CursorKind.DECL_REF_EXPR and c.referenced is not None and is_constant(c.referenced):
            feats.add("constant memory")
        elif k == ci.CursorKind.ASM_STMT:
            feats.add("unsupported:inline PTX asm")
        if k in (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.OVERLOADED_DECL_REF) and \
                c.spelling in tr.run_time_device_variables():
            feats.add(RUN_TIME_DEVICE_VARIABLES)
        if k in (ci.CursorKind.DECL_REF_EXPR, ci.CursorKind.VAR_DECL, ci.CursorKind.PARM_DECL) and c.spelling not in BUILTIN_VARS:
            spelling = c.type.spelling
            if "__half" in spelling or re.search(r"\bhalf2?\b", spelling):
                feats.add("half")
            if "bfloat16" in spelling:
                feats.add("bfloat16")
            if re.search(r"\b(float|double|u?int|u?char|u?short|u?long|u?longlong)[1-4]\b", spelling):
                feats.add("vector types")
        if k == ci.CursorKind.CALL_EXPR and any(t.spelling == "<<<" for t in c.get_tokens()):
            feats.add("unsupported:dynamic parallelism")
    return coords, sync, feats, callees


def _build_module(tr: Translation) -> CudaModule:
    mod = CudaModule(filename=tr.filename)
    for d in tr.tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error and d.location.file is not None and d.location.file.name == tr.filename:
            mod.diagnostics.append(f"{d.location.file.name}:{d.location.line}: {d.spelling}")
    facts = _device_fn_facts(tr)
    for key, fn in sorted(tr.functions.items()):
        if key[0] != tr.filename:
            continue  # a header's: listed by the header's own translation
        coords, sync, _ = facts[key]
        mod.device_functions.append(DeviceFunction(
            name=fn.spelling, file=tr.filename, line=fn.location.line,
            is_template=fn.kind == ci.CursorKind.FUNCTION_TEMPLATE, uses_thread_coordinates=coords, has_sync=sync))
    for name, k in tr.kernels.items():
        coords, sync, feats, callees = _scan(k, tr)
        for off in callees:
            feats |= facts.get(off, (False, False, set()))[2]
        if k.kind == ci.CursorKind.FUNCTION_TEMPLATE:
            feats.add("templates")
        if _has_grid_stride(k, tr):
            feats.add("grid-stride loop")
        mod.kernels.append(KernelInfo(
            name=name, params=[Param(name=p.spelling, type=p.type.spelling) for p in params_of(k)],
            template_params=template_params(k, tr), file=tr.filename, line=k.location.line,
            launch_bounds=launch_bounds(k, tr), features=sorted(feats)))
    _collect_variables(tr, mod)
    _collect_host(tr, mod)
    return mod


def _has_grid_stride(k: ci.Cursor, tr: Translation) -> bool:
    for c in k.walk_preorder():
        if c.kind == ci.CursorKind.FOR_STMT:
            text = tr.text(c.extent.start.offset, c.extent.end.offset).split("{")[0].split(")")[0]
            if "gridDim" in text and "blockDim" in text:
                return True
    return False


def _enclosing_function(cursor: ci.Cursor) -> ci.Cursor | None:
    parent = cursor.semantic_parent
    while parent is not None and parent.kind not in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE,
                                                     ci.CursorKind.TRANSLATION_UNIT, ci.CursorKind.CXX_METHOD):
        parent = parent.semantic_parent
    if parent is None or parent.kind == ci.CursorKind.TRANSLATION_UNIT:
        return None
    return parent


def _collect_variables(tr: Translation, mod: CudaModule) -> None:
    for c in tr.walk_main():
        if c.kind != ci.CursorKind.VAR_DECL or not tr.in_main(c):
            continue
        if is_shared(c):
            fn = _enclosing_function(c)
            mod.shared.append(SharedVar(
                name=c.spelling, type=c.type.spelling, kernel=fn.spelling if fn is not None else None,
                extern=c.type.kind == ci.TypeKind.INCOMPLETEARRAY or c.storage_class == ci.StorageClass.EXTERN,
                file=tr.filename, line=c.location.line))
        elif is_constant(c):
            mod.constants.append(ConstantVar(name=c.spelling, type=c.type.spelling, file=tr.filename, line=c.location.line))


def _collect_host(tr: Translation, mod: CudaModule) -> None:
    seen: set[int] = set()
    for fn in tr.walk_main():
        if fn.kind not in (ci.CursorKind.FUNCTION_DECL, ci.CursorKind.FUNCTION_TEMPLATE, ci.CursorKind.CXX_METHOD):
            continue
        if not tr.in_main(fn) or not fn.is_definition() or is_kernel(fn) or (is_device(fn) and not has_attr(fn, ci.CursorKind.CUDAHOST_ATTR)):
            continue
        for call in calls_in(fn):
            site = parse_launch(call, tr)
            if site is not None and site.through_pointer:  # which kernel it runs is known at run time only
                continue
            if site is not None:
                if site.start in seen:
                    continue
                seen.add(site.start)
                site.info.function = site.function = fn.spelling
                mod.launches.append(site.info)
                continue
            name = call_name(call)
            if name in ("cudaConfigureCall", "__cudaPushCallConfiguration"):
                continue
            if name.startswith("cuda") or name.startswith("cublas") or name.startswith("curand"):
                mod.runtime_calls.append(RuntimeCall(name=name, function=fn.spelling, file=tr.filename, line=call.location.line))


@dataclass
class Launch:
    """A `K<<<...>>>(...)` expression in host code: its record and where its parts are."""

    info: LaunchSite
    start: int
    end: int
    kernel_text: str  # `K` or `K<float, 4>` as written
    config: list[str]
    args_text: str
    function: str | None = None
    through_pointer: bool = False  # `table[i]<<<...>>>(...)`: the callee is a pointer to a kernel, not a kernel


def parse_launch(call: ci.Cursor, tr: Translation) -> Launch | None:
    if call_name(call) in ("__cudaPushCallConfiguration", "cudaConfigureCall"):
        return None
    toks = list(call.get_tokens())
    spellings = [t.spelling for t in toks]
    if "<<<" not in spellings or ">>>" not in spellings:
        return None
    i, j = spellings.index("<<<"), spellings.index(">>>")
    start, end = call.extent.start.offset, call.extent.end.offset
    kernel_text = tr.text(start, toks[i].extent.start.offset).strip()
    config = _split_top(tr.text(toks[i].extent.end.offset, toks[j].extent.start.offset))
    args_text = tr.text(toks[j].extent.end.offset, end).strip()
    if args_text.startswith("(") and args_text.endswith(")"):
        args_text = args_text[1:-1]
    m = re.match(r"^\s*([\w:]+)\s*(<(.*)>)?\s*$", kernel_text, re.S)
    referenced = call.referenced
    if not m or (referenced is not None and referenced.kind in _POINTER_HOLDERS):
        children = list(call.get_children())
        configured = len(children) > 1 and children[1].kind == ci.CursorKind.CALL_EXPR \
            and call_name(children[1]) in ("cudaConfigureCall", "__cudaPushCallConfiguration")
        if not configured:  # the configuration part of a launch, not the launch itself
            return None
        info = LaunchSite(kernel=kernel_text, template_args=None, grid=config[0] if config else "",
                          block=config[1] if len(config) > 1 else "", shared_bytes=config[2] if len(config) > 2 else None,
                          stream=config[3] if len(config) > 3 else None, args=_split_top(args_text),
                          file=tr.filename, line=call.location.line)
        return Launch(info=info, start=start, end=end, kernel_text=kernel_text, config=config, args_text=args_text,
                      through_pointer=True)
    deduced = _template_arguments(call.referenced)
    if deduced is None:  # in a host template: those not written (`k<256><<<g, b>>>(payoff)`) from the arguments
        written = _split_top(m.group(3)) if m.group(2) else []
        deduced = _dependent_template_arguments(call, m.group(1).split("::")[-1], tr, written)
    if deduced is not None:
        # Template arguments deduced from the launch's arguments (or defaulted) are spelled
        # out: the lowered kernel is called through a pointer, which deduces nothing.
        kernel_text = f"{m.group(1)}<{deduced}>"
        m = re.match(r"^\s*([\w:]+)\s*(<(.*)>)?\s*$", kernel_text, re.S)
    name = m.group(1).split("::")[-1]
    targs = m.group(3).strip() if m and m.group(3) else None
    info = LaunchSite(kernel=name, template_args=targs, grid=config[0] if config else "",
                      block=config[1] if len(config) > 1 else "", shared_bytes=config[2] if len(config) > 2 else None,
                      stream=config[3] if len(config) > 3 else None, args=_split_top(args_text),
                      file=tr.filename, line=call.location.line)
    return Launch(info=info, start=start, end=end, kernel_text=kernel_text, config=config, args_text=args_text)


# Functions of a class: what a constructor or a method call calls.
MEMBER_KINDS = (ci.CursorKind.CONSTRUCTOR, ci.CursorKind.CXX_METHOD, ci.CursorKind.DESTRUCTOR,
                ci.CursorKind.CONVERSION_FUNCTION)

# Declarations whose name, launched, is a pointer to a kernel rather than a kernel.
_POINTER_HOLDERS = (ci.CursorKind.VAR_DECL, ci.CursorKind.PARM_DECL, ci.CursorKind.FIELD_DECL)


def _template_arguments(decl: ci.Cursor | None) -> str | None:
    """`float, 4` for a call of a function template's specialization; None for anything else
    (a call in a template, whose arguments are dependent, or arguments that are templates or packs)."""
    if decl is None or decl.kind != ci.CursorKind.FUNCTION_DECL:
        return None
    count = decl.get_num_template_arguments()
    if count <= 0:
        return None
    out, params = [], _template_parameters(decl)
    for i in range(count):
        try:
            kind = decl.get_template_argument_kind(i)
        except ValueError:  # a pack, which the bindings do not know: spelled from the launch's arguments
            return None
        if kind == ci.TemplateArgumentKind.TYPE:
            spelling = decl.get_template_argument_type(i).spelling
            if re.search(r"\(|\blambda\b|\banonymous\b|\bunnamed\b", spelling):
                return None  # a type with no name to spell
            out.append(spelling)
        elif kind == ci.TemplateArgumentKind.INTEGRAL:
            out.append(_integral_argument(decl, i, params[i] if i < len(params) else None))
        else:
            return None
    return ", ".join(out)


def _integral_argument(decl: ci.Cursor, i: int, param: ci.Cursor | None) -> str:
    """A value template argument as C++ spells it: libclang reads `true` for a bool as -1."""
    kind = param.type.get_canonical().kind if param is not None else None
    if kind == ci.TypeKind.BOOL:
        return "true" if decl.get_template_argument_value(i) else "false"
    if kind in (ci.TypeKind.UINT, ci.TypeKind.ULONG, ci.TypeKind.ULONGLONG, ci.TypeKind.USHORT, ci.TypeKind.UCHAR):
        return f"{decl.get_template_argument_unsigned_value(i)}u"
    return str(decl.get_template_argument_value(i))


def _template_parameters(specialization: ci.Cursor) -> list[ci.Cursor]:
    """The template parameters of the template a function specialization was made from."""
    lib = ci.conf.lib
    primary = lib.clang_getSpecializedCursorTemplate
    primary.argtypes, primary.restype = [ci.Cursor], ci.Cursor
    template = primary(specialization)
    if template is None or template.kind is None:
        return []
    template._tu = specialization._tu
    return [c for c in template.get_children() if c.kind in (
        ci.CursorKind.TEMPLATE_TYPE_PARAMETER, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER,
        ci.CursorKind.TEMPLATE_TEMPLATE_PARAMETER)]


_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "&", "&&"}


def _dependent_template_arguments(call: ci.Cursor, kernel: str, tr: Translation, written: list[str]) -> str | None:
    """`T, int` for a launch inside a host template (`k<<<g, b>>>(d_out, d_in, n, 1)` with `T* d_out`),
    whose deduction libclang leaves to the instantiation: the `written` arguments first, then each
    kernel template parameter is what the argument's type has in the place of the parameter's type
    (`T *` against `const T *`). What the host template's own parameters leave unnamed (a pack
    `Args... args` passed on as `args...`, an argument of dependent type to a parameter `T`) is
    spelled from the argument itself, as the compiler deduces it: `std::decay_t<decltype(args)>...`.
    None where a template parameter is bound by nothing, or where everything was written."""
    templates = [c for c in tr.kernel_definitions if c.spelling == kernel and c.kind == ci.CursorKind.FUNCTION_TEMPLATE]
    if not templates:  # a kernel template of a header: the candidates the dependent call names
        named = [d for c in call.walk_preorder() if c.kind == ci.CursorKind.OVERLOADED_DECL_REF and c.spelling == kernel
                 for d in overloads(c)]
        templates = [d.get_definition() or d for d in named if d.kind == ci.CursorKind.FUNCTION_TEMPLATE and is_kernel(d)]
        templates = list({definition_key(t): t for t in templates}.values())
    if len(templates) != 1:
        return None
    template = templates[0]
    parameters = [c for c in template.get_children()
                  if c.kind in (ci.CursorKind.TEMPLATE_TYPE_PARAMETER, ci.CursorKind.TEMPLATE_NON_TYPE_PARAMETER)]
    names = [c.spelling for c in parameters]
    packs = {c.spelling for c in parameters if any(t.spelling == "..." for t in c.get_tokens())}
    params = [c.type.spelling for c in template.get_children() if c.kind == ci.CursorKind.PARM_DECL]
    arguments = list(call.get_children())[2:]  # after the callee and the configuration
    args = [c.type.spelling for c in arguments]
    # A trailing parameter pack (`Args... args`) takes every argument left.
    pack = params[-1][:-3].strip() if params and params[-1].endswith("...") else None
    if len(names) <= len(written) or not (len(args) == len(params) or pack in packs and len(args) >= len(params) - 1):
        return None
    bound: dict[str, str] = dict(zip(names, written))

    def as_deduced(arg: ci.Cursor) -> str:
        """What a by-value parameter deduces from `arg`, spelled from its expression (`args...` keeps its `...`)."""
        text = tr.text(arg.extent.start.offset, arg.extent.end.offset)
        if arg.kind == ci.CursorKind.PACK_EXPANSION_EXPR:
            return f"std::decay_t<decltype({text.rstrip().removesuffix('...')})>..."
        return f"std::decay_t<decltype({text})>"

    if pack in packs:
        bound.setdefault(pack, ", ".join(as_deduced(a) for a in arguments[len(params) - 1:]))
        params, args, arguments = params[:-1], args[:len(params) - 1], arguments[:len(params) - 1]
    for param, arg, argument in zip(params, args, arguments):
        p_words = [w for w in param.replace("*", " * ").split() if w not in _QUALIFIERS]
        a_words = [w for w in arg.replace("*", " * ").split() if w not in _QUALIFIERS]
        while p_words and a_words and p_words[-1] == a_words[-1] == "*":
            p_words.pop(), a_words.pop()
        if len(p_words) == 1 and p_words[0] in names and a_words and "*" not in a_words:
            value = " ".join(a_words)
            if "dependent" in value or "type-parameter" in value:
                if "*" in param or p_words[0] in packs:  # by value (or reference) only: `T` is what decays
                    return None
                value = as_deduced(argument)
            # Two arguments binding one parameter (`IdxT` from `IdxT* n`, `int` from `len`) agree in
            # every instantiation that compiles: the first one is kept.
            bound.setdefault(p_words[0], value)
    if any(n not in bound for n in names):
        return None
    return ", ".join(bound[n] for n in names if bound[n])


def _split_top(text: str) -> list[str]:
    """Split a comma list at depth 0 of (), [], {} (template angle brackets are guessed)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts
