"""The CPU port tree: a copy of the project with CUDA sources translated in place, the CPU
runtime headers beside it, and a Makefile for g++. The user's repository is never written."""

from __future__ import annotations

import re
import shlex
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tools.build import HOST_NO_FMA

from .buildsys import Target
from .compile_commands import CompileUnit
from .discover import SKIP_DIRS, CallSite, Project, included_closure, without_comments

RUNTIME_DIR = "cuda_cpu_include"


@dataclass
class FileTranslation:
    path: str
    cpp: str | None  # None when the file could not be translated
    unsupported: list[dict] = field(default_factory=list)  # {feature, file, line, message}
    error: str | None = None


@dataclass
class PortTree:
    root: Path  # OUT/src
    makefile: Path
    translations: list[FileTranslation]
    unmapped_calls: list[CallSite]
    targets: list[Target] = field(default_factory=list)
    cxxflags: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)  # the project's files outside its root (`../NAME/...`)

    @property
    def unsupported(self) -> list[dict]:
        return [u for t in self.translations for u in t.unsupported]

    @property
    def beside(self) -> list[str]:
        """The folders beside OUT/src that hold files the project includes from outside its root."""
        return sorted({Path(rel).parts[1] for rel in self.outside})


def copy_project(src: Path, dest: Path) -> None:
    def ignore(directory: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_DIRS}

    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=ignore, symlinks=False)
    # The copy is ours to write (translations, tuned files, the build's objects) even where the
    # user's repository is read-only: copytree carries its modes over.
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
# A function-like macro: its name, its parameters and its body over continued lines.
_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.M)


def pasted_identifiers(text: str) -> set[str]:
    """The identifiers a macro pastes together (`cublas##P##gemv`) in each of its uses in `text`
    with plain arguments (`FOR_TYPE(D, d, double)` defines cublasDgemv)."""
    names: set[str] = set()
    for macro in _MACRO.finditer(text):
        params = [p.strip() for p in macro[2].split(",")]
        if "##" not in macro[3]:
            continue
        for use in re.finditer(rf"\b{macro[1]}\(([^()]*)\)", text[macro.end():]):
            args = dict(zip(params, (a.strip() for a in use[1].split(","))))
            if len(args) != len(params):
                continue
            body = _IDENTIFIER.sub(lambda token: args.get(token[0], token[0]), macro[3])
            names.update(_IDENTIFIER.findall(re.sub(r"\s*##\s*", "", body)))
    return names


def defined_identifiers(include_dir: Path) -> set[str]:
    """Every identifier our CPU runtime headers mention in code (a comment that names what is not
    provided does not count), those their macros paste together included: a library call is
    mapped when we define it."""
    names: set[str] = set()
    for header in include_dir.rglob("*"):
        if header.is_file():
            text = without_comments(header.read_text(errors="replace"))
            names.update(_IDENTIFIER.findall(text))
            names.update(pasted_identifiers(text))
    return names


def unmapped_library_calls(project: Project, include_dir: Path) -> list[CallSite]:
    known = defined_identifiers(include_dir)
    return [c for c in project.library_calls if c.name.split("::")[-1] not in known]


_OLD_CXX_STANDARDS = {"-std=c++98", "-std=c++03", "-std=c++0x", "-std=c++11", "-std=c++14", "-std=c++1y",
                      "-std=gnu++98", "-std=gnu++03", "-std=gnu++11", "-std=gnu++14"}
# -fopenmp defines _OPENMP; a CUDA source compiled without it by nvcc saw no _OPENMP (the runtime's
# own pragmas read CUDA_CPU_OPENMP instead). `$(filter ...)`: only where CXXFLAGS turns OpenMP on.
_NO_OPENMP_MACRO = "$(if $(filter -fopenmp,$(CXXFLAGS)),-U_OPENMP -DCUDA_CPU_OPENMP)"
_CUDA_LIBRARIES = {"cublas", "cublasLt", "curand", "cudart", "cudart_static", "cuda", "cufft", "cusparse", "cusolver",
                   "nvToolsExt"}


def _make_word(word: str) -> str:
    """A word for a make recipe: quoted for the shell, `$` doubled for make."""
    return shlex.quote(word).replace("$", "$$")


def object_path(target: Target, unit: CompileUnit) -> str:
    return f"cpu_obj/{target.name}/{unit.source}.o"


def write_makefile(root: Path, targets: list[Target], cxxflags: list[str]) -> Path:
    """A Makefile that builds each executable where the original build would have put it, each
    source compiled with the options the original build gave it (our runtime needs C++17 at
    least), CUDA sources with nvcc's host-side macros (__CUDACC__; __CUDA_ARCH__ stays undefined)."""
    lines = [
        "# Generated by `agent port`: builds the CPU port with g++ and OpenMP.",
        "CXX ?= g++",
        "CC ?= gcc",
        f"CXXFLAGS ?= {' '.join([*cxxflags, HOST_NO_FMA])}",
        f"CFLAGS ?= {' '.join(f for f in [*cxxflags, HOST_NO_FMA] if not f.startswith('-std='))}",
        f"CPPFLAGS += -I$(CURDIR)/../{RUNTIME_DIR}",
        "",
        f"all: {' '.join(t.name for t in targets)}",
        "",
    ]
    for t in targets:
        objects = []
        for unit in t.units:
            obj = object_path(t, unit)
            objects.append(obj)
            flags = " ".join(_make_word(f) for f in unit.flags if f not in _OLD_CXX_STANDARDS or unit.language == "c")
            if unit.is_cuda:
                # What nvcc predefines for the host side of a .cu file; and no strict aliasing:
                # device code reads arrays through other types (reinterpret_cast<float4 *>),
                # which g++ -O3 otherwise reorders wrongly once the kernel is lowered to host code.
                # nvcc defines _OPENMP in host code only where told to (-Xcompiler -fopenmp).
                hidden = "" if "-fopenmp" in unit.flags else _NO_OPENMP_MACRO
                flags = f"-D__CUDACC__ -D__NVCC__ -fno-strict-aliasing {hidden} {flags}"
            if unit.language == "c":
                compile_line = f"$(CC) $(CPPFLAGS) $(CFLAGS) {flags} -x c -c {_make_word(unit.source)} -o $@"
            else:
                compile_line = f"$(CXX) $(CPPFLAGS) $(CXXFLAGS) {flags} -x c++ -c {_make_word(unit.source)} -o $@"
            lines += [f"{obj}: {unit.source}", "\t@mkdir -p $(@D)", "\t" + " ".join(compile_line.split()), ""]
        libs = " ".join(f"-l{lib}" for lib in t.libraries if lib not in _CUDA_LIBRARIES)
        link_flags = " ".join(_make_word(f) for f in t.link_flags)
        lines += [f"{t.name}: {' '.join(objects)}",
                  "\t" + " ".join(f"$(CXX) $(CXXFLAGS) {link_flags} {' '.join(objects)} -o $@ {libs}".split()), ""]
    lines += [".PHONY: all", ""]
    path = root / "Makefile.cpu"
    path.write_text("\n".join(lines))
    return path


def build_port_tree(
    project: Project,
    out: Path,
    translate: Callable[[str, str], FileTranslation],
    runtime_include: Path,
    cxxflags: list[str],
    extra_headers: tuple[Path, ...] = (),
) -> PortTree:
    """Copy, translate every CUDA-using source in place, add the runtime headers and a Makefile."""
    out.mkdir(parents=True, exist_ok=True)
    root = out / "src"
    copy_project(project.root, root)
    for rel in project.outside_sources:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(project.root / rel, root / rel)
    shutil.copytree(runtime_include, out / RUNTIME_DIR, dirs_exist_ok=True)
    for header in extra_headers:
        shutil.copy2(header, out / RUNTIME_DIR / header.name)
    translations = []
    for source in project.cuda_sources:
        path = root / source.path
        result = translate(path.read_text(errors="replace"), source.path)
        if result.cpp is not None:
            path.write_text(result.cpp)
        translations.append(result)
    targets = [Target(t.name, [CompileUnit(u.source, list(u.flags), u.language) for u in t.units], list(t.libraries),
                      list(t.link_flags)) for t in project.executables]
    _runtime_first(root, targets, {t.path for t in translations if t.cpp is not None})
    makefile = write_makefile(root, targets, cxxflags)
    return PortTree(root, makefile, translations, unmapped_library_calls(project, runtime_include), targets, cxxflags,
                    project.outside_sources)


def _runtime_first(root: Path, targets: list[Target], translated: set[str]) -> None:
    """C++ units that include a translated header get the CPU runtime and the lowered kernels'
    support code first, as nvcc gives every .cu file cuda_runtime.h before its own code: the
    translated header includes both, and the unit's macros defined before it (`#define T int`)
    would otherwise rewrite their code. (The header's own copy of the support code is then skipped
    by its include guard.)"""
    for target in targets:
        for unit in target.units:
            if unit.is_cuda or unit.language == "c" or "cuda_runtime.h" in unit.flags:
                continue
            include_dirs = [f[2:] for f in unit.flags if f.startswith("-I") and len(f) > 2]
            include_dirs += [unit.flags[i + 1] for i, f in enumerate(unit.flags[:-1]) if f == "-I"]
            if included_closure(root, unit.source, include_dirs) & translated:
                unit.flags[:0] = ["-include", "cuda_runtime.h", "-include", "cuda_cpu/lowering_support.h"]


def add_sources(tree: PortTree, beside: str, sources: list[str]) -> None:
    """Link extra sources into every executable that builds `beside`, and rewrite the Makefile."""
    for target in tree.targets:
        if beside in target.sources:
            flags = next(u.flags for u in target.units if u.source == beside)
            target.units += [CompileUnit(s, list(flags)) for s in sources if s not in target.sources]
    write_makefile(tree.root, tree.targets, tree.cxxflags)


def drop_sources(tree: PortTree, sources: list[str]) -> None:
    """Unlink sources added by add_sources from every executable, and rewrite the Makefile."""
    for target in tree.targets:
        target.units = [u for u in target.units if u.source not in sources]
    write_makefile(tree.root, tree.targets, tree.cxxflags)
