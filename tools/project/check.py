"""Build the port tree in a sandbox, run the project's own check, compare with the original's output."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sandboxes import Limits, Sandbox
from tools.build import Diagnostic, parse_diagnostics

from .tree import RUNTIME_DIR, PortTree

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b", re.I)
_FAIL = re.compile(r"\b(FAIL(ED|URE)?|ERROR|MISMATCH|INCORRECT)\b")
_PASS = re.compile(r"\b(PASS(ED)?|OK|SUCCESS|CORRECT)\b")


@dataclass
class BuildOutcome:
    ok: bool
    output: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


@dataclass
class CheckOutcome:
    command: str
    passed: bool
    detail: str
    stdout: str = ""
    returncode: int | None = None


def build_in_sandbox(tree: PortTree, sandbox: Sandbox, *, jobs: int = 2, timeout_s: float = 600) -> BuildOutcome:
    sandbox.put_path(tree.root, "src")
    sandbox.put_path(tree.root.parent / RUNTIME_DIR, RUNTIME_DIR)
    result = sandbox.run(["make", "-f", "Makefile.cpu", f"-j{jobs}"], cwd="src", timeout_s=timeout_s,
                         limits=Limits(timeout_s=timeout_s, memory_mb=8192, cpu_s=int(timeout_s) * 2))
    output = (result.stdout + result.stderr).strip()
    return BuildOutcome(result.ok, output, parse_diagnostics(output))


def compare_numbers(expected: str, got: str, rtol: float = 1e-3, atol: float = 1e-5) -> str | None:
    """None when the numbers printed agree within tolerance, else where they first differ.

    Text is not compared: timings and addresses differ between a GPU and a CPU run.
    Lines mentioning time are skipped for that reason.
    """
    def numbers(text: str) -> list[tuple[int, float]]:
        out = []
        for no, line in enumerate(text.splitlines(), 1):
            if re.search(r"\b(time|ms|sec|seconds|elapsed|GB/s|GFLOP)", line, re.I):
                continue
            out += [(no, float(m)) for m in _NUMBER.findall(line)]
        return out

    exp, act = numbers(expected), numbers(got)
    if len(exp) != len(act):
        return f"the original printed {len(exp)} numbers, the port {len(act)}"
    for (line, e), (_, a) in zip(exp, act):
        same_special = (e != e and a != a) or (e == a)
        if not same_special and not abs(a - e) <= atol + rtol * abs(e):
            return f"line {line}: original {e:g}, port {a:g}"
    return None


def run_check(
    sandbox: Sandbox,
    command: str,
    *,
    cwd: str = "src",
    expected_output: str | None = None,
    timeout_s: float = 300,
    env: dict[str, str] | None = None,
) -> CheckOutcome:
    """Run one check command in the built tree and judge it: exit code, PASS/FAIL lines, and
    (where a recorded original output exists) the printed numbers."""
    result = sandbox.run(command, cwd=cwd, timeout_s=timeout_s, env=env,
                         limits=Limits(timeout_s=timeout_s, memory_mb=8192, cpu_s=int(timeout_s) * 4))
    out = result.stdout + result.stderr
    if result.timed_out:
        return CheckOutcome(command, False, f"timed out after {timeout_s:g}s", out, None)
    if result.returncode != 0:
        return CheckOutcome(command, False, f"exit status {result.returncode}: {result.tail(300)}", out, result.returncode)
    if m := _FAIL.search(result.stdout):
        line = next(l for l in result.stdout.splitlines() if _FAIL.search(l))
        return CheckOutcome(command, False, f"printed {m[0]!r}: {line.strip()[:200]}", out, 0)
    if expected_output is not None:
        diff = compare_numbers(expected_output, result.stdout)
        if diff:
            return CheckOutcome(command, False, f"output differs from the original run: {diff}", out, 0)
        return CheckOutcome(command, True, "exit 0; numbers match the original run", out, 0)
    said = "printed PASS" if _PASS.search(result.stdout) else "no FAIL printed"
    return CheckOutcome(command, True, f"exit 0; {said}", out, 0)


def default_check_commands(targets: list[str], build_checks: list[str]) -> list[str]:
    """The project's own check commands, else each executable run with no arguments."""
    if build_checks:
        fixed = []
        for cmd in build_checks:
            first = cmd.split()[0] if cmd.split() else ""
            fixed.append(f"./{cmd}" if first in targets else cmd)
        return fixed
    return [f"./{t}" for t in targets]


def read_expected(path: Path | None) -> str | None:
    return path.read_text() if path and path.is_file() else None
