#!/usr/bin/env bash
# Install refinelab for development on Debian/Ubuntu: the system packages it needs (bubblewrap for the
# sandbox; the venv module where the distribution splits it out), then a project virtualenv in .venv
# holding refinelab and its development tools. PEP 668 systems (Debian 12, Ubuntu >= 23.04) refuse
# `pip install` into the system Python; a virtualenv is what works everywhere.
#
#   PYTHON=python3.12 bash scripts/install.sh    # choose the interpreter (default: python3 on PATH)
#   REFINELAB_VENV=/opt/rl bash scripts/install.sh  # choose where the virtualenv goes (default: .venv)
#   bash scripts/install.sh --local              # also local models (llama.cpp, compiled once per machine) and
#                                                # the 270M model for a first run with no server
#
# Run as root, or as a user with sudo (used only for apt).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV="${REFINELAB_VENV:-.venv}"
LOCAL=0
[ "${1:-}" = "--local" ] && LOCAL=1

sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "install.sh: please install: $*" >&2; return 0; }
  if [ -n "$sudo_cmd" ] && ! command -v sudo >/dev/null 2>&1; then
    echo "install.sh: installing $* needs root: run this as root, or install sudo, or install them first" >&2
    return 1
  fi
  $sudo_cmd apt-get update -qq
  # through env, not before sudo: sudo's env_reset would drop the variable and apt could stop to ask
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

packages=()
command -v bwrap >/dev/null 2>&1 || packages+=(bubblewrap)
[ "$LOCAL" = 0 ] || command -v g++ >/dev/null 2>&1 || packages+=(g++)  # llama.cpp is compiled from source
if ! command -v uv >/dev/null 2>&1 && ! "$PYTHON" -c "import ensurepip, venv" >/dev/null 2>&1; then
  # Debian and Ubuntu ship venv's ensurepip separately, one package per version (python3.12-venv)
  packages+=("$("$PYTHON" -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])')")
fi
# As root, scripts/test.sh also runs the sandbox tests as an unprivileged user, from a virtualenv made
# with the system Python: that one needs its venv module too.
if [ "$(id -u)" -eq 0 ] && [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
  packages+=(python3-venv)
fi
if [ "${#packages[@]}" -gt 0 ]; then
  apt_install "${packages[@]}"
fi
# Debian's Chromium, driven by Playwright in the viewer's browser tests (Playwright never downloads one);
# where it cannot be installed those tests skip and say why.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  apt_install chromium || echo "install.sh: chromium could not be installed; the browser tests will skip" >&2
fi

if command -v uv >/dev/null 2>&1; then
  [ -x "$VENV/bin/python" ] || uv venv --quiet --python "$PYTHON" "$VENV"
  uv pip install --quiet --python "$VENV/bin/python" -e '.[dev]'
else
  [ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e '.[dev]'
fi

if [ "$LOCAL" = 1 ]; then
  bash scripts/local-wheel.sh --install "$VENV/bin/python" local,tiny-model >/dev/null
fi

echo "refinelab is installed in $VENV: run $VENV/bin/refinelab, or first: source $VENV/bin/activate"
