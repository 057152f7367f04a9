"""The import rules hold: pyproject.toml's import-linter contracts (agent > bench > tools > sandboxes;
tools.optimize's search > pipeline > passes > analysis and base), and two more read from the source
itself: no module imports another's private (underscore) names, and tools.optimize's modules import
each other without a cycle (its passes once imported the registry inside a function to dodge one)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent", "bench", "tools", "sandboxes")


def test_lint_imports_keeps_every_contract():
    lint = Path(sys.executable).parent / "lint-imports"
    assert lint.exists(), f"no {lint}: install the dev extra (pip install -e '.[dev]')"
    run = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_no_module_imports_private_names_of_another():
    found = [f"{path.relative_to(ROOT)}:{node.lineno}: from {'.' * node.level}{node.module or ''} import {alias.name}"
             for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(node, ast.ImportFrom)
             for alias in node.names if _private(alias.name)]
    assert not found, "a name shared between modules gets a public name:\n" + "\n".join(found)


def test_tools_optimize_has_no_import_cycle():
    found = cycles(imports_within(ROOT / "tools" / "optimize"))
    assert not found, "modules that import each other, directly or not:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_a_cycle_is_found_however_long():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def imports_within(package_dir: Path) -> dict[str, set[str]]:
    """Each module of the package (dotted name) -> the package's modules it imports, function-local
    imports included; `from P import name` counts P, and P.name where that is a module."""
    files = {_module_name(path): path for path in package_dir.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's package, one level up per dot after the first
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            graph[name] |= {target for target in targets if target in files and target != name}
    return graph


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found
