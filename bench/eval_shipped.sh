#!/bin/sh
# Evaluate a translator on the shipped benchmark (bench/data) and write the report.
#
#   bench/eval_shipped.sh                 # every task (hours on 2 cores)
#   bench/eval_shipped.sh 4               # 4 tasks per category, spread over its operators
#   LLM=openai:gpt-4o bench/eval_shipped.sh 4
#
# Resumable: run the same command again to continue an interrupted evaluation.
set -eu
cd "$(dirname "$0")/.."
OUT="${OUT:-eval-report}"
LLM="${LLM:-compiler}"
set -- ${1:+--per-category "$1"}
exec agent eval bench/data -o "$OUT" --llm "$LLM" --sandbox "${SANDBOX:-local}" --jobs "${JOBS:-1}" "$@"
