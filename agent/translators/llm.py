"""The LLM translator: prompt from templates, one model call, code extracted from the answer.

Failures of the answer (no code, malformed JSON, cut off at the token limit) come back
as Observation(kind="llm") with code None, so the loop can ask again. A model call that
failed for a passing reason (rate limit, server errors, a dropped connection) after all
retries also comes back that way (reason "api_error"); an LLMError that would repeat on
every call (bad key, unknown model, bad request, a server that cannot be reached) is
raised for the caller to stop on.
"""

from __future__ import annotations

import json
from typing import Any

import prompts
from agent.configuration import Settings
from agent.llm.base import LLMError, Model, ModelReply
from agent.llm.extract import extract_code
from tools.observations import Observation
from tools.spec import Task, c_type

from .base import TranslateRequest, Translation

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "the complete C++17 translation unit"},
        "notes": {"type": "string", "description": "what was done and why, in a few sentences"},
    },
    "required": ["code", "notes"],
    "additionalProperties": False,
}
MAX_OBSERVATIONS = 40  # keep the prompt bounded; the first ones (errors first) matter most
MAX_DATA_CHARS = 400


class LLMTranslator:
    def __init__(self, model: Model, settings: Settings, *, max_tokens: int | None = None) -> None:
        self.model = model
        self.settings = settings
        # `llm_max_output_tokens` is a requested Settings field; None lets the backend choose.
        self.max_tokens = max_tokens if max_tokens is not None else getattr(settings, "llm_max_output_tokens", None)
        self.name = model.name

    def translate(self, request: TranslateRequest) -> Translation:
        structured = bool(getattr(self.model, "structured", False))
        system, user = build_prompt(request, structured=structured)
        schema = ANSWER_SCHEMA if structured else None
        messages = [{"role": "user", "content": user}]
        try:
            reply = self.model.complete(messages, system=system, schema=schema, max_tokens=self.max_tokens)
        except LLMError as exc:
            if not exc.transient:
                raise
            return _failed_call(exc)
        return _translation_from(reply, request.task.entry_name)


def _translation_from(reply: ModelReply, entry: str) -> Translation:
    found = extract_code(reply.text, entry=entry, truncated=reply.truncated)
    for obs in found.observations:
        obs.data.update({"finish_reason": reply.finish_reason, "model": reply.model})
    notes = "\n".join(n for n in [found.notes, *reply.notes] if n)
    return Translation(
        code=found.code,
        notes=notes,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        cost_usd=reply.cost_usd,
        exchanges=[reply.exchange()],
        observations=found.observations,
    )


def _failed_call(exc: LLMError) -> Translation:
    obs = Observation(
        kind="llm",
        message=f"the model call failed: {exc}",
        data={"reason": "api_error", "provider": exc.provider, "status": exc.status, "attempts": exc.attempts},
    )
    return Translation(
        code=None,
        notes=str(exc),
        exchanges=[exc.exchange()],
        observations=[obs],
    )


def build_prompt(request: TranslateRequest, *, structured: bool) -> tuple[str, str]:
    """(system, user) prompts for the request's mode."""
    task = request.task
    values: dict[str, Any] = {
        "attempt": request.attempt,
        "previous_attempt": max(1, request.attempt - 1),
        "task": task_section(task),
        "cuda": request.cuda_source.rstrip(),
        "plan": plan_section(request.plan),
        "output_format": prompts.render("output_json" if structured else "output_code_block"),
    }
    previous = request.previous_code if request.mode != "optimize" else (request.previous_code or request.best_code)
    if request.mode == "translate" or not previous:
        # A fix with nothing to fix (the last answer had no code) is a fresh translation told what went wrong.
        values["lowering"] = lowering_section(request.lowering)
        values["observations"] = _titled("What to take into account", observations_section(request.observations))
        user = prompts.render("translate", **values)
    else:
        values["previous_code"] = previous.rstrip()
        values["observations"] = observations_section(request.observations) or "(none recorded)"
        user = prompts.render(request.mode, **values)
    return prompts.render("system"), user


def task_section(task: Task) -> str:
    lines = [f"## The task: `{task.name}`", ""]
    if task.description:
        lines += [task.description.strip(), ""]
    lines += ["The CPU entry point you must define, exactly:", "", "```cpp", task.entry_signature() + ";", "```", ""]
    lines += ["Buffers (pointers, in this order; multi-dimensional buffers are flattened row-major):"]
    for b in task.buffers:
        role = {"input": "input, read only", "output": "output, every element must be written",
                "inout": "read and written", "scratch": "scratch, contents undefined on entry"}[b.role]
        if b.init == "zeros":
            role = f"{b.role}, zero-filled before the call (as a cudaMemset before the launches would do)"
        lines.append(f"- `{b.name}`: {c_type(b.dtype)} ({b.dtype}), shape {b.shape} = {b.size} elements; {role}")
    if task.scalars:
        lines += ["", "Scalars (by value, after the buffers):"]
        lines += [f"- `{s.name}`: {c_type(s.dtype)} ({s.dtype}), {s.value} in the tests" for s in task.scalars]
    lines += ["", _launches_text(task), "",
              f"Tolerance: outputs are compared with rtol={task.tolerance.rtol:g}, atol={task.tolerance.atol:g}."]
    return "\n".join(lines)


def _launches_text(task: Task) -> str:
    if not task.launches:
        return ("Launches: not given by the task. Infer them from the source (the plan below may list the "
                "inferred ones): cover every element of every output.")
    lines = ["Launches the entry function must perform, in order (CUDA semantics):"]
    for i, launch in enumerate(task.launches, 1):
        grid, block = launch.dims()
        tmpl = f"<{', '.join(launch.template_args)}>" if launch.template_args else ""
        shared = f", dynamic shared memory {launch.shared_bytes} bytes" if launch.shared_bytes else ""
        args = ", ".join(str(a) for a in launch.args)
        lines.append(f"{i}. `{launch.kernel}{tmpl}<<<dim3{grid}, dim3{block}>>>({args})`{shared}")
    return "\n".join(lines)


def plan_section(plan: dict[str, Any]) -> str:
    if not plan:
        return ""
    lines = ["", "## The plan", ""]
    for key, value in plan.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        lines.append(f"- {key}: {text}")
    return "\n".join(lines) + "\n"


def lowering_section(lowering: str | None) -> str:
    if not lowering:
        return ""
    return (
        "\n## A starting point: the deterministic compiler's lowering\n\n"
        "This mechanical translation is meant to be correct but is usually slow (it emulates the thread "
        "grid). Use it to check your reading of the CUDA, and write a faster, idiomatic CPU version.\n\n"
        f"```cpp\n{lowering.rstrip()}\n```\n"
    )


def observations_section(observations: list[Observation]) -> str:
    if not observations:
        return ""
    ranked = sorted(observations, key=lambda o: {"error": 0, "warning": 1, "info": 2}[o.severity])
    lines = [_observation_line(o) for o in ranked[:MAX_OBSERVATIONS]]
    if len(ranked) > MAX_OBSERVATIONS:
        lines.append(f"- ... and {len(ranked) - MAX_OBSERVATIONS} more of the same kinds")
    return "\n".join(lines)


def _observation_line(obs: Observation) -> str:
    where = f" line {obs.line}" if obs.line else ""
    where = f" ({obs.file}{where})" if obs.file else where
    label = "hint from the user" if obs.kind == "human" else f"{obs.kind} {obs.severity}"
    line = f"- [{label}]{where}: {obs.message}"
    if obs.data:
        data = json.dumps(obs.data, default=str)
        line += f"\n  details: {data[:MAX_DATA_CHARS]}{'…' if len(data) > MAX_DATA_CHARS else ''}"
    return line


def _titled(title: str, body: str) -> str:
    return f"\n## {title}\n\n{body}\n" if body else ""
