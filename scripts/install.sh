#!/usr/bin/env bash
# Install everything refinelab needs on Debian/Ubuntu: bubblewrap (the sandbox) and the package with
# its development tools. Uses sudo for apt when not run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v apt-get >/dev/null 2>&1 && ! command -v bwrap >/dev/null 2>&1; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq bubblewrap
fi
python3 -m pip install --quiet --disable-pip-version-check -e '.[dev]'
