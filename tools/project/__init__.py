"""Whole CUDA projects: discovery, the CPU port tree, its build and its self-check."""
