"""Interleaved timing of several versions of one task's code, in the same run.

Every version is built once into its own library; the verifier's driver loads all of them into
one process and alternates their calls on the same inputs with the same thread count, in an order
that rotates, so that a shared machine's drift (measured here: the same code 35 us, then 65 us a
second later) hits all of them alike. A few rounds, each a fresh process. The result is each
version's median over all its calls.
"""

from __future__ import annotations

import hashlib
from typing import Callable

from sandboxes import Sandbox
from tools.spec import Task
from tools.verify.check import WORK, build_candidate, build_harness, harness_observations, put_inputs, task_dir_hidden
from tools.verify.harness import run_harness, time_together
from tools.verify.profile import TimingStats
from tools.verify.inputs import generate_inputs


class TimingError(Exception):
    """A version could not be built or failed while being timed."""


def library_for(sandbox: Sandbox, task: Task, source: str, cxxflags=None) -> str:
    """Build `source` once per sandbox (by content); returns the library's path."""
    key = hashlib.sha256(source.encode()).hexdigest()[:12]
    lib = f"opt_{key}.so"
    if not sandbox.exists(f"{WORK}/{lib}"):
        build = build_candidate(sandbox, task, source, lib=lib, cxxflags=cxxflags)  # a copy where it was just checked
        if not build.ok:
            raise TimingError(f"does not compile: {build.summary(3)}")
    return f"{WORK}/{lib}"


def time_versions(task: Task, sources: dict[str, str], sandbox: Sandbox, *, threads: int | list[int], rounds: int = 3,
                  budget_s: float = 0.3, cxxflags=None,
                  settled: Callable[[dict[tuple[str, int], TimingStats]], bool] | None = None,
                  ) -> dict[tuple[str, int], TimingStats]:
    """Seconds per call of each version at each thread count ((name, threads) -> stats over all
    rounds), measured interleaved: every round runs, for each thread count, one process that
    alternates the versions' calls (their order rotated). `settled`: asked after each round with
    the stats so far; True ends the timing there (a comparison already decided)."""
    libs = {name: library_for(sandbox, task, src, cxxflags) for name, src in sources.items()}
    exe = build_harness(sandbox, task)
    seed = task.inputs.seed
    indir = f"{WORK}/opt{seed}/in"
    put_inputs(sandbox, indir, generate_inputs(task, seed))
    counts = [threads] if isinstance(threads, int) else list(threads)
    names = list(sources)
    share = budget_s / max(1, rounds * len(counts))
    times: dict[tuple[str, int], list[float]] = {(name, n): [] for n in counts for name in names}
    with task_dir_hidden(sandbox, task):
        for r in range(rounds):
            for n in counts:
                order = names[r % len(names):] + names[:r % len(names)]
                runs = _runs(sandbox, exe, task, [libs[name] for name in order], indir,
                             [f"{WORK}/opt{seed}/v{names.index(name)}" for name in order], n, share)
                for name, run in zip(order, runs):
                    status, obs = harness_observations(task, run, seed=seed, threads=n, who=name)
                    if status or not run.times:
                        raise TimingError(f"{name} failed while timed: {'; '.join(o.message for o in obs)[:300]}")
                    times[(name, n)] += run.times
            if settled is not None and r + 1 < rounds and settled({p: TimingStats.of(t) for p, t in times.items()}):
                break
    return {p: TimingStats.of(t) for p, t in times.items()}


def _runs(sandbox, exe, task, libs, indir, outdirs, threads, budget_s):
    if len(libs) == 1:
        return [run_harness(sandbox, exe, libs[0], task.entry_name, indir, outdirs[0], threads=threads, mode="time",
                            budget_s=budget_s, max_runs=2000, warmups=1)]
    return time_together(sandbox, exe, libs, task.entry_name, indir, outdirs, threads=threads, budget_s=budget_s,
                         max_runs=2000, warmups=1)
