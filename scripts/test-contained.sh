#!/usr/bin/env bash
# Run the hostile suites where no namespace can be made, as in a container with Docker's default
# profile, a pod without CAP_SYS_ADMIN or a CI runner: inside
#   bwrap --unshare-user --disable-userns --cap-drop ALL --dev-bind / /
# (this user, no capability at all, no further user namespace; the machine's files, processes and
# network as they are), bubblewrap cannot start, so `auto` must fall back to the `landlock` isolation,
# and every escape in tests/sandbox must still be contained. scripts/test.sh runs this as root and
# scripts/test-nonroot.sh as the unprivileged user.
#
#   bash scripts/test-contained.sh PYTHON [pytest arguments]   # from the project's root (or a copy of it)
#
# Where the wrapper itself cannot be made (no bubblewrap, or no user namespaces for this user), it says
# so and skips: the landlock runs of the ordinary test passes still run.
set -euo pipefail
python="${1:?usage: test-contained.sh PYTHON [pytest arguments]}"
shift
wrapper=(bwrap --unshare-user --disable-userns --cap-drop ALL --dev-bind / /)
if ! command -v bwrap >/dev/null 2>&1 || ! "${wrapper[@]}" true 2>/dev/null; then
  echo "test-contained.sh: cannot make the container-like wrapper here (bwrap with user namespaces): skipped" >&2
  exit 0
fi
echo "test-contained.sh: tests/sandbox hostile suites as $(id -un) without namespaces or capabilities"
"${wrapper[@]}" env REFINELAB_EXPECT_ISOLATION=landlock "$python" -m pytest \
  tests/sandbox/test_hostile.py tests/sandbox/test_escapes.py tests/sandbox/test_landlock.py \
  -p no:cacheprovider -q "$@"
