#!/usr/bin/env bash
# Install what is missing, then run the test suite. Arguments go to pytest, e.g.
#   bash scripts/test.sh tests/test_sandbox.py -x
# AGENT_TEST_WORKERS=N runs N pytest-xdist workers (default 1: timing tests need quiet cores).
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/install.sh || exit 1

workers="${AGENT_TEST_WORKERS:-1}"
xdist=()
if [[ $workers -gt 1 ]]; then
    xdist=(-n "$workers" --dist loadfile)
fi
.venv/bin/pytest -q "${xdist[@]}" "$@"
status=$?
if [[ $status -eq 5 ]]; then
    echo "[test] no test ran (pytest exit 5): that is a failure" >&2
    exit 1
fi
exit $status
