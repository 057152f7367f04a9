#!/bin/sh
# Evaluate a translator on the shipped benchmark (bench/data) and write the report.
#
#   bench/eval_shipped.sh                 # every task (hours on 2 cores)
#   bench/eval_shipped.sh 2               # 2 tasks per category (the figures in bench/README.md)
#   LLM=openai:gpt-4o bench/eval_shipped.sh 2
#
# Resumable: run the same command again to continue an interrupted evaluation.
set -eu
cd "$(dirname "$0")/.."
PER_CATEGORY="${1:-}"
OUT="${OUT:-eval-report}"
LLM="${LLM:-compiler}"
BENCH=bench/data
if [ -n "$PER_CATEGORY" ]; then
    BENCH="$OUT/sample"
    "${PYTHON:-python}" -m bench.sample bench/data -n "$PER_CATEGORY" -o "$BENCH"
fi
exec agent eval "$BENCH" -o "$OUT" --llm "$LLM" --sandbox "${SANDBOX:-local}" --jobs "${JOBS:-1}"
