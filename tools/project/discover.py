"""Discovery: which files use CUDA, their kernels, launches, runtime and library calls,
the build system, the executables and how the project checks itself."""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .buildsys import BuildSystem, Target, read_build_system
from .compile_commands import CompileUnit

CUDA_EXTS = (".cu", ".cuh")
CXX_EXTS = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl")
SKIP_DIRS = {".git", "build", "cmake-build-debug", "cmake-build-release", "__pycache__", ".venv", "node_modules"}

_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?(?:inline\s+)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
_LAUNCH = re.compile(r"\b(\w+)\s*(?:<[^<>;]*>)?\s*<<<")
_RUNTIME = re.compile(r"\b(cuda[A-Z]\w*)\s*\(")
# a library's function called or class template named (not a variable of the project's own that
# merely starts like one); preprocessor lines are no calls
_LIBRARY = re.compile(r"\b(cublas\w+|cusparse\w+|cufft\w+|cudnn\w+|curand\w+|nccl\w+|thrust::\w+|cub::\w+)\s*[(<{]")
_PREPROCESSOR_LINE = re.compile(r"(?m)^[ \t]*#.*$")
# what a source defines: macros, and functions (a name, its parameters, then a body)
_DEFINED = re.compile(r"#\s*define\s+(\w+)|\b(\w+)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*(?:const\s*)?\{")
_USES_CUDA = re.compile(r"__global__|__device__|<<<|\bcuda[A-Z]\w*\s*\(|#\s*include\s*[<\"](cuda|cublas|curand|thrust|cub/)")
_SELF_CHECK = re.compile(r"\b(PASS(ED)?|FAIL(ED)?|Test passed|Test failed|Result\s*=\s*PASS)\b", re.I)
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")
BINARY_SHARE = 0.1  # of control bytes, past which a file that is no UTF-8 is no legacy-encoded source either

log = logging.getLogger(__name__)


@dataclass
class KernelSite:
    name: str
    file: str
    line: int


@dataclass
class CallSite:
    name: str
    file: str
    line: int


@dataclass
class SourceFile:
    path: str  # relative to the project root
    uses_cuda: bool
    has_main: bool
    kernels: list[KernelSite] = field(default_factory=list)
    launches: list[CallSite] = field(default_factory=list)
    runtime_calls: list[CallSite] = field(default_factory=list)
    library_calls: list[CallSite] = field(default_factory=list)


@dataclass
class Project:
    root: Path
    sources: list[SourceFile]
    build: BuildSystem
    executables: list[Target]
    self_checks: list[str]  # how the project checks itself, in words
    _preludes: dict[str, tuple[str, list[str]] | None] = field(default_factory=dict, init=False, repr=False)

    @property
    def cuda_sources(self) -> list[SourceFile]:
        return [s for s in self.sources if s.uses_cuda]

    @property
    def outside_sources(self) -> list[str]:
        """Sources beside the root that the project includes (`../common/util.cuh`; see outside_files)."""
        return [s.path for s in self.sources if s.path.startswith("..")]

    @property
    def kernels(self) -> list[KernelSite]:
        return [k for s in self.sources for k in s.kernels]

    @property
    def library_calls(self) -> list[CallSite]:
        return [c for s in self.sources for c in s.library_calls]

    def preprocessor_options(self, path: str) -> list[str]:
        """The -D, -U, -I, -include and -fopenmp options the build compiles `path` with (-I absolute); for
        a file that is no unit of its own (a header, an included .cu), the first unit's."""
        units = [u for t in self.executables for u in t.units]
        unit = next((u for u in units if u.source == path), units[0] if units else None)
        out: list[str] = []
        flags = unit.flags if unit else []
        i = 0
        while i < len(flags):
            flag = flags[i]
            if flag in ("-I", "-isystem", "-iquote", "-idirafter") and i + 1 < len(flags):
                out += [flag, str(self.root / flags[i + 1])]
                i += 1
            elif flag == "-include" and i + 1 < len(flags):
                out += [flag, flags[i + 1]]
                i += 1
            elif flag.startswith(("-D", "-U")) or flag == "-fopenmp":
                out.append(flag)
            i += 1
        return out


    def prelude(self, path: str) -> tuple[str, list[str]] | None:
        """For a file the build compiles only where another includes it (a header, an included .cu):
        the text its includer has before the `#include` (its own includes and #defines, what the
        file may use without including), through includers of includers, and the includers'
        directories (where that text's own includes are found); None for a unit of its own or a
        file nothing includes."""
        if path not in self._preludes:
            self._preludes[path] = self._prelude(path)
        return self._preludes[path]

    def _prelude(self, path: str) -> tuple[str, list[str]] | None:
        units = {u.source for t in self.executables for u in t.units}
        text, dirs, seen = "", [], {path}
        while path not in units:
            found = self._includer(path, units)
            if found is None or found[0] in seen:
                break
            includer, offset = found
            seen.add(includer)
            text = (self.root / includer).read_text(errors="replace")[:offset] + "\n" + text
            dirs.append(str((self.root / includer).parent))
            path = includer
        return (text, dirs) if text else None

    def _includer(self, path: str, units: set[str]) -> tuple[str, int] | None:
        """The source that includes `path` (a unit first) and the offset of its #include line."""
        for source in sorted(self.sources, key=lambda s: (s.path not in units, s.path)):
            options = self.preprocessor_options(source.path)
            dirs = [options[i + 1] for i, flag in enumerate(options[:-1]) if flag == "-I"]
            text = (self.root / source.path).read_text(errors="replace")
            for m in _INCLUDE.finditer(text):
                for base in (self.root / Path(source.path).parent, *map(Path, dirs), self.root):
                    if (base / m[1]).is_file():
                        if os.path.normpath(os.path.relpath(base / m[1], self.root)) == path:
                            return source.path, m.start()
                        break
        return None


class DiscoveryError(Exception):
    """Nothing to port: the message says what was looked for and where."""


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def without_comments(text: str) -> str:
    """Blank out comments and string literals, keeping offsets and line numbers."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m[0])

    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', blank, text, flags=re.S)


def scan_source(root: Path, path: Path) -> SourceFile:
    raw = path.read_text(errors="replace")
    text = without_comments(raw)
    rel = os.path.relpath(path, root)  # `../common/util.cuh` for a file beside the root (outside_files)
    uses = path.suffix in CUDA_EXTS or bool(_USES_CUDA.search(raw))
    src = SourceFile(rel, uses, bool(re.search(r"\bint\s+main\s*\(", text)))
    if not uses:
        return src
    found = [(m[1], _line_of(text, m.start()), _has_body(text, m.end() - 1)) for m in _KERNEL.finditer(text)]
    with_body = {name for name, _, body in found if body}
    # a prototype (`__global__ void k(int*);` before main) is no kernel of its own where the file defines it
    src.kernels = [KernelSite(name, rel, line) for name, line, body in found if body or name not in with_body]
    src.launches = [CallSite(m[1], rel, _line_of(text, m.start())) for m in _LAUNCH.finditer(text)]
    src.runtime_calls = [CallSite(m[1], rel, _line_of(text, m.start())) for m in _RUNTIME.finditer(text)]
    defined = {m[1] or m[2] for m in _DEFINED.finditer(text)}
    code = _PREPROCESSOR_LINE.sub(lambda m: " " * len(m[0]), text)
    src.library_calls = [CallSite(m[1], rel, _line_of(code, m.start())) for m in _LIBRARY.finditer(code)
                         if m[1] not in defined]
    return src


def _has_body(text: str, paren: int) -> bool:
    """Whether the parameter list opening at text[paren] is followed by a body (`{`), not by `;`."""
    depth = 0
    for i in range(paren, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            rest = text[i + 1:].lstrip()
            return rest.startswith("{")
    return False


def not_text(path: Path) -> str | None:
    """Why the file is no source text (NUL bytes; neither UTF-8 nor text in an 8-bit encoding), or None."""
    data = path.read_bytes()
    if b"\0" in data:
        return "not a text file (it holds NUL bytes)"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        share = len(_CONTROL.findall(data)) / len(data)
        if share > BINARY_SHARE:
            return f"not a text file (not UTF-8, and {share:.0%} of its bytes are control characters)"
    return None


def _files(root: Path) -> list[Path]:
    out = []
    for path in sorted(root.rglob("*")):
        if any(part in SKIP_DIRS for part in path.relative_to(root).parts):
            continue
        if path.is_file() and path.suffix in CUDA_EXTS + CXX_EXTS:
            out.append(path)
    return out


_INCLUDE = re.compile(r'(?m)^\s*#\s*include\s*"([^"]+)"')
_ANY_INCLUDE = re.compile(r'(?m)^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')


def included_sources(root: Path, sources: list[SourceFile]) -> set[str]:
    """Sources that another source #includes (`#include "kernels.cu"`): part of that unit, not units of their own."""
    paths = {s.path for s in sources}
    out = set()
    for s in sources:
        for m in _INCLUDE.finditer((root / s.path).read_text(errors="replace")):
            for base in (Path(s.path).parent, Path(".")):
                candidate = os.path.normpath(base / m[1])
                if candidate in paths and candidate != s.path:
                    out.add(candidate)
    return out


def included_closure(root: Path, source: str, include_dirs: list[str]) -> set[str]:
    """The project files that `source` includes, directly or through other project files (relative
    to the root): `#include "..."` looked up beside its includer, then in `include_dirs`;
    `#include <...>` in `include_dirs` only, as the compiler does (a system header is found in none)."""
    seen: set[str] = set()
    todo = [source]
    while todo:
        current = todo.pop()
        try:
            text = (root / current).read_text(errors="replace")
        except OSError:
            continue
        for m in _ANY_INCLUDE.finditer(text):
            bases = (Path(current).parent, *map(Path, include_dirs), Path(".")) if m[1] else map(Path, include_dirs)
            for base in bases:
                candidate = os.path.normpath(base / (m[1] or m[2]))
                if (root / candidate).is_file():
                    if candidate not in seen:
                        seen.add(candidate)
                        todo.append(candidate)
                    break
    return seen


# Folders of the port's own output (OUT/...) that a folder beside the project may not be copied over.
OUTPUT_FOLDERS = {"src", "cuda_cpu_include", "kernels", "captures"}


def outside_files(root: Path, sources: list[SourceFile], executables: list[Target]) -> tuple[list[str], list[str]]:
    """Files outside the root that the project's sources include (`#include "../common/util.cuh"`,
    or a header found through `-I../common`), relative to the root, and notes on those the port
    cannot carry. The port tree is OUT/src, so a file one folder up (`../NAME/...`) has its place
    at OUT/NAME/..., where the project's own relative paths and -I options find it unchanged."""
    units = [u for t in executables for u in t.units]
    found: set[str] = set()
    for s in sources:
        unit = next((u for u in units if u.source == s.path), units[0] if units else None)
        flags = unit.flags if unit else []
        dirs = [f[2:] for f in flags if f.startswith("-I") and len(f) > 2]
        dirs += [flags[i + 1] for i, f in enumerate(flags[:-1]) if f in ("-I", "-iquote", "-isystem")]
        found |= {rel for rel in included_closure(root, s.path, dirs) if rel.startswith("..")}
    carried, notes = [], []
    for rel in sorted(found):
        parts = Path(rel).parts
        if len(parts) > 2 and parts[0] == ".." and parts[1] != ".." and parts[1] not in OUTPUT_FOLDERS:
            carried.append(rel)
        else:
            notes.append(f"{rel}: included from outside the project, where the port cannot place its copy; "
                         f"the build may not find it (port the folder that holds both)")
    return carried, notes


def _executables(root: Path, build: BuildSystem, sources: list[SourceFile]) -> list[Target]:
    if build.targets:
        return build.targets
    # No build file we can read: one executable per file with main(), linked with every source
    # without one that no other source includes.
    inside = included_sources(root, sources)
    compiled = [s for s in sources if Path(s.path).suffix in (".cu", ".cpp", ".cc", ".cxx", ".c") and s.path not in inside]
    shared = [CompileUnit(s.path) for s in compiled if not s.has_main]
    return [Target(str(Path(s.path).with_suffix("")), [CompileUnit(s.path), *shared]) for s in compiled if s.has_main]


def discover(root: Path, make_variables: list[str] = ()) -> Project:
    """The project at `root`; `make_variables` (NAME=VALUE) are given to make where it reads a Makefile."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise DiscoveryError(f"{root}: not a directory")
    files = _files(root)
    if not files:
        raise DiscoveryError(f"{root}: no C, C++ or CUDA sources found")
    texts, skipped = [], []
    for path in files:
        if why := not_text(path):
            skipped.append(f"{path.relative_to(root)}: {why}; left out of the port, its copy untouched")
            log.warning(skipped[-1])
        else:
            texts.append(path)
    sources = [scan_source(root, p) for p in texts]
    if not any(s.uses_cuda for s in sources):
        raise DiscoveryError(f"{root}: no CUDA found (no .cu/.cuh files, kernels, launches or CUDA runtime calls)")
    build = read_build_system(root, make_variables)
    build.notes += skipped
    executables = _executables(root, build, sources)
    outside, notes = outside_files(root, sources, executables)
    sources += [scan_source(root, root / rel) for rel in outside]
    build.notes += notes
    checks = [f"`{c}` from {build.file}" for c in build.check_commands]
    for s in sources:
        text = (root / s.path).read_text(errors="replace")
        if s.has_main and _SELF_CHECK.search(text):
            checks.append(f"{s.path} prints PASS/FAIL")
        if s.has_main and re.search(r"return\s+(?:[^;]*\?\s*)?[^;]*\b(1|EXIT_FAILURE)\b", text):
            checks.append(f"{s.path} returns a non-zero exit code on failure")
    return Project(root, sources, build, executables, checks)
