#!/usr/bin/env bash
# Run every check CI runs, in the environment scripts/install.sh made: lint, types, then the whole test
# suite (warnings are errors); as root, the sandbox tests once more as an unprivileged user.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${REFINELAB_VENV:-.venv}/bin/python"
[ -x "$PY" ] || { echo "test.sh: no virtualenv at ${PY%/bin/python}; run: bash scripts/install.sh" >&2; exit 2; }
# the local-model tests run for real: llama-cpp-python from the per-machine wheel cache (built once)
bash scripts/local-wheel.sh --install "$PY" >/dev/null
"$PY" -m ruff check src tests bench
"$PY" -m ruff format --check src tests bench
"$PY" -m mypy
"$PY" -m pytest "$@"
if [ "$(id -u)" -eq 0 ] && [ "$#" -eq 0 ]; then
  bash scripts/test-nonroot.sh  # the sandbox tests again, as an unprivileged user
fi
