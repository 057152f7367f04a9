"""Build the port tree in a sandbox, run the project's own check, compare with the original's output."""

from __future__ import annotations

import os
import re
import shlex
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sandboxes import Limits, Sandbox
from tools.build import Diagnostic, parse_diagnostics

from .tree import RUNTIME_DIR, PortTree

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)\b", re.I)
# Verdict words of self-checking programs: FAIL/ERROR in capitals, "fail(ed)", "incorrect" and
# "mismatch" in any case, and a non-zero count of failures or errors. A bare "error" is a
# measured quantity as often as a verdict ("max error: 1e-7"), "failures" a topic as often as a
# count ("generate assertion failures"): neither counts alone.
_FAIL = re.compile(r"\b(FAIL(ED|URES?|S)?|ERROR|MISMATCH(ES)?|INCORRECT)\b"
                   r"|(?i:\b(fail(s|ed)?|incorrect|mismatch(es|ed)?)\b)"
                   r"|\b[1-9]\d*\s+(?i:failures?|errors?|mismatch(es)?)\b")
_NONE_BEFORE = re.compile(r"(?i)\b(0|no|zero|without)\s+$")
_NONE_AFTER = re.compile(r"(?i)^\s*(:|=)\s*0+(\.0*)?\b(?!\.\d*[1-9])|^\s+as\s+expected")
_PASS = re.compile(r"(?i)\b(pass(ed|es)?|ok|success(ful(ly)?)?|succeeded|correct|match(es)?)\b")


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
    seconds: float = 0.0
    # passed; ran (exit 0, but the program printed no verdict); failed (the program said so, exited non-zero,
    # or printed other numbers); timeout and crashed (killed by a signal): the program reached no verdict.
    verdict: str = "passed"
    out_of_memory: bool = False  # crashed as a refused allocation does (and said no other reason)
    killed: bool = False  # ended by a signal (a timeout's too): what it writes at exit is not written


def failure_line(stdout: str) -> str | None:
    """The first line of a program's output that says it failed, or None."""
    for line in stdout.splitlines():
        for m in _FAIL.finditer(line):
            if _NONE_BEFORE.search(line[:m.start()]) or _NONE_AFTER.search(line[m.end():]):
                continue
            return line.strip()
    return None


def says_verdict(text: str) -> bool:
    """Whether `text` (a line a program prints) says passed or failed."""
    return _PASS.search(text) is not None or failure_line(text) is not None


def build_in_sandbox(tree: PortTree, sandbox: Sandbox, *, jobs: int = 2, timeout_s: float = 600) -> BuildOutcome:
    sandbox.put_path(tree.root, "src")
    sandbox.put_path(tree.root.parent / RUNTIME_DIR, RUNTIME_DIR)
    for folder in tree.beside:
        sandbox.put_path(tree.root.parent / folder, folder)
    result = sandbox.run(["make", "-f", "Makefile.cpu", f"-j{jobs}"], cwd="src", timeout_s=timeout_s,
                         limits=Limits(timeout_s=timeout_s, memory_mb=8192, cpu_s=int(timeout_s) * 2))
    output = (result.stdout + result.stderr).strip()
    return BuildOutcome(result.ok, output, parse_diagnostics(output))


# Lines whose numbers differ between a GPU's run and a CPU's by nature: timings, rates, clocks, and
# the device's own name (an original run prints "NVIDIA H200", the port "CPU (OpenMP)").
_MACHINE_LINE = re.compile(
    r"\b(time|timing|timed|elapsed|latency|ms|us|usec|µs|ns|sec|secs|seconds?|bandwidth|throughput|"
    r"[GMKT]i?B\s*/\s*s|[GMKT]?FLOP/?s?|GFLOPS|TFLOPS|GOPS|[GM]?(?:elem|op|item|pt)s?/s|per second|"
    r"NVIDIA|GeForce|Tesla|Quadro|Radeon|CPU \(OpenMP\))\b|\d{1,2}:\d{2}:\d{2}", re.I)


def compare_numbers(expected: str, got: str, rtol: float = 1e-3, atol: float = 1e-5) -> str | None:
    """None when the numbers printed agree within tolerance, else where they first differ.

    Text is not compared, and lines about the machine (timings, rates, clock times, the device's
    name) are skipped on both sides: they differ between a GPU and a CPU run. A number agrees
    within rtol/atol or, where the original printed decimals, within one unit of its last digit
    (`6.17` against `6.18`: a float summed in another order, rounded to two decimals).
    """
    def numbers(text: str) -> list[tuple[int, str]]:
        out = []
        for no, line in enumerate(text.splitlines(), 1):
            if _MACHINE_LINE.search(line):
                continue
            out += [(no, m) for m in _NUMBER.findall(line)]
        return out

    def last_digit(text: str) -> float:
        """One unit of the last digit of a number printed rounded; 0 for an integer (a count is exact)."""
        mantissa, _, exponent = text.lower().partition("e")
        if "." not in mantissa or not mantissa.strip("+-").replace(".", "").isdigit():
            return 0.0
        return 10.0 ** (int(exponent or 0) - len(mantissa.split(".", 1)[1]))

    exp, act = numbers(expected), numbers(got)
    if len(exp) != len(act):
        return f"the original printed {len(exp)} numbers, the port {len(act)}"
    for (line, e_text), (_, a_text) in zip(exp, act):
        e, a = float(e_text), float(a_text)
        same_special = (e != e and a != a) or (e == a)
        if not same_special and not abs(a - e) <= atol + rtol * abs(e) + last_digit(e_text):
            return f"line {line}: original {e_text}, port {a_text}"
    return None


def run_check(
    sandbox: Sandbox,
    command: str,
    *,
    cwd: str = "src",
    expected_output: str | None = None,
    timeout_s: float = 300,
    memory_mb: int = 8192,
    env: dict[str, str] | None = None,
) -> CheckOutcome:
    """Run one check command in the built tree and judge it: exit code, PASS/FAIL lines, and
    (where a recorded original output exists) the printed numbers."""
    started = time.monotonic()
    # The sandbox keeps only the ends of what a run prints; a verdict or a number may be anywhere.
    with tempfile.TemporaryDirectory(prefix="agent-check-") as tmp:
        result = sandbox.run(command, cwd=cwd, timeout_s=timeout_s, env=env, stdout_file=Path(tmp) / "stdout",
                             limits=Limits(timeout_s=timeout_s, memory_mb=memory_mb, cpu_s=int(timeout_s) * 4))
        result.stdout = (Path(tmp) / "stdout").read_text(errors="replace")
    seconds = time.monotonic() - started
    out = result.stdout + result.stderr

    def outcome(passed: bool, detail: str, code: int | None, verdict: str = "", out_of_memory: bool = False) -> CheckOutcome:
        return CheckOutcome(command, passed, f"{detail} ({seconds:.1f} s)", out, code, seconds,
                            verdict or ("passed" if passed else "failed"), out_of_memory,
                            killed=result.timed_out or _killed_by(result) is not None)

    if result.timed_out:
        return outcome(False, f"timed out after {timeout_s:g}s: a run sized for a GPU may need smaller arguments "
                              f"(--run 'CMD ARGS', or a longer --check-timeout)", None, "timeout")
    if (number := _killed_by(result)) is not None:
        if number == signal.SIGABRT and (failed := _FAILED_ASSERTION.search(out)) is not None:
            # The program's own check, written as assert(): a failed one is its verdict on the results.
            return outcome(False, f"an assertion of the program failed: {failed[0][:300]}", result.returncode)
        detail = f"killed by signal {number} ({_signal_name(number)}): {result.tail(300)}"
        # A refused allocation aborts through std::bad_alloc or faults on the null pointer; an abort that
        # says why itself (the CPU runtime's "cudacpu: ...", a failed assert) is no memory matter.
        said_why = "cudacpu: " in out or (number == signal.SIGABRT and "bad_alloc" not in out)
        out_of_memory = number in _ALLOCATION_FAILURE_SIGNALS and not said_why
        if out_of_memory:
            # Under RLIMIT_AS a refused allocation shows as a null pointer or std::bad_alloc, not as "out of memory".
            detail += (f"; the run may use at most {memory_mb} MiB of address space, and an allocation refused "
                       f"under that limit crashes many programs (--check-memory MIB, or smaller arguments with --run)")
        return outcome(False, "; ".join([detail, *result.notes]), result.returncode, "crashed", out_of_memory)
    if result.returncode != 0:
        hint = ("; it printed how to call it: the command's arguments are not those it expects "
                "(--run 'CMD ARGS' with the ones it wants)") if _USAGE.search(out) else ""
        return outcome(False, f"exit status {result.returncode}: {result.tail(300)}{hint}", result.returncode)
    if (line := failure_line(result.stdout)) is not None:
        return outcome(False, f"printed a failure: {line[:200]}", 0)
    if expected_output is not None:
        diff = compare_numbers(expected_output, result.stdout)
        if diff:
            return outcome(False, f"output differs from the original run: {diff}", 0)
        return outcome(True, "exit 0; numbers match the original run", 0)
    if (verdict := _PASS.search(result.stdout)) is not None:
        return outcome(True, f"exit 0; printed {verdict[0]}", 0)
    # Nothing to judge the results by but the exit status: the run passed, its results are unchecked.
    return outcome(True, "exit 0; no verdict printed (neither a failure nor a pass)", 0, "ran")


_ALLOCATION_FAILURE_SIGNALS = (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGKILL)
_USAGE = re.compile(r"^\s*usage\s*:", re.I | re.M)  # `Usage: ./main <n> <repeat>`
# glibc's report of a failed assert(): `main: main.cu:339: int main(int, char**): Assertion `x == y' failed.`
_FAILED_ASSERTION = re.compile(r"^.*\bAssertion [`'].*' failed\.?\s*$", re.M)


def _killed_by(result) -> int | None:
    """The signal that ended a check command; a shell reports its child's as exit status 128 + N."""
    if result.signal is not None:
        return result.signal
    number = result.returncode - 128
    return number if 0 < number < signal.NSIG else None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def default_check_commands(targets: list[str], build_checks: list[str], check_dir: str = ".") -> list[str]:
    """The project's own check commands (run where its build file is), else each executable
    run with no arguments."""
    if not build_checks:
        return [f"./{t}" for t in targets]
    local = {os.path.relpath(t, check_dir) for t in targets}
    fixed = []
    for cmd in build_checks:
        first = cmd.split()[0] if cmd.split() else ""
        cmd = f"./{cmd}" if first in local else cmd
        fixed.append(cmd if check_dir == "." else f"cd {shlex.quote(check_dir)} && {cmd}")
    return fixed


def read_expected(path: Path | None) -> str | None:
    return path.read_text() if path and path.is_file() else None
