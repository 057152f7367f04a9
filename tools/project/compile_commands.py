"""Compiler command lines as a build prints them (`make -n`), read into compile units and links,
and nvcc's options translated to the g++ options that matter to the port."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

SOURCE_EXTS = (".cu", ".cpp", ".cc", ".cxx", ".c", ".C", ".c++")
COMPILERS = {"nvcc", "g++", "gcc", "c++", "cc", "clang", "clang++", "icpx", "icpc", "icx", "icc", "mpicxx", "mpicc",
             "mpic++", "nvc++", "nvc", "hipcc", "dpcpp"}
C_COMPILERS = {"gcc", "cc", "clang", "icx", "icc", "mpicc", "nvc"}
# Options whose value is the next word (nvcc's and gcc's); only some of them matter to g++.
_WITH_VALUE = {"-o", "-I", "-D", "-U", "-include", "-isystem", "-iquote", "-idirafter", "-x", "-Xcompiler",
               "--compiler-options", "-Xlinker", "--linker-options", "-Xptxas", "--ptxas-options", "-l", "-L",
               "-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code", "-ccbin",
               "--compiler-bindir", "-maxrregcount", "--maxrregcount", "-MF", "-MT", "-MQ", "--std", "-std",
               "-rdc", "--relocatable-device-code", "-Xarchive", "-Xnvlink", "--threads", "-t", "--keep-dir",
               "-odir", "--output-directory", "--default-stream", "-dlto", "-ftz", "-prec-div", "-prec-sqrt",
               "-fmad", "--diag-suppress", "-diag-suppress"}
# gcc options to keep from -Xcompiler (warnings and optimisation levels are ours to choose).
_HOST_KEEP = ("-D", "-U", "-I", "-f", "-include", "-isystem", "-std=", "-pthread", "-m")
_HOST_DROP = ("-fPIC", "-fpic", "-fno-exceptions", "-fvisibility")


@dataclass
class CompileUnit:
    source: str  # relative to the project root
    flags: list[str] = field(default_factory=list)  # g++ options of the original compile: -D, -I, -std, ...
    language: str = ""  # cuda, c++ or c (by a C compiler); "" where no build said: by the file's suffix

    @property
    def is_cuda(self) -> bool:
        return self.language == "cuda" or (not self.language and self.source.endswith(".cu"))


@dataclass
class Link:
    output: str  # relative to the project root
    units: list[CompileUnit]
    libraries: list[str] = field(default_factory=list)  # -lm, -lpthread, -lcublas, ...
    link_flags: list[str] = field(default_factory=list)  # -L..., -fopenmp, -pthread


@dataclass
class Command:
    """One simple command of a build line, with the directory it runs in (relative to the root)."""

    words: list[str]
    cwd: str

    @property
    def program(self) -> str:
        return os.path.basename(self.words[0]) if self.words else ""


def split_commands(line: str, cwd: str) -> list[Command]:
    """The simple commands of a shell line (`cd d && nvcc ...; ./x`), following `cd`."""
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:  # an unbalanced quote: not a line we can read
        return []
    out: list[Command] = []
    current: list[str] = []
    for word in words + [";"]:
        if word and set(word) <= set(";&|()"):
            if current:
                if current[0] == "cd" and len(current) == 2:
                    cwd = normalize(cwd, current[1])
                else:
                    out.append(Command(current, cwd))
            current = []
        else:
            current.append(word)
    return out


def normalize(cwd: str, path: str) -> str:
    joined = os.path.normpath(os.path.join(cwd, path)) if not os.path.isabs(path) else os.path.normpath(path)
    return "." if joined in ("", ".") else joined


def _strip_wrappers(words: list[str]) -> list[str]:
    """`ccache nvcc`, `FOO=1 nvcc`, `time nvcc`: the compiler itself."""
    i = 0
    while i < len(words) and ("=" in words[i] and not words[i].startswith("-") or words[i] in ("ccache", "time", "env")):
        i += 1
    return words[i:]


def is_compiler(command: Command) -> bool:
    words = _strip_wrappers(command.words)
    return bool(words) and os.path.basename(words[0]) in COMPILERS


def host_options(value: str) -> list[str]:
    """The g++ options of an `-Xcompiler A,B` value that change what the port compiles."""
    out = []
    for opt in value.split(","):
        opt = opt.strip()
        if opt.startswith(_HOST_KEEP) and not opt.startswith(_HOST_DROP) and not opt.startswith("-march"):
            out.append(opt)
    return out


@dataclass
class _Parsed:
    sources: list[str] = field(default_factory=list)
    objects: list[str] = field(default_factory=list)
    output: str | None = None
    compile_only: bool = False
    flags: list[str] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)
    link_flags: list[str] = field(default_factory=list)
    cuda_language: bool = False  # -x cu


def _parse_compiler(words: list[str], cwd: str) -> _Parsed:
    p = _Parsed()
    i = 1
    while i < len(words):
        w = words[i]
        name, _, attached = w.partition("=") if w.startswith(("--", "-std", "-Xcompiler")) else (w, "", "")
        takes_value = w in _WITH_VALUE or (w[:2] in ("-I", "-D", "-U", "-l", "-L", "-o", "-x") and len(w) == 2)
        value = words[i + 1] if takes_value and i + 1 < len(words) else None
        if takes_value:
            i += 1
        if w == "-c":
            p.compile_only = True
        elif w == "-o" or (w.startswith("-o") and len(w) > 2 and not w.startswith("-od")):
            p.output = normalize(cwd, value if w == "-o" else w[2:]) if (value or len(w) > 2) else None
        elif w in ("-I", "-isystem", "-iquote", "-idirafter") or (w.startswith("-I") and len(w) > 2):
            path = value if value is not None else w[2:]
            p.flags += ["-I" if w.startswith("-I") else w, normalize(cwd, path)]
        elif w in ("-D", "-U") or (w[:2] in ("-D", "-U") and len(w) > 2):
            p.flags.append(w[:2] + (value if value is not None else w[2:]))
        elif w == "-include" and value:
            p.flags += ["-include", value]
        elif name in ("-std", "--std"):
            standard = attached or value or ""
            p.flags.append(f"-std={standard}")
        elif w in ("-Xcompiler", "--compiler-options") or name in ("-Xcompiler", "--compiler-options"):
            opts = host_options(value if value is not None else attached)
            p.flags += [o for o in opts if o != "-pthread"]  # -fopenmp: _OPENMP in its host code
            p.link_flags += [o for o in opts if o in ("-fopenmp", "-pthread")]
        elif w == "-x":
            p.cuda_language = value == "cu"
        elif w in ("-l",) or (w.startswith("-l") and len(w) > 2):
            p.libraries.append(value if value is not None else w[2:])
        elif w in ("-L",) or (w.startswith("-L") and len(w) > 2):
            p.link_flags.append("-L" + normalize(cwd, value if value is not None else w[2:]))
        elif w in ("-fopenmp", "-pthread"):
            if w == "-fopenmp":  # _OPENMP in its host code
                p.flags.append(w)
            p.link_flags.append(w)
        elif not w.startswith("-") and value is None:
            path = normalize(cwd, w)
            if w.endswith(SOURCE_EXTS):
                p.sources.append(path)
            elif w.endswith((".o", ".obj", ".a")):
                p.objects.append(path)
        i += 1
    return p


def _default_object(source: str) -> str:
    return str(PurePosixPath(source).with_suffix(".o").name)


def _language(compiler: str, source: str, cuda: bool) -> str:
    if cuda or (compiler in ("nvcc", "hipcc") and source.endswith(".cu")):
        return "cuda"
    return "c" if compiler in C_COMPILERS and source.endswith(".c") else "c++"


def read_build_commands(commands: list[Command]) -> list[Link]:
    """The executables a build makes: each link's output and the compile units it links, with
    the flags each unit was compiled with. Archives (`ar rcs lib.a x.o`) are followed."""
    objects: dict[str, CompileUnit] = {}
    archives: dict[str, list[str]] = {}
    links: list[Link] = []
    for command in commands:
        words = _strip_wrappers(command.words)
        if not words:
            continue
        program = os.path.basename(words[0])
        if program == "ar" and len(words) >= 3:
            members = [normalize(command.cwd, w) for w in words[2:] if not w.startswith("-")]
            if members:
                archives[members[0]] = members[1:]
            continue
        if program not in COMPILERS:
            continue
        p = _parse_compiler(words, command.cwd)
        units = [CompileUnit(s, list(p.flags), _language(program, s, p.cuda_language)) for s in p.sources]
        if p.compile_only:
            if len(units) == 1:
                out = p.output or normalize(command.cwd, _default_object(units[0].source))
                objects[out] = units[0]
            else:
                for unit in units:
                    objects[normalize(command.cwd, _default_object(unit.source))] = unit
            continue
        linked: list[CompileUnit] = list(units)
        for obj in p.objects:
            for member in archives.get(obj, [obj]):
                if member in objects and objects[member] not in linked:
                    linked.append(objects[member])
        if not linked:
            continue
        output = p.output or normalize(command.cwd, "a.out")
        links.append(Link(output, linked, list(dict.fromkeys(p.libraries)), list(dict.fromkeys(p.link_flags))))
    return links
