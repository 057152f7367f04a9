"""`make_translator(spec, settings)`: the translator a `--llm` spec names."""

from __future__ import annotations

from agent.configuration import Settings

from .base import Translator


def make_translator(spec: str, settings: Settings) -> Translator:
    """`compiler` is the deterministic lowering; anything else is an LLM backend."""
    if spec.split(":", 1)[0].strip() == "compiler":
        from .compiler import CompilerTranslator

        return CompilerTranslator(options={"threads": settings.threads, "fast_math_ok": settings.compiler.fast_math_ok})
    from agent.llm import make_model

    from .llm import LLMTranslator

    return LLMTranslator(make_model(spec, settings), settings)
