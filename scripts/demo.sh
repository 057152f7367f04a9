#!/usr/bin/env bash
# The main job on a bundled example, with the embedded defaults (no API key, no GPU, no Docker):
# installs what it needs, then ports the example kernels with the deterministic compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
rm -rf port-out/demo
.venv/bin/agent port examples/kernels -o port-out/demo
echo
echo "Results: port-out/demo/<kernel>/result.json, CPU code: port-out/demo/<kernel>/<kernel>.cpp, trace: port-out/demo/trace.jsonl"
