"""The ``landlock`` isolation on the host side: where no namespace can be made (a container's default
profile, a pod without ``CAP_SYS_ADMIN``, a distribution that restricts unprivileged user namespaces),
workers confine themselves with Landlock and seccomp (``_worker/confine.py``).

This module lays out the pool's directories (a scratch directory per worker, the only writable place;
a canary file the startup probe must fail to read), writes the policy each worker applies, chooses
the worker's uid (a private one where this process is root and may change uid, as ``bwrap-uid`` does),
and probes that the kernel enforces it all. See docs/design/sandbox.md for what it covers and what not.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from refinelab.sandbox._bwrap import (
    _ENV,
    _FLAGS,
    WORKER_PACKAGE,
    WorkerCommand,
    _interpreter_dirs,
    _launcher,
    _site_dirs,
    base_interpreter,
    package_dirs,
    worker_uid,
)
from refinelab.sandbox._worker import landlock
from refinelab.sandbox._worker import protocol as wire
from refinelab.sandbox._worker.confine import ENVIRONMENT

DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
"""Device files a program may open (read and write), as bubblewrap's minimal ``/dev`` offers them."""
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64")
"""What bubblewrap binds read-only; the same is readable here (minus site-packages)."""
_CAP_SETGID, _CAP_SETUID = 6, 7


@dataclass(frozen=True)
class Identity:
    """Which uid the workers run as, and why."""

    private: bool
    """Each worker gets a private uid (this process is root and may change uid); False: this process's own."""
    note: str = ""
    """Why a root process keeps its uid, when it does."""


class Layout:
    """The pool's directories: ``<tmp>/refinelab-XXXX/`` (searchable, not listable) holding a canary
    file, each worker's private scratch directory, and links to the packages candidates may import."""

    def __init__(self, packages: tuple[str, ...]) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="refinelab-"))
        self.root.chmod(0o711)  # a worker under a private uid reaches its own directory through it
        self.canary = self.root / "canary"
        self.canary.write_text("outside the sandbox\n")
        self.canary.chmod(0o644)  # readable by anyone but a confined program: the probe checks that
        self.packages = self.root / "packages"
        self.packages.mkdir(mode=0o755)
        self.package_trees = [str(d) for d in package_dirs(packages)]
        for directory in self.package_trees:
            (self.packages / Path(directory).name).symlink_to(directory)

    def scratch(self, index: int, uid: int | None) -> str:
        """Worker ``index``'s own directory (its jobs' working directories, ``HOME`` and ``TMPDIR``)."""
        path = self.root / f"worker{index}"
        path.mkdir(mode=0o700, exist_ok=True)
        if uid is not None:
            os.chown(path, uid, uid)
        return str(path)

    def cleanup(self) -> None:
        """Remove everything (after the workers stopped)."""
        shutil.rmtree(self.root, ignore_errors=True)


def identity(python: str) -> Identity:
    """A private uid per worker where this process is root and may change uid; else its own uid, saying
    why when it is root."""
    if os.geteuid() != 0:
        return Identity(False)
    if not _may_change_uid():
        return Identity(False, "root without CAP_SETUID/CAP_SETGID, as a container's root: jobs keep uid 0")
    if shutil.which("setpriv") is None:
        return Identity(False, "setpriv (util-linux) is not installed: jobs keep uid 0")
    hidden = [d for d in (*_interpreter_dirs(python), str(WORKER_PACKAGE)) if not others_may_read(d)]
    if hidden:
        return Identity(False, f"{hidden[0]} is not readable by other users: jobs keep uid 0")
    return Identity(True)


def _may_change_uid() -> bool:
    try:
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
        effective = int(fields["CapEff"].strip(), 16)
    except (OSError, KeyError, ValueError):
        return False
    return bool(effective >> _CAP_SETUID & 1 and effective >> _CAP_SETGID & 1)


def others_may_read(directory: str) -> bool:
    """Whether a user with no relation to the owner may read ``directory`` (every parent searchable)."""
    path = Path(directory)
    try:
        if path.stat().st_mode & 0o005 != 0o005:
            return False
        return all(parent.stat().st_mode & 0o001 for parent in path.parents)
    except OSError:
        return False


def policy(python: str, scratch: str, layout: Layout) -> dict[str, object]:
    """What a worker's programs may touch (``_worker/landlock.py``'s :class:`~landlock.Policy`)."""
    read = [*SYSTEM_TREES, *_interpreter_dirs(python), str(layout.packages), "/proc"]
    return {
        "read": [path for path in read if os.path.lexists(path)],
        "hidden": _site_dirs(),
        "write": [scratch],
        "devices": [device for device in DEVICES if os.path.exists(device)],
        "packages": layout.package_trees,
        "canary": str(layout.canary),
        "abi": None,  # the kernel's; an older one confines as that ABI would (signals by the filter below 6)
    }


def landlock_command(index: int, layout: Layout, who: Identity, python: str | None = None) -> WorkerCommand:
    """The command for worker ``index``: the base interpreter, as under bubblewrap, with the sandbox's
    environment and the policy in ``$REFINELAB_CONFINE``; under ``setpriv`` when it gets a private uid."""
    python = python or base_interpreter()
    uid = worker_uid(index) if who.private else None
    scratch = layout.scratch(index, uid)
    argv: list[str] = []
    if uid is not None:
        argv += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    argv += [python, *_FLAGS, "-c", _launcher(str(WORKER_PACKAGE.parent)), scratch]
    if layout.package_trees:
        argv.append(str(layout.packages))
    env = {**_ENV, "HOME": scratch, "TMPDIR": scratch, ENVIRONMENT: json.dumps(policy(python, scratch, layout))}
    return WorkerCommand(tuple(argv), "landlock-uid" if uid is not None else "landlock", env)


def what_it_got(who: Identity) -> str:
    """The confinement in words, for the one line a pool says when it falls back to this isolation."""
    abi, _ = landlock.abi_version()
    signals = "signals scoped by Landlock" if abi >= landlock.SCOPE_ABI else "signals limited to the job's group"
    uid = "a private uid per worker" if who.private else who.note or "the caller's uid"
    return f"Landlock ABI {abi} and a seccomp filter, {signals}, {uid}"


def probe_landlock(python: str | None = None) -> str | None:
    """Start a worker with the confinement and return why it failed (None: it works).

    The worker refuses to start unless a forked probe child, confined, was refused reading a file
    outside, creating one, opening a network socket and signalling the worker (``confine.verify``).
    """
    return kernel_problem() or _start_one(python or base_interpreter(), identity(python or base_interpreter()))


def kernel_problem() -> str | None:
    """Why this kernel's Landlock cannot serve (absent, disabled, or older than ABI 3); None: it can."""
    abi, why = landlock.abi_version()
    if abi < landlock.MIN_ABI:
        return why or f"Landlock ABI {abi} is too old (ABI {landlock.MIN_ABI}, Linux 6.2, is needed)"
    return None


REFUSED = "refinelab: landlock: "
"""How a confined worker that refuses to start begins its one line on stderr."""


def confinement_refused(stderr: bytes) -> str | None:
    """The reason a confined worker gave for refusing to start, from its stderr; None: it gave none."""
    lines = [line for line in stderr.decode(errors="replace").splitlines() if line.startswith(REFUSED)]
    return lines[-1].removeprefix(REFUSED) if lines else None


@functools.cache
def _start_one(python: str, who: Identity) -> str | None:
    """Start one confined worker and stop it; why it failed, or None. Once per process and interpreter:
    what the kernel enforces does not change while a process runs, and each real worker proves it again
    as it starts."""
    layout = Layout(())
    try:
        command = landlock_command(0, layout, who, python)
        done = subprocess.run(
            command.argv, env=command.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"a confined worker failed to start: {exc}"
    finally:
        layout.cleanup()
    if done.returncode == 0 and done.stdout == wire.READY:
        return None
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    given = confinement_refused(done.stderr)
    return given or (lines[-1] if lines else f"a confined worker exited with status {done.returncode}")
