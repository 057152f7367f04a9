"""The deterministic steps the graph calls, as plain-JSON results.

`LiveToolbox` runs the real tools (CUDA front end and lowering, g++, verify, profile) in a
sandbox. Every result is a dict that goes into the trace as is, so that a replay can serve
the same results back (`RecordedToolbox` in agent/commands/replay.py).
"""

from __future__ import annotations

import re
from typing import Any

from agent.configuration import Settings
from sandboxes import Limits, Sandbox
from tools.build import compile_args, compile_cpp
from tools.observations import Observation
from tools.spec import Buffer, Launch, Task

CANDIDATE = "candidate.cpp"
COMPILE_DIR = "compile"


def _bare(file: str | None) -> str | None:
    return file[len(COMPILE_DIR) + 1:] if file and file.startswith(f"{COMPILE_DIR}/") else file


def limits_of(settings: Settings) -> Limits:
    lim = settings.limits
    return Limits(timeout_s=lim.timeout_s, memory_mb=lim.memory_mb, cpu_s=lim.cpu_s, file_mb=lim.file_mb, max_procs=lim.max_procs)


def _obs(observations: list[Observation] | None) -> list[dict[str, Any]]:
    return [o.model_dump(mode="json") for o in observations or []]


class LiveToolbox:
    def __init__(self, settings: Settings, sandbox: Sandbox) -> None:
        self.settings = settings
        self.sandbox = sandbox
        self.limits = limits_of(settings)
        self._headers: list[str] = []

    # plan ------------------------------------------------------------------
    def plan(self, task: Task) -> dict[str, Any]:
        from tools.cuda import CudaParseError, parse_cuda

        source = task.source()
        observations: list[Observation] = []
        module = None
        try:
            module = parse_cuda(source, str(task.source_path() or f"{task.name}.cu"))  # as lower_task names it
        except CudaParseError as exc:
            observations.append(Observation(kind="unsupported", message=f"CUDA front end: {exc}", severity="warning"))
        result: dict[str, Any] = {
            "kernels": [k.name for k in module.kernels] if module else [],
            "features": sorted({f for k in module.kernels for f in k.features}) if module else [],
            "pattern": classify(source, task),
            "launches": "given by the task",
        }
        if not task.launches:
            from tools.cuda.launch_inference import infer

            found = infer(task, module)
            launches, how, buffers, short = launches_from(task, found)
            result["launches"] = how
            if short:  # the source cannot compute what the reference does: said with any failure
                result["source_defects"] = [
                    f"the task's CUDA stores {written} of the {size} elements of {name} (its guards end the stores "
                    f"whatever the grid): no faithful translation writes the rest" for name, (written, size) in short.items()]
            if launches:
                # choices among several fitting buffers: search_launches tries them otherwise
                result["launch_choices"] = found.open_choices
                changed = buffers != task.buffers
                task = task.model_copy(update={"launches": launches, "buffers": buffers})
                result["launches_inferred"] = [launch.model_dump(mode="json") for launch in launches]
                if changed:  # intermediates between the kernels and padding, which a published record does not list
                    result["buffers_inferred"] = [b.model_dump(mode="json") for b in task.buffers]
        lowering, why = lower(task)
        return {**result, "lowering": lowering, "observations": _obs(observations + why)}

    def search_launches(self, task: Task, probe_first: bool) -> dict[str, Any]:
        """Launch inference's answers for `task` (as given, without launches), each checked against
        the task's reference through its faithful lowering, until one verifies: the first answer
        (only where `probe_first`: an attempt with it may have failed for the translation's sake)
        then its alternatives, where the first made choices among several fitting buffers. Asked
        only once an attempt with the first answer ended incorrect: the search re-runs inference
        up to 32 times and checks up to 9 lowerings."""
        from tools.cuda import CudaParseError, parse_cuda
        from tools.cuda.launch_inference import MAX_ALTERNATIVES, infer

        try:
            module = parse_cuda(task.source(), str(task.source_path() or f"{task.name}.cu"))
        except CudaParseError as exc:
            return {"answers": [], "of": 1, "verified": None, "why": f"CUDA front end: {exc}"}
        found = infer(task, module, alternatives=MAX_ALTERNATIVES)
        answers, verified = [], None
        for k, answer in enumerate([found, *found.alternatives]):
            candidate, how = answered_task(task, answer)
            entry: dict[str, Any] = {"how": how, "launches": [launch.model_dump(mode="json") for launch in candidate.launches],
                                     "buffers": [b.model_dump(mode="json") for b in candidate.buffers]}
            answers.append(entry)
            if k == 0 and not probe_first:
                entry["status"] = "incorrect"  # the attempt that asked for the search checked it
                continue
            lowering, _ = lower(candidate) if candidate.launches else (None, [])
            entry["status"] = self.check(candidate, lowering)["status"] if lowering else "not lowered"
            if entry["status"] == "correct":
                verified = k
                break
        return {"answers": answers, "of": 1 + len(found.alternatives), "verified": verified}

    # compile ---------------------------------------------------------------
    def compile(self, task: Task, code: str) -> dict[str, Any]:
        """A syntax-and-semantics pass (-fsyntax-only): fast, and the diagnostics a fix needs."""
        from tools.verify.runtime_headers import install_precompiled_runtime, put_runtime_headers

        self.sandbox.put({f"{COMPILE_DIR}/{CANDIDATE}": code})
        cfg = self.settings.compiler
        if not self._headers:
            self._headers = put_runtime_headers(self.sandbox, f"{COMPILE_DIR}/include") or ["."]
            if self._headers != ["."]:
                install_precompiled_runtime(self.sandbox, self._headers[0], cxx=cfg.cxx, args=compile_args(cfg.cxx, cfg.cxxflags, shared=False))
        build = compile_cpp(
            self.sandbox, [f"{COMPILE_DIR}/{CANDIDATE}"], f"{COMPILE_DIR}/candidate.o", cxx=cfg.cxx, flags=cfg.cxxflags,
            extra=["-fsyntax-only"], include_dirs=self._headers, limits=self.limits, timeout_s=self.limits.timeout_s,
        )
        observations = [
            Observation(kind="compile", message=d.message, file=_bare(d.file), line=d.line, severity="error" if d.severity == "error" else "warning")
            for d in build.diagnostics
            if d.severity in ("error", "warning")
        ]
        if not build.ok and not any(o.severity == "error" for o in observations):
            observations.append(Observation(kind="compile", message=build.output[-2000:] or "the compiler failed without a message"))
        return {"ok": build.ok, "command": " ".join(build.command), "observations": _obs(observations[:50])}

    # test ------------------------------------------------------------------
    def check(self, task: Task, code: str) -> dict[str, Any]:
        from tools.verify import VerifyError, check

        cfg = self.settings.compiler
        try:
            report = check(task, code, self.sandbox, threads=self._threads(), cxx=cfg.cxx, cxxflags=cfg.cxxflags,
                           timeout_s=self.limits.timeout_s)
        except VerifyError as exc:  # the task or its reference is at fault, not the candidate: no fix helps
            obs = Observation(kind="runtime", message=f"cannot verify: {exc}")
            return {"status": "runtime_error", "fatal": True, "observations": _obs([obs])}
        return {
            "status": report.status,
            "reference_kind": report.reference_kind,
            "max_abs_err": report.max_abs_err,
            "max_rel_err": report.max_rel_err,
            "observations": _obs(report.observations),
        }

    def _threads(self) -> list[int] | None:
        return [1, max(2, self.settings.threads)] if self.settings.threads else None

    # profile ---------------------------------------------------------------
    def profile(self, task: Task, code: str, baseline: str | None = None) -> dict[str, Any]:
        from tools.verify import VerifyError
        from tools.verify.profile import profile

        try:
            report = profile(task, code, self.sandbox, baseline_cpp=baseline, threads=self.settings.threads,
                             cxxflags=self.settings.compiler.cxxflags)
        except VerifyError as exc:
            return {"observations": _obs([Observation(kind="profile", message=f"cannot time: {exc}", severity="warning")])}
        return {
            "status": report.status,
            "time_s": {name: _median(getattr(report, name)) for name in ("candidate", "reference", "baseline")},
            "speedup_vs_reference": report.speedup_vs_reference,
            "threads": report.threads,
            "observations": _obs(report.observations),
        }


def lower(task: Task) -> tuple[str | None, list[Observation]]:
    """The deterministic lowering, or why there is none (one observation per unsupported construct)."""
    from tools.cuda import LoweringError, lower_task

    try:
        return lower_task(task), []
    except LoweringError as exc:
        found = [
            Observation(kind="unsupported", message=f"unsupported {u.feature}: {u.message}", file=u.file, line=u.line, data={"feature": u.feature})
            for u in exc.unsupported
        ]
        return None, found or [Observation(kind="unsupported", message=f"lowering failed: {exc}")]


def infer_launches(task: Task, module: Any) -> tuple[list[Launch] | None, str, list[Buffer], dict[str, tuple[int, int]]]:
    """Launches for a task that gives none, and the task's buffers for them: with the scratch
    buffers they pass between kernels that the task lacks, and the padding past a buffer that the
    kernels store to; read from its kernels by tools.cuda.launch_inference (block from
    __launch_bounds__ or the indexing, grid from guards and extents, order from the data flow,
    arguments by name). Verification decides if they were right. Last, the outputs the launches
    store only in part (name -> elements stored, size)."""
    from tools.cuda.launch_inference import infer

    return launches_from(task, infer(task, module))


def launches_from(task: Task, found: Any) -> tuple[list[Launch] | None, str, list[Buffer], dict[str, tuple[int, int]]]:
    """infer_launches's answer from an Inference of tools.cuda.launch_inference (its first answer or an alternative)."""
    if found.launches is None:
        return None, f"not given, and not inferred: {found.explanation} (the task must list its launches)", task.buffers, {}
    padded = [b.model_copy(update={"padding": max(b.padding, found.padding[b.name])}) if b.name in found.padding else b
              for b in task.buffers]
    return found.launches, found.explanation, [*padded, *found.scratch], found.short


def answered_task(task: Task, found: Any) -> tuple[Task, str]:
    """`task` with one answer of launch inference (its first or an alternative) as its launches and
    buffers (no launches where the answer has none), and how they were inferred."""
    launches, how, buffers, _ = launches_from(task, found)
    return task.model_copy(update={"launches": launches or [], "buffers": buffers}), how


def _median(stats: Any) -> float | None:
    return getattr(stats, "median_s", None) if stats is not None else None


_PATTERNS = [
    ("matmul", re.compile(r"gemm|matmul|mat_?mul|\bmm\b", re.I)),
    ("scan", re.compile(r"scan|prefix_?sum|cumsum", re.I)),
    ("histogram", re.compile(r"hist|atomicAdd\s*\(\s*&?\s*\w+\s*\[\s*\w+\s*\[", re.I)),
    ("transpose", re.compile(r"transpose", re.I)),
    ("softmax", re.compile(r"softmax", re.I)),
    ("stencil", re.compile(r"stencil|conv|\[\s*\w+\s*[-+]\s*1\s*\]|laplac|jacobi", re.I)),
    ("reduction", re.compile(r"reduc|(>>=\s*1|/=\s*2)[^;]*;[\s\S]*__syncthreads|__shfl_down", re.I)),
]


def classify(source: str, task: Task) -> str:
    """The kernel's pattern, from the task's category or the source's names and idioms."""
    if task.category:
        return task.category
    text = f"{task.name}\n{source}"
    for pattern, regex in _PATTERNS:
        if regex.search(text):
            return pattern
    return "elementwise"
