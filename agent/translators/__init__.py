"""Translators: the deterministic compiler and LLM backends behind one protocol."""

from .base import TranslateRequest, Translation, Translator

__all__ = ["TranslateRequest", "Translation", "Translator"]
