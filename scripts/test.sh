#!/usr/bin/env bash
# Run every check CI runs: lint, types, then the whole test suite (warnings are errors).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check src tests bench
python3 -m ruff format --check src tests bench
python3 -m mypy
python3 -m pytest "$@"
