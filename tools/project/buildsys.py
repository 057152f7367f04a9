"""Read a project's build system (Makefile, CMakeLists.txt, or none) for its executables.

We do not run the original build (it needs nvcc and a GPU toolchain). A Makefile is read by
make itself (`make -n`: every variable, pattern rule and substitution expanded, nothing run);
the compiler lines it prints give the executables, the sources of each and the flags each
source is compiled with, and the recipe of its `check`/`test`/`run` target gives the project's
own check. A prerequisite the Makefile names but the project lacks is given to make as old
(-o FILE), as real make would stop there. CMake is read for add_executable/add_test and the definitions and include
directories it sets.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .compile_commands import SOURCE_EXTS, CompileUnit, Command, is_compiler, normalize, read_build_commands, split_commands

CHECK_TARGETS = ("check", "test", "run")
MAKE_TIMEOUT_S = 60


@dataclass
class Target:
    name: str  # the executable, relative to the project root
    units: list[CompileUnit]
    libraries: list[str] = field(default_factory=list)  # -lcublas etc.
    link_flags: list[str] = field(default_factory=list)

    @property
    def sources(self) -> list[str]:
        return [u.source for u in self.units]


@dataclass
class BuildSystem:
    kind: str  # make, cmake, none
    file: str | None
    targets: list[Target]
    check_commands: list[str] = field(default_factory=list)  # from `check`/`test`/`run` targets or add_test
    check_dir: str = "."  # where the check commands run, relative to the project root
    notes: list[str] = field(default_factory=list)  # what could not be read, and what was done instead


def _make(root: Path, makefile: Path, args: list[str]) -> subprocess.CompletedProcess:
    """make -n in the Makefile's directory: commands printed, none run ($(shell) aside)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env["LC_ALL"] = "C"
    return subprocess.run(["make", "-n", "-w", "-f", makefile.name, *args], cwd=makefile.parent, env=env,
                          capture_output=True, text=True, timeout=MAKE_TIMEOUT_S)


MISSING_ROUNDS = 8  # retries of make, each ignoring the missing prerequisites its failure names


def _missing_prerequisites(root: Path, makefile: Path, args: list[str], failed: subprocess.CompletedProcess) -> list[str]:
    """The files a `No rule to make target` failure is about. A rule naming an absent file stops
    make with that file's name; a pattern rule naming one (`%.o: %.cu kernel.cu`) silently does
    not apply, and make names the target it would have made (main.o): make's account of the
    implicit rules it tried (--debug=i) names the absent prerequisite."""
    m = re.search(r"No rule to make target '([^']+)'", failed.stderr)
    if not m:
        return []
    traced = _make(root, makefile, [*args, "--debug=i"])
    tried = re.findall(r"^\s*Trying rule prerequisite '([^']+)'\.$", traced.stdout, re.M)
    absent = [name for name in dict.fromkeys(tried) if not (makefile.parent / name).exists()]
    return absent or ([m[1]] if not (makefile.parent / m[1]).exists() else [])


def _make_ignoring_missing(root: Path, makefile: Path, args: list[str]) -> tuple[subprocess.CompletedProcess, list[str]]:
    """make -n, as the Makefile intends where it names a prerequisite the project lacks: real
    make stops there, so that file is given as old (-o FILE: exists, is not remade) and make is
    run again. The files ignored are returned too."""
    ignored: list[str] = []
    result = _make(root, makefile, args)
    for _ in range(MISSING_ROUNDS):
        if result.returncode == 0:
            break
        ignore = [arg for name in ignored for arg in ("-o", name)]
        # a goal the Makefile lacks (`make check`) is no missing prerequisite
        missing = [name for name in _missing_prerequisites(root, makefile, [*ignore, *args], result)
                   if name not in ignored and name not in args]
        if not missing:
            break
        ignored += missing
        result = _make(root, makefile, [*ignore, *(arg for name in missing for arg in ("-o", name)), *args])
    return result, ignored


def _printed_commands(root: Path, makefile: Path, output: str) -> list[Command]:
    """The commands of `make -n -w` output, each with its directory relative to the root
    (recursive makes say where they enter and leave)."""
    here = str(makefile.parent.relative_to(root)) or "."
    stack = [here]
    commands: list[Command] = []
    for line in output.splitlines():
        m = re.match(r"^\S*make(?:\[\d+\])?: (Entering|Leaving) directory ['`](.*)'$", line)
        if m:
            if m[1] == "Entering":
                path = Path(m[2]).resolve()
                stack.append(str(path.relative_to(root)) if path.is_relative_to(root) else str(path))
            elif len(stack) > 1:
                stack.pop()
            continue
        if re.match(r"^\S*make(?:\[\d+\])?: ", line):
            continue
        commands += split_commands(line, normalize(".", stack[-1]))
    return commands


def _plural_files(names: list[str]) -> str:
    return ("a prerequisite " if len(names) == 1 else "prerequisites ") + ", ".join(names)


def parse_makefile(root: Path, path: Path, variables: list[str] = ()) -> BuildSystem:
    """`variables`: NAME=VALUE given to make, as on its command line."""
    rel = str(path.relative_to(root))
    here = str(path.parent.relative_to(root)) or "."
    try:
        built, missing = _make_ignoring_missing(root, path, [*variables, "-B"])
    except FileNotFoundError:
        return BuildSystem("make", rel, [], notes=["`make` is not installed: the Makefile could not be read"])
    except subprocess.TimeoutExpired:
        return BuildSystem("make", rel, [], notes=[f"`make -n` on {rel} ran past {MAKE_TIMEOUT_S}s"])
    if built.returncode != 0:
        why = (built.stderr.strip().splitlines() or ["no message"])[-1]
        return BuildSystem("make", rel, [], notes=[f"`make -n` on {rel} failed: {why}"])
    notes = [f"{rel} names {_plural_files(missing)} the project lacks: ignored (make -o), as the build "
             f"reads as intended without {'it' if len(missing) == 1 else 'them'}"] if missing else []
    links = read_build_commands(_printed_commands(root, path, built.stdout))
    targets = [Target(link.output, link.units, link.libraries, link.link_flags) for link in links]
    checks: list[str] = []
    outputs = [os.path.relpath(t.name, here) for t in targets]
    keep = [arg for name in [*outputs, *missing] for arg in ("-o", name)]
    for goal in CHECK_TARGETS:
        try:
            run, missed = _make_ignoring_missing(root, path, [*variables, *keep, goal])
        except subprocess.TimeoutExpired:
            continue
        if run.returncode != 0:
            continue
        for command_line in run.stdout.splitlines():
            if re.match(r"^\S*make(?:\[\d+\])?: ", command_line) or not command_line.strip() or command_line.strip().startswith("#"):
                continue
            commands = split_commands(command_line, ".")
            if commands and all(is_compiler(c) for c in commands):
                continue  # a build step the check target depends on
            checks.append(command_line.strip())
        if checks:
            if missed:
                notes.append(f"`make {goal}` needs {_plural_files(missed)} the project lacks: ignored (make -o)")
            break
    return BuildSystem("make", rel, targets, checks, here, notes)


def _cmake_words(text: str) -> list[str]:
    return [w.strip('"') for w in text.split()]


def parse_cmake(root: Path, path: Path) -> BuildSystem:
    text = re.sub(r"(?m)#.*$", "", path.read_text(errors="replace"))
    here = path.parent.relative_to(root)

    def rel(p: str) -> str:
        p = p.replace("${CMAKE_CURRENT_SOURCE_DIR}", ".").replace("${CMAKE_SOURCE_DIR}", ".").replace("${PROJECT_SOURCE_DIR}", ".")
        return normalize(str(here), p)

    common: list[str] = []
    for m in re.finditer(r"\badd_definitions\s*\(([^)]*)\)", text, re.I):
        common += [w for w in _cmake_words(m[1]) if w.startswith(("-D", "-U"))]
    for m in re.finditer(r"\badd_compile_definitions\s*\(([^)]*)\)", text, re.I):
        common += [f"-D{w}" for w in _cmake_words(m[1])]
    for m in re.finditer(r"\binclude_directories\s*\(([^)]*)\)", text, re.I):
        common += [f for w in _cmake_words(m[1]) if w not in ("BEFORE", "AFTER", "SYSTEM") for f in ("-I", rel(w))]
    per_target: dict[str, list[str]] = {}
    for m in re.finditer(r"\btarget_compile_definitions\s*\(\s*(\S+)([^)]*)\)", text, re.I):
        per_target.setdefault(m[1], []).extend(
            f"-D{w}" for w in _cmake_words(m[2]) if w not in ("PRIVATE", "PUBLIC", "INTERFACE"))
    for m in re.finditer(r"\btarget_include_directories\s*\(\s*(\S+)([^)]*)\)", text, re.I):
        per_target.setdefault(m[1], []).extend(
            f for w in _cmake_words(m[2]) if w not in ("PRIVATE", "PUBLIC", "INTERFACE", "SYSTEM") for f in ("-I", rel(w)))
    libs_of: dict[str, list[str]] = {}
    for m in re.finditer(r"target_link_libraries\s*\(\s*(\S+)([^)]*)\)", text, re.I):
        libs_of[m[1]] = [w for w in m[2].split() if w not in ("PRIVATE", "PUBLIC", "INTERFACE")]
    targets: list[Target] = []
    for m in re.finditer(r"add_executable\s*\(\s*(\S+)([^)]*)\)", text, re.I):
        flags = common + per_target.get(m[1], [])
        units = [CompileUnit(rel(s), list(flags)) for s in _cmake_words(m[2]) if s.endswith(SOURCE_EXTS)]
        libs = [re.sub(r"^(CUDA::)?", "", lib).replace("cublas_static", "cublas") for lib in libs_of.get(m[1], [])]
        targets.append(Target(rel(m[1]), units, libs))
    checks = [m[1].strip() for m in re.finditer(r"add_test\s*\(\s*NAME\s+\S+\s+COMMAND\s+([^)]*)\)", text, re.I)]
    return BuildSystem("cmake", str(path.relative_to(root)), targets, checks, str(here) or ".")


BUILD_FILES = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")  # read in this order


def read_build_system(root: Path, make_variables: list[str] = ()) -> BuildSystem:
    """The first build file, top-most first, that names an executable; else `none`, its notes
    saying why each build file gave nothing. `make_variables` (NAME=VALUE) are given to make."""
    root = root.resolve()  # make reports the directories it enters resolved
    candidates = [root / name for name in BUILD_FILES if (root / name).is_file()]
    for name in BUILD_FILES:
        candidates += [p for p in sorted(root.rglob(name)) if p.parent != root and p not in candidates]
    notes: list[str] = []
    for path in candidates:
        build = parse_cmake(root, path) if path.name == "CMakeLists.txt" else parse_makefile(root, path, make_variables)
        if build.targets:
            return build
        notes += build.notes or [f"{build.file} names no executable that we can read"]
    return BuildSystem("none", None, [], notes=notes)
