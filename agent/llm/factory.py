"""`make_model(spec, settings)`: the backend a `--llm` spec names."""

from __future__ import annotations

from agent.configuration import Settings
from agent.errors import UserError
from agent.llm.base import LLMError, Model

SPEC_HELP = "expected openai:MODEL, anthropic:MODEL or openai-compatible:MODEL"


class ModelSpecError(UserError):
    """A --llm spec that names no usable model (bad form, missing key or base URL)."""


def make_model(spec: str, settings: Settings) -> Model:
    kind, _, model = spec.partition(":")
    kind, model = kind.strip(), model.strip()
    if kind == "compiler":
        raise ModelSpecError("--llm compiler is the deterministic translator, not a model")
    if not model:
        raise ModelSpecError(f"--llm {spec!r}: no model name; {SPEC_HELP}")
    if kind == "openai":
        if not settings.api_key_for("openai"):
            raise ModelSpecError(
                f"--llm {spec}: no OpenAI API key (set OPENAI_API_KEY, AGENT_OPENAI_API_KEY or openai_api_key in agent.toml)"
            )
        return _build(lambda: _openai(model, settings, compatible=False))
    if kind == "openai-compatible":
        if not settings.llm_base_url:
            raise ModelSpecError(f"--llm {spec}: no base URL (set llm_base_url in agent.toml or AGENT_LLM_BASE_URL)")
        return _build(lambda: _openai(model, settings, compatible=True))
    if kind == "anthropic":
        if not settings.api_key_for("anthropic"):
            raise ModelSpecError(
                f"--llm {spec}: no Anthropic API key (set ANTHROPIC_API_KEY, AGENT_ANTHROPIC_API_KEY or anthropic_api_key in agent.toml)"
            )
        from agent.llm.anthropic_backend import AnthropicModel

        return _build(lambda: AnthropicModel(model, settings))
    raise ModelSpecError(f"--llm {spec!r}: unknown kind {kind!r}; {SPEC_HELP}")


def _openai(model: str, settings: Settings, *, compatible: bool) -> Model:
    from agent.llm.openai_backend import OpenAIModel

    return OpenAIModel(model, settings, compatible=compatible)


def _build(construct) -> Model:
    try:
        return construct()
    except LLMError as exc:
        raise ModelSpecError(str(exc)) from None
