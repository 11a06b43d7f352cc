#!/usr/bin/env bash
# Run the sandbox tests (the hostile ones included) as an unprivileged user, so that the
# user-namespace mode (isolation `bwrap`) is exercised as well as root's `bwrap-uid`, and `landlock`
# under that user's uid; then the hostile suites as that user where no namespace can be made
# (scripts/test-contained.sh), and once as root from this world-readable copy, where root may change
# uid and `landlock` runs each worker under a private uid (`landlock-uid`, as in a Docker container's
# root). scripts/test.sh calls this when it runs as root.
#
# The checkout and the default interpreter may live under /root (mode 700 here), out of the user's
# reach, so this builds what the user needs in a world-readable place: a copy of the project and a
# virtualenv made from the system Python holding the project's dependencies (rebuilt only when
# pyproject.toml changes). The shared benchmark data beside the project is linked in when present.
#
#   REFINELAB_NONROOT_USER=nobody      # who runs the tests (default: nobody)
#   REFINELAB_NONROOT_DIR=/var/tmp/... # where the copy and the virtualenv live
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "test-nonroot.sh: run as root (it switches to an unprivileged user)" >&2; exit 2; }
user="${REFINELAB_NONROOT_USER:-nobody}"
base="${REFINELAB_NONROOT_DIR:-/var/tmp/refinelab-nonroot}"
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3)"

mkdir -p "$base"
chmod 755 "$base"
stamp="$(cat pyproject.toml scripts/test-nonroot.sh | sha256sum | cut -c1-16) $("$python" -c 'import sys; print(sys.version.split()[0])')"
if [ ! -x "$base/venv/bin/python" ] || [ "$(cat "$base/venv.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$base/venv"
  "$python" -m venv "$base/venv"
  mapfile -t deps < <("$base/venv/bin/python" -c '
import sys
try:
    import tomllib
except ImportError:
    import tomli as tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
extras = project["optional-dependencies"]
print("\n".join(project["dependencies"] + extras["humaneval"] + extras["ray"]))')
  "$base/venv/bin/python" -m pip install --quiet --disable-pip-version-check pytest numpy "${deps[@]}"
  echo "$stamp" > "$base/venv.stamp"
fi

rm -rf "$base/project"
mkdir -p "$base/project" "$base/home"
mkdir -p "$base/project/scripts"
cp -r pyproject.toml src tests "$base/project/"
cp scripts/test-contained.sh "$base/project/scripts/"
[ -d ../shared ] && ln -sfn "$(cd ../shared && pwd)" "$base/shared"
chmod -R a+rX "$base/project" "$base/venv"
chown "$user" "$base/home"

cd "$base/project"
echo "test-nonroot.sh: tests/sandbox as $user (user namespaces)"
as_user=(runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME="$base/home" PYTHONPATH="$base/project/src"
  PYTHONDONTWRITEBYTECODE=1)
"${as_user[@]}" "$base/venv/bin/python" -m pytest tests/sandbox -p no:cacheprovider -q "$@"
[ "$#" -eq 0 ] || exit 0  # a chosen subset: not the passes below
"${as_user[@]}" bash scripts/test-contained.sh "$base/venv/bin/python"
echo "test-nonroot.sh: the landlock runs of the hostile suites as root, from this copy (landlock-uid)"
env -i PATH=/usr/bin:/bin HOME="$base/home" PYTHONPATH="$base/project/src" PYTHONDONTWRITEBYTECODE=1 \
  REFINELAB_EXPECT_ISOLATION=landlock-uid "$base/venv/bin/python" -m pytest tests/sandbox/test_hostile.py \
  tests/sandbox/test_escapes.py -k landlock -p no:cacheprovider -q
