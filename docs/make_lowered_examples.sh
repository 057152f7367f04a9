#!/usr/bin/env bash
# Prints the lowered C++ of the three example kernels shown in docs/LOWERED_EXAMPLES.md.
set -euo pipefail
cd "$(dirname "$0")/.."
for src in saxpy/saxpy.cu block_sum/block_sum.cu matmul_tiled/matmul.cu; do
    echo "==== examples/kernels/$src"
    .venv/bin/agent lower "examples/kernels/$src"
done
