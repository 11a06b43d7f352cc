#!/usr/bin/env bash
# Run every check CI runs, in the virtualenv scripts/install.sh made: first install the development
# tools the checks need (below), then lint, types, the whole test suite (warnings are errors); as root,
# the sandbox tests once more as an unprivileged user, and the hostile suites where no namespace can be
# made (as in a container: scripts/test-contained.sh), as root and as that user. After
# `bash scripts/install.sh`, this sets up and tests everything on a fresh machine.
#
#   REFINELAB_SKIP_DEV_TOOLS=1 bash scripts/test.sh   # the tools are there already: go straight to the checks
#   bash scripts/test.sh tests/report -x               # arguments go to pytest (and skip the unprivileged run)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_setup.sh
PY="$VENV/bin/python"
[ -x "$PY" ] || { echo "$SCRIPT: no virtualenv at $VENV; run: bash scripts/install.sh" >&2; exit 2; }

# --- development tools -------------------------------------------------------------------------------
# Each step installs what the checks need and is quick when it is there already. A new tool (a wheel
# cache, a cluster runtime in the dev environment) is one more step here, before the checks.

dev_python_tools() {
  # the `dev` extra: ruff, mypy, pytest, playwright, nbclient, ipykernel, matplotlib, uv...; and the `ray`
  # extra, for the cluster tests (tests/sandbox/test_cluster.py: a real Ray cluster, about 4 minutes on 2
  # cores; without Ray they skip and say which extra to install)
  venv_install '.[dev,ray]'
}

dev_system_tools() {
  # As root, scripts/test-nonroot.sh runs the sandbox tests from a virtualenv made with the system
  # Python: that one needs its venv module.
  if [ "$(id -u)" -eq 0 ] && [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    apt_install python3-venv
  fi
  # `ip` (iproute2) brings up the loopback of the network namespace the cluster tests run Ray in; where
  # such a namespace cannot be made, those tests skip and say why
  if [ "$(id -u)" -eq 0 ] && ! PATH="/usr/sbin:/sbin:$PATH" command -v ip >/dev/null 2>&1; then
    apt_install iproute2 || echo "$SCRIPT: iproute2 could not be installed; the cluster tests will skip" >&2
  fi
  # Debian's Chromium, driven by Playwright in the viewer's browser tests (Playwright never downloads
  # one); where it cannot be installed those tests skip and say why.
  if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    apt_install chromium || echo "$SCRIPT: chromium could not be installed; the browser tests will skip" >&2
  fi
}

dev_local_models() {
  # llama-cpp-python for the local-model tests, from the per-machine wheel cache (compiled once, about 20
  # minutes on 2 cores the first time; see scripts/local-wheel.sh); the model package is in the dev extra
  bash scripts/local-wheel.sh --install "$PY" >/dev/null
}

if [ -z "${REFINELAB_SKIP_DEV_TOOLS:-}" ]; then
  dev_python_tools
  dev_system_tools
  dev_local_models
fi

# --- checks ------------------------------------------------------------------------------------------
"$PY" -m ruff check src tests bench
"$PY" -m ruff format --check src tests bench
"$PY" -m mypy
"$PY" -m pytest "$@"
if [ "$(id -u)" -eq 0 ] && [ "$#" -eq 0 ]; then
  bash scripts/test-contained.sh "$PY"  # the hostile suites as root without namespaces or capabilities
  bash scripts/test-nonroot.sh  # the sandbox tests again, as an unprivileged user (and contained)
fi
