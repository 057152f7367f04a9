"""The header-only CPU implementation of the CUDA runtime and of the CUDA libraries we map.

Compile lowered kernels and unchanged CUDA host code with ``-I`` :data:`INCLUDE_DIR`: its
headers are named like CUDA's (cuda_runtime.h, cuda_fp16.h, cublas_v2.h, curand.h,
thrust/...) and shadow them.  See README.md beside this file for what each header provides.
"""

from __future__ import annotations

from pathlib import Path

INCLUDE_DIR: Path = Path(__file__).resolve().parent / "include"

__all__ = ["INCLUDE_DIR"]
