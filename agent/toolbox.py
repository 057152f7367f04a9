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
from tools.build import compile_cpp
from tools.observations import Observation
from tools.spec import Task

CANDIDATE = "candidate.cpp"


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

    # plan ------------------------------------------------------------------
    def plan(self, task: Task) -> dict[str, Any]:
        from tools.cuda import LoweringError, Unsupported, lower_task, parse_cuda

        source = task.source()
        observations: list[Observation] = []
        kernels: list[str] = []
        features: list[str] = []
        try:
            module = parse_cuda(source, task.cuda or f"{task.name}.cu")
            kernels = [k.name for k in getattr(module, "kernels", [])]
            features = sorted(_feature_names(module))
        except (LoweringError, Unsupported) as exc:
            observations.append(Observation(kind="unsupported", message=f"CUDA front end: {exc}", severity="warning"))
        lowering = None
        try:
            lowering = lower_task(task)
        except Unsupported as exc:
            observations.append(Observation(kind="unsupported", message=str(exc)))
        except LoweringError as exc:
            observations.append(Observation(kind="unsupported", message=f"lowering failed: {exc}"))
        launches = "given by the task" if task.launches else "not given: to be inferred from the source"
        return {
            "kernels": kernels,
            "features": features,
            "pattern": classify(source, task),
            "launches": launches,
            "lowering": lowering,
            "observations": _obs(observations),
        }

    # compile ---------------------------------------------------------------
    def compile(self, task: Task, code: str) -> dict[str, Any]:
        from tools.cuda import runtime_include_dir

        self.sandbox.put({CANDIDATE: code})
        self.sandbox.put_path(runtime_include_dir(), "cuda_runtime_include")
        cfg = self.settings.compiler
        build = compile_cpp(
            self.sandbox, [CANDIDATE], "candidate.o", cxx=cfg.cxx, flags=cfg.cxxflags, extra=["-c"],
            include_dirs=["cuda_runtime_include"], limits=self.limits, timeout_s=self.limits.timeout_s,
        )
        observations = [
            Observation(kind="compile", message=d.message, file=d.file, line=d.line, severity="error" if d.severity == "error" else "warning")
            for d in build.diagnostics
            if d.severity in ("error", "warning")
        ]
        if not build.ok and not any(o.severity == "error" for o in observations):
            observations.append(Observation(kind="compile", message=build.output[-2000:] or "the compiler failed without a message"))
        return {"ok": build.ok, "command": " ".join(build.command), "observations": _obs(observations[:50])}

    # test ------------------------------------------------------------------
    def check(self, task: Task, code: str) -> dict[str, Any]:
        from tools.verify import check

        report = check(task, code, self.sandbox, settings=self.settings)
        return {
            "status": report.status,
            "reference_kind": report.reference_kind,
            "max_abs_err": report.max_abs_err,
            "max_rel_err": report.max_rel_err,
            "observations": _obs(report.observations),
        }

    # profile ---------------------------------------------------------------
    def profile(self, task: Task, code: str) -> dict[str, Any]:
        from tools.verify import profile

        report = profile(task, code, self.sandbox, settings=self.settings)
        times = {name: _median(getattr(report, name, None)) for name in ("candidate", "reference", "baseline")}
        result = {
            "time_s": times,
            "speedup_vs_reference": report.speedup_vs_reference,
            "threads": report.threads,
            "observations": _obs(report.observations),
        }
        status = getattr(report, "status", None)
        if status:
            result["status"] = status
        return result


def _median(stats: Any) -> float | None:
    return getattr(stats, "median_s", None) if stats is not None else None


def _feature_names(module: Any) -> set[str]:
    names: set[str] = set()
    for holder in [module, *getattr(module, "kernels", [])]:
        feats = getattr(holder, "features", None) or ()
        if isinstance(feats, dict):
            names.update(k for k, v in feats.items() if v)
        else:
            names.update(str(getattr(f, "value", f)) for f in feats)
    return names


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
