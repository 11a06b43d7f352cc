# Shared by scripts/install.sh and scripts/test.sh (sourced, not run): apt as root or through sudo,
# the project virtualenv, and installing into it (uv when present, else pip).
#
#   PYTHON          the interpreter the virtualenv is made from (default: python3 on PATH)
#   REFINELAB_VENV  where the virtualenv is (default: .venv)
PYTHON="${PYTHON:-python3}"
VENV="${REFINELAB_VENV:-.venv}"
SCRIPT="${0##*/}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "$SCRIPT: please install: $*" >&2; return 0; }
  if [ -n "$sudo_cmd" ] && ! command -v sudo >/dev/null 2>&1; then
    echo "$SCRIPT: installing $* needs root: run this as root, or install sudo, or install them first" >&2
    return 1
  fi
  $sudo_cmd apt-get update -qq
  # through env, not before sudo: sudo's env_reset would drop the variable and apt could stop to ask
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}

missing_venv_package() {
  # Debian and Ubuntu ship venv's ensurepip separately, one package per version (python3.12-venv);
  # uv makes virtualenvs without it
  local python="$1"
  if ! command -v uv >/dev/null 2>&1 && ! "$python" -c "import ensurepip, venv" >/dev/null 2>&1; then
    "$python" -c 'import sys; print("python%d.%d-venv" % sys.version_info[:2])'
  fi
}

make_venv() {
  [ -x "$VENV/bin/python" ] && return 0
  if command -v uv >/dev/null 2>&1; then
    uv venv --quiet --python "$PYTHON" "$VENV"
  else
    "$PYTHON" -m venv "$VENV"
  fi
}

venv_install() {
  # refinelab from this checkout (editable) with the extras named, e.g. '.[view]'
  if command -v uv >/dev/null 2>&1; then
    uv pip install --quiet --python "$VENV/bin/python" -e "$1"
  else
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$1"
  fi
}
