"""CUDA front end and the deterministic CUDA-to-OpenMP lowering.

The lowering convention (details in tools/cuda/lowering.py): kernel `K(params)` becomes
`void K(dim3 gridDim, dim3 blockDim, std::size_t dynamicSharedBytes, params...)` in
`namespace cudacpu_kernels`, templates preserved; blocks run as an OpenMP loop, the threads of
a block as loops split at every barrier.
"""

from pathlib import Path

from .frontend import CudaModule, CudaParseError, parse_cuda
from .lowering import LoweringUnsupported
from .translate import (NAMESPACE, LoweredKernel, LoweredModule, LoweringError, Unsupported, lower_source,
                        lower_task, translate_file)


def runtime_include_dir() -> Path:
    """Headers named like CUDA's that make host code compile with g++ (tools/cuda/runtime)."""
    return Path(__file__).parent / "runtime" / "include"


__all__ = ["CudaModule", "CudaParseError", "LoweredKernel", "LoweredModule", "LoweringError", "LoweringUnsupported",
           "NAMESPACE", "Unsupported", "lower_source", "lower_task", "parse_cuda", "runtime_include_dir",
           "translate_file"]
