"""Read a project's build system (Makefile, CMakeLists.txt, or none) for its executables.

We do not run the original build (it needs nvcc and a GPU toolchain); we only learn which
sources make which executable and how the project checks itself, then write our own build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_EXTS = (".cu", ".cpp", ".cc", ".cxx", ".c")


@dataclass
class Target:
    name: str
    sources: list[str]  # relative to the project root
    libraries: list[str] = field(default_factory=list)  # -lcublas etc.


@dataclass
class BuildSystem:
    kind: str  # make, cmake, none
    file: str | None
    targets: list[Target]
    check_commands: list[str] = field(default_factory=list)  # from `check`/`test` targets or add_test


def _strip_make_comments(text: str) -> str:
    return re.sub(r"(?m)(?<!\\)#.*$", "", text.replace("\\\n", " "))


def _make_variables(text: str) -> dict[str, str]:
    out = {}
    for m in re.finditer(r"(?m)^\s*([A-Za-z_][\w]*)\s*[:?+]?=\s*(.*)$", text):
        out.setdefault(m[1], m[2].strip())
    return out


def _expand(value: str, variables: dict[str, str], depth: int = 0) -> str:
    if depth > 5:
        return value
    return re.sub(r"\$[({](\w+)[)}]", lambda m: _expand(variables.get(m[1], ""), variables, depth + 1), value)


def parse_makefile(root: Path, path: Path) -> BuildSystem:
    text = _strip_make_comments(path.read_text(errors="replace"))
    variables = _make_variables(text)
    targets: list[Target] = []
    checks: list[str] = []
    rule = re.compile(r"(?m)^([^\s:=#][^:=]*?)\s*:(?!=)\s*([^\n]*)\n((?:\t[^\n]*\n?)*)")
    for m in rule.finditer(text):
        names = _expand(m[1], variables).split()
        prereqs = _expand(m[2], variables).split()
        recipe = _expand(m[3], variables)
        if not names or names[0].startswith("."):
            continue
        if names[0] in ("check", "test", "run"):
            for line in recipe.splitlines():
                cmd = line.strip().lstrip("@")
                if cmd:
                    checks.append(cmd)
            continue
        words = recipe.split()
        sources = [w for w in prereqs + words if w.endswith(SOURCE_EXTS) and (root / path.parent.relative_to(root) / w).is_file()]
        if not sources or not any(("nvcc" in recipe) or ("$(NVCC)" in m[3]) or w.endswith(".cu") for w in sources + [recipe]):
            continue
        if "-c" in words and not any(w == "-o" for w in words):
            continue  # an object rule
        out_name = names[0]
        if "-o" in words:
            nxt = words[words.index("-o") + 1] if words.index("-o") + 1 < len(words) else ""
            if nxt and nxt != "$@" and not nxt.endswith(".o"):
                out_name = nxt
        if out_name.endswith(".o"):
            continue
        rel = path.parent.relative_to(root)
        libs = sorted({w[2:] for w in words if w.startswith("-l")})
        seen = list(dict.fromkeys(sources))
        targets.append(Target(out_name, [str(rel / s) if str(rel) != "." else s for s in seen], libs))
    return BuildSystem("make", str(path.relative_to(root)), targets, checks)


def parse_cmake(root: Path, path: Path) -> BuildSystem:
    text = re.sub(r"(?m)#.*$", "", path.read_text(errors="replace"))
    rel = path.parent.relative_to(root)
    targets: list[Target] = []
    checks: list[str] = []
    libs_of: dict[str, list[str]] = {}
    for m in re.finditer(r"target_link_libraries\s*\(\s*(\S+)([^)]*)\)", text, re.I):
        libs_of[m[1]] = [w for w in m[2].split() if w not in ("PRIVATE", "PUBLIC", "INTERFACE")]
    for m in re.finditer(r"add_executable\s*\(\s*(\S+)([^)]*)\)", text, re.I):
        sources = [s for s in m[2].split() if s.endswith(SOURCE_EXTS)]
        libs = [re.sub(r"^(CUDA::)?", "", lib).replace("cublas_static", "cublas") for lib in libs_of.get(m[1], [])]
        targets.append(Target(m[1], [str(rel / s) if str(rel) != "." else s for s in sources], libs))
    for m in re.finditer(r"add_test\s*\(\s*NAME\s+\S+\s+COMMAND\s+([^)]*)\)", text, re.I):
        checks.append(m[1].strip())
    return BuildSystem("cmake", str(path.relative_to(root)), targets, checks)


def read_build_system(root: Path) -> BuildSystem:
    """The top-most CMakeLists.txt or Makefile; `none` when there is neither."""
    for name, parser in (("CMakeLists.txt", parse_cmake), ("Makefile", parse_makefile), ("makefile", parse_makefile)):
        path = root / name
        if path.is_file():
            return parser(root, path)
    for path in sorted(root.rglob("CMakeLists.txt")) + sorted(root.rglob("Makefile")):
        return (parse_cmake if path.name == "CMakeLists.txt" else parse_makefile)(root, path)
    return BuildSystem("none", None, [])
