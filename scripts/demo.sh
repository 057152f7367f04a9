#!/usr/bin/env bash
# The main job on a bundled example, with the embedded defaults (no API key, no GPU, no Docker
# needed): installs what it needs, ports the example CUDA project examples/projects/heat2d to a
# CPU build (translate, build with g++, run its own check, tune its kernel on captured data)
# and prints the port report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
.venv/bin/agent port examples/projects/heat2d -o port-out/heat2d
echo
cat port-out/heat2d/PORT_REPORT.md
echo
echo "CPU port: port-out/heat2d/src (build: make -f Makefile.cpu), trace: port-out/heat2d/trace.jsonl"
