"""Deterministic tools usable without LangGraph: CUDA front end, lowering, build, verify, profile."""
