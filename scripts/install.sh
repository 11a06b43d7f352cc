#!/usr/bin/env bash
# Install refinelab for use on Debian/Ubuntu: bubblewrap for the sandbox (and the venv module where the
# distribution splits it out) from apt, then a project virtualenv in .venv holding refinelab with what
# `refinelab view` and `refinelab report --html` need (the `view` extra: matplotlib). Nothing else: the
# development tools, and the browser the viewer's tests drive, are installed by scripts/test.sh.
# PEP 668 systems (Debian 12, Ubuntu >= 23.04) refuse `pip install` into the system Python; a
# virtualenv is what works everywhere.
#
#   PYTHON=python3.12 bash scripts/install.sh    # choose the interpreter (default: python3 on PATH)
#   REFINELAB_VENV=/opt/rl bash scripts/install.sh  # choose where the virtualenv goes (default: .venv)
#   bash scripts/install.sh --local              # also local models (llama.cpp, compiled once per machine) and
#                                                # the 270M model for a first run with no server
#
# Run as root, or as a user with sudo (used only for apt).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_setup.sh
LOCAL=0
[ "${1:-}" = "--local" ] && LOCAL=1

packages=()
command -v bwrap >/dev/null 2>&1 || packages+=(bubblewrap)
venv_package="$(missing_venv_package "$PYTHON")"
[ -z "$venv_package" ] || packages+=("$venv_package")
[ "$LOCAL" = 0 ] || command -v g++ >/dev/null 2>&1 || packages+=(g++)  # llama.cpp is compiled from source
if [ "${#packages[@]}" -gt 0 ]; then
  apt_install "${packages[@]}"
fi

make_venv
venv_install '.[view]'

if [ "$LOCAL" = 1 ]; then
  bash scripts/local-wheel.sh --install "$VENV/bin/python" view,local,tiny-model >/dev/null
fi

echo "refinelab is installed in $VENV: run $VENV/bin/refinelab, or first: source $VENV/bin/activate"
