"""Where a program prints its verdict only when built to do so: the macro whose `#ifdef` leaves the
verdict out of this build, and the make setting that defines it (`ifeq ($(DEBUG),yes)` around
`CFLAGS += -DDEBUG`). A check that ran and printed no verdict says so, and how to build the check in."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable
from pathlib import Path

from .check import failure_line, says_verdict
from .discover import Project

_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*?)\s*(?://.*|/\*.*)?$")
_DEFINED = re.compile(r"^(!?)\s*(?:defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)|([A-Za-z_]\w*))$")
_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')
_MAKE_CONDITION = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef)\s+(.*)$")
_MAKE_EQUALS = re.compile(r"""^\(\s*\$[({](\w+)[)}]\s*,\s*([^)]*?)\s*\)$|^["']\$[({](\w+)[)}]["']\s+["']([^"']*)["']$""")


@dataclass(frozen=True)
class VerdictGuard:
    file: str
    line: int
    macro: str
    make_setting: str | None  # NAME=VALUE for `make` that defines the macro, where the Makefile has one

    def describe(self) -> str:
        where = f"{self.file}:{self.line}"
        how = (f"--make-var {self.make_setting} builds it in" if self.make_setting
               else f"no setting of the Makefile defines {self.macro}")
        return f"its verdict is printed only where {self.macro} is defined ({where}): {how}"


def verdict_guards(project: Project) -> list[VerdictGuard]:
    """The first verdict string of each source that this build's macros leave out, with its guard."""
    guards = []
    for source in project.sources:
        defined = {flag[2:].split("=")[0] for flag in project.preprocessor_options(source.path) if flag.startswith("-D")}
        path = project.root / source.path
        if found := _first_left_out(path.read_text(errors="replace"), defined):
            macro, line = found
            guards.append(VerdictGuard(source.path, line, macro, _make_setting(project, macro)))
    return guards


def _first_left_out(text: str, defined: set[str]) -> tuple[str, int] | None:
    """(macro, line) of the first string that prints a verdict inside an `#if` on a macro this build
    leaves undefined (or an `#ifndef` on one it defines)."""
    return next(((off, number) for number, string, off in _verdict_strings(text, defined, says_verdict) if off), None)


def _verdict_strings(text: str, defined: set[str], says: Callable[[str], bool]):
    """(line, string, the macro leaving it out of this build or None) of each string literal that `says`."""
    defined = set(defined)
    stack: list[tuple[str, bool] | None] = []  # (macro, wants it defined), None for other conditions
    for number, line in enumerate(text.splitlines(), 1):
        if m := _DIRECTIVE.match(line):
            word, rest = m[1], m[2]
            if word in ("ifdef", "ifndef"):
                stack.append((rest.split()[0], word == "ifdef") if rest else None)
            elif word == "if":
                cond = _DEFINED.match(rest)
                stack.append((cond[2] or cond[3] or cond[4], not cond[1]) if cond else None)
            elif word in ("else", "elif") and stack:
                top = stack[-1]
                stack[-1] = (top[0], not top[1]) if top and word == "else" else None
            elif word == "endif" and stack:
                stack.pop()
            elif word == "define" and not any(stack) and rest:
                defined.add(re.split(r"[\s(]", rest, maxsplit=1)[0])
            continue
        off = next((g for g in reversed(stack) if g and (g[0] in defined) != g[1]), None)
        for string in _STRING.findall(line):
            if says(string[1:-1]):
                yield number, string[1:-1], off[0] if off else None


@dataclass(frozen=True)
class SilentVerdict:
    """A failure message the build keeps: a program that printed none of them passed its own check."""
    file: str
    line: int
    text: str  # as the source writes it

    def __str__(self) -> str:
        shown = _ESCAPE.sub(" ", self.text).strip()
        return f"{self.file}:{self.line} `{shown}`"


def failure_messages(project: Project) -> list[SilentVerdict]:
    """The strings in this build of the project that say only that its check failed (`test: FAILED`,
    `Mismatch at %d`), not that something else went wrong (`cudaMalloc failed`)."""
    found = []
    for source in project.sources:
        defined = {flag[2:].split("=")[0] for flag in project.preprocessor_options(source.path) if flag.startswith("-D")}
        text = (project.root / source.path).read_text(errors="replace")
        found += [SilentVerdict(source.path, number, string)
                  for number, string, off in _verdict_strings(text, defined, _only_a_failed_check) if off is None]
    return found


# The words of a message that says a check failed, and says nothing else
_CHECK_WORDS = {"test", "tests", "testing", "result", "results", "verification", "verify", "verifying", "validation",
                "check", "checking", "correctness", "output", "outputs", "kernel", "gpu", "cpu", "device", "host",
                "reference", "is", "are", "was", "the", "of", "and", "at", "in", "on", "for", "index", "element",
                "elements", "value", "values", "compare", "comparison", "failed", "fail", "fails", "failure",
                "failures", "mismatch", "mismatches", "incorrect", "wrong", "found", "expected", "got", "vs"}
_ESCAPE = re.compile(r"\\[nrt]")
_FORMAT = re.compile(r"%[-+ #0-9.*]*[a-zA-Z]+|\\.")


_CHECK_NOUNS = {"check", "checks", "test", "tests", "verification", "validation"}


def _only_a_failed_check(text: str) -> bool:
    words = _without_the_checked_name(re.findall(r"[A-Za-z]+", _FORMAT.sub(" ", text)))
    # a single letter is a name or a dimension (`2D test: FAILED`)
    return failure_line(text) is not None and bool(words) and all(len(w) == 1 or w.lower() in _CHECK_WORDS
                                                                   for w in words)


def _without_the_checked_name(words: list[str]) -> list[str]:
    """`Failed to pass <what> check`: the words between name what was checked (any words), and
    are left out; the message still says only that a check failed."""
    lower = [w.lower() for w in words]
    for i in range(len(lower) - 2):
        if lower[i] in ("fail", "fails", "failed") and lower[i + 1:i + 3] == ["to", "pass"]:
            noun = next((j for j in range(len(lower) - 1, i + 2, -1) if lower[j] in _CHECK_NOUNS), None)
            if noun is not None:
                return words[:i + 1] + words[noun:]
    return words


def _make_setting(project: Project, macro: str) -> str | None:
    """NAME=VALUE where the Makefile adds -D<macro> under `ifeq ($(NAME),VALUE)` (or `ifdef NAME`)."""
    if project.build.kind != "make" or not project.build.file:
        return None
    makefile = project.root / project.build.file
    if not makefile.is_file():
        return None
    defines = re.compile(rf"-D\s*{re.escape(macro)}\b")
    stack: list[str | None] = []
    for line in Path(makefile).read_text(errors="replace").splitlines():
        word = line.split()[0] if line.split() else ""
        if m := _MAKE_CONDITION.match(line):
            stack.append(_setting_of(m[1], m[2]))
        elif word == "else" and stack:
            stack[-1] = None
        elif word == "endif" and stack:
            stack.pop()
        elif defines.search(line) and stack and stack[-1]:
            return stack[-1]
    return None


def _setting_of(keyword: str, condition: str) -> str | None:
    """The variable setting that makes a make conditional true, where one value does."""
    condition = condition.strip()
    if keyword == "ifdef":
        return f"{condition}=1"
    if keyword == "ifeq" and (m := _MAKE_EQUALS.match(condition)):
        name, value = (m[1], m[2]) if m[1] else (m[3], m[4])
        return f"{name}={value}" if value else None
    return None
