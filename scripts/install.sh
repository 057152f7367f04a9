#!/usr/bin/env bash
# Set up this checkout on a Debian/Ubuntu machine: system packages, then .venv with the
# project installed in editable mode with its dev, bench (TVM, matplotlib) and ray (agent eval --ray) extras. Safe to run again: it installs
# only what is missing, and re-runs pip only when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "[install] $*"; }
die() { echo "[install] error: $*" >&2; exit 1; }

# bubblewrap isolates the local sandbox; g++/make/OpenMP build candidates; python3-venv makes .venv.
APT_PACKAGES=(bubblewrap build-essential g++ make libgomp1 python3 python3-venv python3-pip git)

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null && sudo_cmd=(sudo) || sudo_cmd=(false)
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get: install them by hand"
    [[ ${sudo_cmd[0]:-} == false ]] && die "missing ${missing[*]}: run as root or install sudo"
    say "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -q >/dev/null
    "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
else
    say "system packages present"
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python 3.11 or newer is needed (found $(python3 --version))"

if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    python3 -m venv .venv
fi
stamp=".venv/.agent-installed-$(cat pyproject.toml | sha256sum | cut -c1-16)"
if [[ ! -f $stamp ]] || ! .venv/bin/python -c 'import agent, tools, sandboxes' 2>/dev/null; then
    say "pip install -e .[dev,bench,ray] (log: .venv/pip-install.log)"
    if ! .venv/bin/python -m pip install -e ".[dev,bench,ray]" >.venv/pip-install.log 2>&1; then
        tail -20 .venv/pip-install.log >&2
        die "pip install failed (log: .venv/pip-install.log)"
    fi
    rm -f .venv/.agent-installed-*
    touch "$stamp"
else
    say ".venv up to date"
fi
say "ready: .venv/bin/agent --help"
