"""agent: ports CUDA code to fast, correct CPU code."""

__version__ = "0.1.0"
