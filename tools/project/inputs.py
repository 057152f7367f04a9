"""The files and folders a project's check commands name that the port tree does not hold: input
data beside the project (`./main ../data/graph.txt`, as HeCBench keeps it) or in a folder the copy
skips (`build/`). They are carried into the sandbox at the same place relative to the port tree
(the sandbox's src/ stands for the project's root), so the unchanged command finds them; a check
that fails is told which input it names exists nowhere."""

from __future__ import annotations

import hashlib
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from sandboxes import Sandbox
from sandboxes.base import human_size

from .discover import SKIP_DIRS
from .tree import RUNTIME_DIR

CARRY_LIMIT = 2 << 30  # what a check's inputs may add to the sandbox, all together
_SANDBOX_FOLDERS = {"src", RUNTIME_DIR, "captures"}  # the sandbox's own, beside the port tree
_OPERATOR_CHARS = set("();<>|&")


@dataclass(frozen=True)
class NamedPath:
    command: str
    word: str  # as the command names it
    host: Path  # where the command, run in the project, finds it
    sandbox: str | None  # where the same command finds it in the sandbox; None: above what the sandbox mirrors
    program: bool  # the command's program: the build makes it


@dataclass
class CheckInputs:
    carried: list[NamedPath] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # report notes: a named input not carried, and why
    # what the carried files are (paths, sizes, times), for the keys of the check's records: a check of other
    # data is another check. Empty where nothing is carried, so that other projects' keys stay as they were.
    fingerprint: tuple[str, ...] = ()

    def put(self, sandbox: Sandbox) -> None:
        """Carry the inputs in; one that cannot be read is left out, with a note saying why."""
        for named in list(self.carried):
            try:
                sandbox.put_path(named.host, named.sandbox)
            except OSError as exc:
                self.carried.remove(named)
                self.left_out.append(f"`{named.command}` names {named.word}, which could not be carried into the "
                                     f"sandbox: {exc.strerror or exc}")


def named_paths(command: str, root: Path) -> list[NamedPath]:
    """The relative paths `command` names as its programs, arguments (`--in=FILE` too) and input
    redirections, each from the folder it runs in: the project's root, or where a `cd` took it."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the shell says so when the check runs
        return []
    root = Path(os.path.abspath(root))
    cwd, found = root, []
    at_program, written_next, cd_next = True, False, False
    for word, following in zip(words, [*words[1:], ""]):
        if word.isdigit() and following.startswith(("<", ">")):  # the stream of `2>&1`, `2> err.txt`
            continue
        if set(word) <= _OPERATOR_CHARS:
            written_next = ">" in word  # `> out.txt`, `2>&1`: written, not read
            at_program = not written_next and "<" not in word  # after `;`, `&&`, `|`: another command
            cd_next = False
            continue
        if written_next:
            written_next = False
        elif cd_next:
            cwd, cd_next = Path(os.path.normpath(cwd / word)), False
        elif at_program and word == "cd":
            cd_next = True
        elif at_program and "=" in word and not word.startswith((".", "/")):  # `VAR=value ./main`
            continue
        else:
            value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
            if value and not value.startswith(("-", "/", "~")) and not set(value) & set("$*?[`"):
                host = Path(os.path.normpath(cwd / value))
                found.append(NamedPath(command, value, host, _place_in_sandbox(host, root), at_program))
        at_program = False
    return found


def _place_in_sandbox(host: Path, root: Path) -> str | None:
    if host == root or root in host.parents:
        return str(Path("src", host.relative_to(root)))
    beside = os.path.relpath(host, root.parent)
    return None if beside == "." or beside.startswith("..") else beside


def _held_by_tree(host: Path, root: Path) -> bool:
    """Whether the port tree's copy of the project holds `host` (the copy leaves SKIP_DIRS out)."""
    return (host == root or root in host.parents) and not set(host.relative_to(root).parts) & SKIP_DIRS


def _files(path: Path) -> list[Path]:
    return [path] if path.is_file() else [p for p in sorted(path.rglob("*")) if p.is_file()]


def check_inputs(commands: list[str], root: Path, limit: int = CARRY_LIMIT) -> CheckInputs:
    """What of the paths `commands` name the sandbox needs besides the port tree, within `limit` bytes."""
    root = Path(os.path.abspath(root))
    inputs, room, seen, done = CheckInputs(), limit, hashlib.sha256(), set()
    every = [n for command in commands for n in named_paths(command, root)]
    for named in sorted(every, key=lambda n: len(n.host.parts)):  # a folder first: what it holds goes with it
        inside = named.host == root or root in named.host.parents
        if not named.host.exists() or _held_by_tree(named.host, root) or (named.program and inside):
            continue
        if named.host in done or any(c.host in named.host.parents for c in inputs.carried):
            continue
        done.add(named.host)
        why = ""
        if named.sandbox is None:
            why = "the sandbox mirrors only what lies inside the folder that holds the project"
        elif Path(named.sandbox).parts[0] in _SANDBOX_FOLDERS and not inside:
            why = f"the sandbox's own {Path(named.sandbox).parts[0]}/ is where it would go"
        else:
            files = _files(named.host)
            size = sum(f.stat().st_size for f in files)
            if size > room:
                why = (f"it holds {human_size(size)}, more than the {human_size(room)} left of the "
                       f"{human_size(limit)} a check may carry")
        if why:
            inputs.left_out.append(f"`{named.command}` names {named.word}, not carried into the sandbox: {why}")
            continue
        inputs.carried.append(named)
        room -= size
        for f in files:
            status = f.stat()
            seen.update(f"{f}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    inputs.fingerprint = (seen.hexdigest(),) if inputs.carried else ()
    return inputs


def _reads_as_file(word: str) -> bool:
    """A path or a file name (`../data/g.txt`, `input.bin`), not a number (`0.5f`) or a plain word."""
    path = Path(word)
    return "/" in word or (any(c.isalpha() for c in path.suffix) and any(c.isalpha() for c in path.stem))


def missing_inputs(command: str, root: Path, sandbox: Sandbox) -> list[str]:
    """Report notes on the files `command` names that exist neither in the project nor beside it,
    nor in the sandbox (where the build or an earlier command may have made them)."""
    notes = []
    for named in named_paths(command, root):
        if named.program or named.host.exists() or not _reads_as_file(named.word):
            continue
        if named.sandbox is not None and sandbox.exists(named.sandbox):
            continue
        notes.append(f"`{command}` names {named.word}, which exists neither in the project nor beside it "
                     f"({named.host}): the input it reads is missing; put it there, or give the command "
                     "another with --run 'CMD ARGS'")
    return notes
