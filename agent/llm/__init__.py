"""LLM backends behind one `Model` protocol (see base.py); `make_model` picks one from a spec."""

from agent.llm.base import BudgetExceeded, LLMError, Model, ModelReply
from agent.llm.factory import ModelSpecError, make_model
from agent.llm.scripted import ScriptedModel

__all__ = ["BudgetExceeded", "LLMError", "Model", "ModelReply", "ModelSpecError", "ScriptedModel", "make_model"]
