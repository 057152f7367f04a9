"""g++ and nvcc invocations in a sandbox, with diagnostics parsed into records."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Sequence

from sandboxes import Limits, RunResult, Sandbox

# -fno-math-errno: CUDA's math never sets errno, and the check g++ adds around every sqrtf for it
# keeps loops with a square root scalar (results are the same: IEEE square roots either way)
DEFAULT_CXXFLAGS = ("-O3", "-march=native", "-fopenmp", "-fno-math-errno", "-std=c++17")
DEFAULT_NVCCFLAGS = ("-O3", "-std=c++17")
# A ported project is built with no multiply-add fused into an FMA: its host code as nvcc's host
# compiler builds it (for baseline x86-64), and its faithful kernels alike, so that they round as
# the program's own host reference does (a check that quantizes, or compares bit for bit, fails
# on a difference in the last bit). Tuned kernels fuse, as nvcc's --fmad=true does (they are
# wrapped in KERNEL_FMA_BEGIN/END), and are kept only where the project's check passes with them.
HOST_NO_FMA = "-ffp-contract=off"
KERNEL_FMA_BEGIN = '#pragma GCC push_options\n#pragma GCC optimize("fp-contract=fast")'
KERNEL_FMA_END = "#pragma GCC pop_options"

# gcc/clang: file:line:col: severity: message   (column optional)
_GCC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<sev>fatal error|error|warning|note):\s*(?P<msg>.*)$")
# nvcc front end (EDG): file(line): severity: message   or  file(line): warning #177-D: message
_EDG = re.compile(r"^(?P<file>[^()\s][^()]*)\((?P<line>\d+)\):\s*(?P<sev>catastrophic error|error|warning|remark|note)(?:\s*#[\w-]+)?:\s*(?P<msg>.*)$")
# the linker's own message line: "main.o:(.text+0x5): undefined reference to `g()'"
_LINK = re.compile(r"^(?P<file>[^:\s]+):\(\.\w+[^)]*\):\s*(?P<msg>(undefined reference|multiple definition).*)$")
# ptxas / nvlink / linker: "ptxas error   : message", "/usr/bin/ld: message"
# g++ names the function its next diagnostics are in: "main.cu: In function 'void k(int*)':",
# "In member function", "In instantiation of '... [with T = float]'"; "At global scope:" leaves it
_GCC_CONTEXT = re.compile(r"^(?P<file>[^:\s][^:]*): (?:In (?:static )?(?:member )?(?:function|constructor|destructor|"
                          r"instantiation of) [‘'](?P<signature>.*)[’']|(?P<outside>At global scope)):$")
_TOOL = re.compile(r"^(?P<tool>ptxas|nvlink|ld|/usr/bin/ld|collect2)[^:]*?(?:\s+(?P<sev>error|warning|fatal))?\s*:\s*(?P<msg>.*)$")


@dataclass
class Diagnostic:
    file: str
    line: int | None
    column: int | None
    severity: str  # error, warning, note
    message: str
    tool: str = "g++"
    function: str | None = None  # the function g++ says it is in, qualified (`ns::k`), without arguments

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return f"{where}: {self.severity}: {self.message}"

    def to_dict(self) -> dict:
        return asdict(self)


def _severity(raw: str) -> str:
    raw = raw.lower()
    if "error" in raw or raw == "fatal":
        return "error"
    return "note" if raw in ("note", "remark") else "warning"


def parse_diagnostics(text: str, tool: str = "g++") -> list[Diagnostic]:
    """Parse gcc-style, nvcc (EDG) style and ptxas/linker diagnostics from compiler output."""
    diags: list[Diagnostic] = []
    function = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if m := _GCC_CONTEXT.match(line):
            function = None if m["outside"] else function_name(m["signature"])
        elif m := _EDG.match(line):
            diags.append(Diagnostic(m["file"], int(m["line"]), None, _severity(m["sev"]), m["msg"].strip(), "nvcc"))
        elif m := _GCC.match(line):
            col = int(m["col"]) if m["col"] else None
            diags.append(Diagnostic(m["file"], int(m["line"]), col, _severity(m["sev"]), m["msg"].strip(), tool,
                                    function))
        elif m := _LINK.match(line):
            diags.append(Diagnostic(m["file"], None, None, "error", m["msg"].strip(), "ld"))
        elif m := _TOOL.match(line):
            sev = _severity(m["sev"] or ("error" if "undefined reference" in line or "returned" in line else "warning"))
            diags.append(Diagnostic(m["tool"], None, None, sev, m["msg"].strip(), m["tool"].rsplit("/", 1)[-1]))
    return diags


def function_name(signature: str) -> str:
    """`void ns::k<float>(dim3, int*) [with T = float]` -> `ns::k`: the name before the argument list
    (the last word outside brackets), without its template arguments."""
    depth, end = 0, len(signature)
    for i, ch in enumerate(signature):
        if ch in "<([" and not (ch == "(" and depth == 0):
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == "(" and depth == 0:
            end = i
            break
    words, depth, word = [], 0, ""
    for ch in signature[:end]:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == " " and depth == 0:
            words.append(word)
            word = ""
        elif depth == 0 and ch != ">":
            word += ch
    return word or (words[-1] if words else signature)


@dataclass
class BuildResult:
    ok: bool
    command: list[str]
    output: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    run: RunResult | None = None

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def summary(self, limit: int = 20) -> str:
        shown = (self.errors or self.warnings)[:limit]
        if not shown:
            return "ok" if self.ok else self.output[-2000:]
        return "\n".join(str(d) for d in shown)


def _build(sandbox: Sandbox, argv: list[str], tool: str, timeout_s: float, limits: Limits | None) -> BuildResult:
    result = sandbox.run(argv, timeout_s=timeout_s, limits=limits)
    output = (result.stdout + "\n" + result.stderr).strip()
    diags = parse_diagnostics(output, tool)
    if result.timed_out:
        diags.append(Diagnostic(tool, None, None, "error", f"compiler timed out after {timeout_s:g}s", tool))
    ok = result.ok and not any(d.severity == "error" for d in diags)
    return BuildResult(ok, argv, output, diags, result)


def compile_cpp(
    sandbox: Sandbox,
    sources: Sequence[str],
    output: str,
    *,
    cxx: str = "g++",
    flags: Sequence[str] = DEFAULT_CXXFLAGS,
    extra: Sequence[str] = (),
    shared: bool = False,
    include_dirs: Sequence[str] = (),
    timeout_s: float = 180.0,
    limits: Limits | None = None,
) -> BuildResult:
    """Compile C/C++ sources (paths inside the sandbox) to an executable or shared library.
    A shared library's own calls bind locally (-fno-semantic-interposition, where the compiler
    is GCC-compatible), as in an executable: otherwise an entry cannot inline the kernels it
    launches, and every kernel is compiled blind to its launch shape (measured: 13x slower)."""
    argv = [cxx, *compile_args(cxx, flags, shared=shared), *[f"-I{d}" for d in include_dirs]]
    argv += [*sources, "-o", output, *extra]
    return _build(sandbox, argv, "g++", timeout_s, limits)


def compile_args(cxx: str, flags: Sequence[str], *, shared: bool) -> list[str]:
    """What compile_cpp passes before the include directories and sources."""
    return [*flags, *(["-shared", "-fPIC", *_local_binding(cxx)] if shared else [])]


def _local_binding(cxx: str) -> list[str]:
    name = cxx.rsplit("/", 1)[-1]
    return ["-fno-semantic-interposition"] if re.match(r"^(g\+\+|gcc|c\+\+|cc|clang\+\+|clang)(-\d+)?$", name) else []


def compile_cuda(
    sandbox: Sandbox,
    sources: Sequence[str],
    output: str,
    *,
    nvcc: str = "nvcc",
    flags: Sequence[str] = DEFAULT_NVCCFLAGS,
    ptx_only: bool = False,
    extra: Sequence[str] = (),
    timeout_s: float = 300.0,
    limits: Limits | None = None,
) -> BuildResult:
    """Compile CUDA sources with nvcc; `ptx_only` is the fast syntax-and-semantics check."""
    argv = [nvcc, *flags, *(["-ptx"] if ptx_only else []), *sources, "-o", output, *extra]
    big = limits or Limits(timeout_s=timeout_s, memory_mb=16384)  # cicc reserves much address space
    return _build(sandbox, argv, "nvcc", timeout_s, big)
