#!/usr/bin/env bash
# Local models (refinelab[local]) need llama-cpp-python, which has no Linux wheel on the package index: pip
# compiles llama.cpp from its source (about 20 minutes on 2 cores). This builds that wheel ONCE into a cache
# that the install and test scripts share, and installs it from there afterwards.
#
#   bash scripts/local-wheel.sh                                  # build if missing; print the wheel's path
#   bash scripts/local-wheel.sh --install .venv/bin/python       # ... and install it with refinelab[local]
#   bash scripts/local-wheel.sh --install .venv/bin/python local,tiny-model   # other extras
#   bash scripts/local-wheel.sh --adopt WHEEL                    # keep a wheel built on THIS machine instead
#
# The wheel is compiled for this machine's CPU: llama.cpp's default build uses -march=native (GGML_NATIVE),
# the fastest code for the CPU it is built on, which may crash with SIGILL on a CPU lacking its instructions.
# So the cache is keyed by what the binary depends on: the version, the architecture, the CPU's feature
# flags and any CMAKE_ARGS. (Not the Python version: the wheel is py3-none, loaded through ctypes.) Another
# machine, or this one after a CPU change, gets its own build; see docs/design/models.md.
#
#   REFINELAB_WHEEL_CACHE   where wheels are kept (default: $XDG_CACHE_HOME/refinelab/wheels or
#                           ~/.cache/refinelab/wheels)
#   LLAMA_CPP_PYTHON_VERSION  which release (default below)
#   PYTHON                  the interpreter whose pip builds the wheel (default: python3)
set -euo pipefail
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
CACHE="${REFINELAB_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/refinelab/wheels}"
BUILDER="${PYTHON:-python3}"

die() { echo "local-wheel.sh: $*" >&2; exit 2; }

machine_key() {
  local flags
  flags="$(grep -m1 -E '^(flags|Features)[[:space:]]*:' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | tr ' ' '\n' | sort -u | tr '\n' ' ')"
  printf '%s-%s-cpu%s' "$VERSION" "$(uname -m)" "$(printf '%s|%s' "$flags" "${CMAKE_ARGS:-}" | sha256sum | cut -c1-12)"
}

DIR="$CACHE/llama-cpp-python-$(machine_key)"

cached_wheel() { compgen -G "$DIR/llama_cpp_python-$VERSION-*.whl" | head -n1 || true; }

build() {
  command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 \
    || die "building llama.cpp needs a C++ compiler: apt install g++ (or build-essential)"
  local pip=("$BUILDER" -m pip)
  if ! "$BUILDER" -m pip --version >/dev/null 2>&1; then
    command -v uv >/dev/null 2>&1 || die "$BUILDER has no pip and uv is absent: set PYTHON to an interpreter with pip"
    pip=(uv tool run --from pip pip)
  fi
  STAGING="$DIR.building.$$"  # global: the exit trap runs after this function's locals are gone
  trap 'rm -rf "$STAGING"' EXIT
  mkdir -p "$STAGING"
  echo "local-wheel.sh: compiling llama-cpp-python $VERSION for this machine (about 20 minutes on 2 cores), once" >&2
  "${pip[@]}" wheel --quiet --disable-pip-version-check --no-deps "llama-cpp-python==$VERSION" -w "$STAGING" >&2
  mkdir -p "$CACHE"
  rm -rf "$DIR"
  mv "$STAGING" "$DIR"  # complete or absent: never a half-written wheel in the cache
  trap - EXIT
}

adopt() {
  local wheel="$1"
  [ -f "$wheel" ] || die "no wheel at $wheel"
  case "$(basename "$wheel")" in
    llama_cpp_python-"$VERSION"-*.whl) ;;
    *) die "$wheel is not a llama-cpp-python $VERSION wheel" ;;
  esac
  mkdir -p "$DIR"
  cp "$wheel" "$DIR/.$(basename "$wheel").tmp"
  mv "$DIR/.$(basename "$wheel").tmp" "$DIR/$(basename "$wheel")"
}

install_into() {
  local python="$1" extras="${2:-local}"
  [ -x "$python" ] || die "no interpreter at $python"
  local project
  project="$(cd "$(dirname "$0")/.." && pwd)"
  # the cached wheel only: never fall back to compiling from the source distribution
  if command -v uv >/dev/null 2>&1; then
    uv pip install --quiet --python "$python" --find-links "$DIR" --only-binary llama-cpp-python \
      "llama-cpp-python==$VERSION" -e "$project[$extras]"
  else
    "$python" -m pip install --quiet --disable-pip-version-check --find-links "$DIR" \
      --only-binary llama-cpp-python "llama-cpp-python==$VERSION" -e "$project[$extras]"
  fi
}

case "${1:-}" in
  --adopt) [ $# -eq 2 ] || die "usage: local-wheel.sh --adopt WHEEL"; adopt "$2" ;;
  --install)
    [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: local-wheel.sh --install PYTHON [EXTRAS]"
    [ -n "$(cached_wheel)" ] || build
    install_into "$2" "${3:-local}" ;;
  "") [ -n "$(cached_wheel)" ] || build ;;
  *) die "usage: local-wheel.sh [--install PYTHON | --adopt WHEEL]" ;;
esac
cached_wheel
