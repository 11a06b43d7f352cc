"""Building the command that starts one sandboxed worker, and probing what this machine allows."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from refinelab.errors import InfrastructureError, MissingDependency
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel

WORKER_PACKAGE = Path(__file__).with_name("_worker")
WORKER_ROOT = "/refinelab"
"""Where the worker package is mounted inside the sandbox."""
UID_BASE = 1_900_000_000
"""First uid used for workers when running as root; chosen above systemd's container range."""

_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


@dataclass(frozen=True)
class WorkerCommand:
    """How to start one worker."""

    argv: tuple[str, ...]
    """The command line."""
    isolation: IsolationLevel
    """The isolation it gives."""
    env: Mapping[str, str] | None = None
    """The worker's whole environment; None to inherit ours (bubblewrap sets its own)."""


def bwrap_path() -> str | None:
    """The bubblewrap binary, if installed."""
    return shutil.which("bwrap")


UID_BLOCKS = 50_000
"""Blocks of 64 worker uids above ``UID_BASE``; a process claims one block for its lifetime."""
_claimed: tuple[int, int] | None = None  # (block, fd holding its lock) of this process


def worker_uid(index: int) -> int:
    """A private uid for worker ``index`` of this process, so process limits are per worker.

    Uids come from a block this process holds a lock on, so two refinelab processes on one machine
    never share a uid (a shared uid would share RLIMIT_NPROC and let one job signal another's).
    """
    global _claimed
    if _claimed is None:
        _claimed = claim_uid_block(lock_directory())
    return UID_BASE + _claimed[0] * 64 + index % 64


def lock_directory() -> Path:
    """Where uid-block locks live: a directory every refinelab process on the machine sees."""
    base = Path("/run/lock") if os.access("/run/lock", os.W_OK) else Path(tempfile.gettempdir())
    return base / "refinelab-uids"


def claim_uid_block(directory: Path, start: int | None = None) -> tuple[int, int]:
    """Lock the first free uid block from ``start`` (default: from this pid); return it and the lock's fd.

    The lock is an ``flock`` on ``<directory>/<block>``: the kernel drops it when the holder exits,
    so a crashed process never leaves a block taken.
    """
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    first = os.getpid() % UID_BLOCKS if start is None else start
    for step in range(UID_BLOCKS):
        block = (first + step) % UID_BLOCKS
        fd = os.open(directory / str(block), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return block, fd
    raise InfrastructureError(f"every worker uid block in {directory} is taken")


PACKAGES_ROOT = f"{WORKER_ROOT}/packages"
"""Where packages a user allowed are mounted inside the sandbox (on the candidates' ``sys.path``)."""


def package_dirs(names: tuple[str, ...]) -> list[Path]:
    """The installed directories of the named top-level packages (plus ``<name>.libs`` of wheels)."""
    found: list[Path] = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise MissingDependency(f"package {name!r} is not installed, so it cannot be offered to candidates")
        directory = Path(next(iter(spec.submodule_search_locations)))
        found.append(directory)
        libs = directory.with_name(f"{name}.libs")
        if libs.is_dir():
            found.append(libs)
    return found


def base_interpreter() -> str:
    """The interpreter behind this one: a virtualenv's ``bin/python`` is a link to (or a copy of) a base
    interpreter that lives outside the virtualenv, and only the base one is visible in the sandbox."""
    return os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)


def bwrap_command(
    index: int, limits: Limits, python: str | None = None, packages: tuple[str, ...] = ()
) -> WorkerCommand:
    """The bubblewrap command for worker ``index``.

    As root, the sandbox is built without a user namespace and the worker drops to a private uid
    with ``setpriv`` (so RLIMIT_NPROC holds); otherwise a user namespace is used and the worker keeps
    the caller's uid. Either way the worker is PID 1 of a fresh PID namespace with no network, a
    read-only view of the interpreter and a private ``/tmp``.
    """
    bwrap = bwrap_path()
    if bwrap is None:
        raise FileNotFoundError("bwrap")
    python = python or base_interpreter()
    root = os.geteuid() == 0
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if not root:
        argv += ["--unshare-user", "--cap-drop", "ALL"]
    argv += ["--as-pid-1", "--die-with-parent", "--new-session", "--clearenv"]
    for key, value in _ENV.items():
        argv += ["--setenv", key, value]
    argv += _filesystem(python, limits)
    for directory in package_dirs(packages):
        argv += ["--ro-bind", str(directory), f"{PACKAGES_ROOT}/{directory.name}"]
    argv += ["--chdir", "/tmp", "--"]
    if root:
        uid = str(worker_uid(index))
        argv += [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]
    argv += [python, *_FLAGS, "-c", _launcher(WORKER_ROOT), "/tmp"]
    if packages:
        argv.append(PACKAGES_ROOT)
    return WorkerCommand(tuple(argv), "bwrap-uid" if root else "bwrap")


def _filesystem(python: str, limits: Limits) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    size = str(limits.scratch_bytes)
    args += ["--proc", "/proc", "--dev", "/dev"]
    # The private /tmp first: an interpreter installed under /tmp is bound on top of it, not hidden.
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/dev/shm"]
    made: set[str] = set()
    for prefix in _interpreter_dirs(python):
        args += [*_traversable_parents(prefix, made), "--ro-bind", prefix, prefix]
    for hidden in _site_dirs():
        args += ["--tmpfs", hidden]
    args += [
        "--perms",
        "0755",
        "--dir",
        WORKER_ROOT,
        "--perms",
        "0755",
        "--dir",
        PACKAGES_ROOT,
        "--ro-bind",
        str(WORKER_PACKAGE),
        f"{WORKER_ROOT}/_worker",
    ]
    return args


def _interpreter_dirs(python: str) -> list[str]:
    """Directories the interpreter needs that ``/usr`` does not already cover."""
    candidates = {sys.base_prefix, sys.base_exec_prefix, str(Path(python).resolve().parent.parent)}
    if Path(python).parent.parent != Path(sys.prefix):
        candidates.add(str(Path(python).parent.parent))
    return sorted(p for p in candidates if p and not p.startswith("/usr/") and p != "/usr" and Path(p).is_dir())


_PROVIDED = ("/usr", "/dev", "/proc")
"""Trees the sandbox mounts whole: nothing can (or needs to) be created inside them."""


def _traversable_parents(path: str, made: set[str]) -> list[str]:
    """``--perms 0755 --dir`` for each parent of ``path`` the sandbox would otherwise create.

    bubblewrap creates the missing parents of a mount point with mode 0700. A worker that drops to a
    private uid (as root) then cannot get through them, and an interpreter under such a path (pyenv in
    ``/root``, any prefix under a private directory) starts without its own prefix: the dynamic loader
    and ``sys.prefix`` fall back to another Python's library, silently or not at all. ``made`` holds
    the parents already added, so each is made once.
    """
    args: list[str] = []
    for parent in reversed(Path(path).parents):
        name = str(parent)
        if name in ("/", "/tmp") or name in made or any(name == p or name.startswith(p + "/") for p in _PROVIDED):
            continue
        made.add(name)
        args += ["--perms", "0755", "--dir", name]
    return args


_SYSTEM_SITE_GLOBS = ("/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages")
"""The system's own package directories (Debian's ``dist-packages`` among them), hidden whichever
interpreter the worker runs: they are in the ``/usr`` every sandbox sees."""


def _site_dirs() -> list[str]:
    """Site-packages directories to hide: they may hold benchmark data (and its hidden tests)."""
    found = set(site.getsitepackages()) | {site.getusersitepackages()}
    found |= {str(path) for pattern in _SYSTEM_SITE_GLOBS for path in Path("/").glob(pattern.lstrip("/"))}
    found |= {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    for prefix in {sys.base_prefix, sys.prefix}:
        found |= set(site.getsitepackages([prefix]))
    return sorted(p for p in found if Path(p).is_dir())


_FLAGS = ("-s", "-S")
"""No site, no user site. Not ``-I``/``-E``: those ignore ``PYTHONHASHSEED``, and a hash seed that
differs per worker gives set-order-dependent programs a verdict that depends on the worker. The
environment is ours anyway (``_ENV``)."""


def _launcher(root: str) -> str:
    """``-c`` code that starts the worker, with the current directory (``-c``'s ``''``) off ``sys.path``."""
    return f"import sys; sys.path[:] = [{root!r}, *filter(None, sys.path)]; from _worker.server import main; main()"


def unsandboxed_command(
    python: str = sys.executable, scratch: str = "/tmp", packages: tuple[str, ...] = ()
) -> WorkerCommand:
    """The fallback: the same worker without a sandbox (rlimits and process groups only)."""
    paths = sorted({str(directory.parent) for directory in package_dirs(packages)})
    argv = (python, *_FLAGS, "-c", _launcher(str(WORKER_PACKAGE.parent)), scratch, *paths)
    # The sandbox's environment (a fixed hash seed: set iteration order decides some answers), with
    # home and temporary files in this worker's own scratch directory.
    env = {**_ENV, "PATH": os.environ.get("PATH", _ENV["PATH"]), "HOME": scratch, "TMPDIR": scratch}
    return WorkerCommand(argv, "none", env)


def probe_bwrap(limits: Limits) -> str | None:
    """Try to start a trivial sandbox; return why it fails, or None when it works."""
    if bwrap_path() is None:
        return "bubblewrap (bwrap) is not installed (install it with: sudo apt-get install -y bubblewrap)"
    command = bwrap_command(0, limits)
    probe = [*command.argv[: command.argv.index("--") + 1], "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap failed to start: {exc}"
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit status {done.returncode}"
        advice = userns_advice(done.stderr) if os.geteuid() != 0 else None  # root needs no user namespace
        return f"bubblewrap failed: {last}" + (advice or "")
    return None


_USERNS_ERRORS = (
    "uid map",
    "gid map",
    "new namespace",
    "unshare",
    "user namespace",
    "setting up uid",
    "operation not permitted",
)
_USERNS_SYSCTLS = (
    (
        "kernel/apparmor_restrict_unprivileged_userns",
        "1",
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
    ),
    ("kernel/unprivileged_userns_clone", "0", "sudo sysctl -w kernel.unprivileged_userns_clone=1"),
    ("user/max_user_namespaces", "0", "sudo sysctl -w user.max_user_namespaces=15000"),
)


def userns_advice(stderr: str, sysctl_root: Path = Path("/proc/sys")) -> str | None:
    """Why an unprivileged bubblewrap could not create its user namespace, and what to do; None when
    its error is not about user namespaces."""
    if not any(marker in stderr.lower() for marker in _USERNS_ERRORS):
        return None
    causes = [(name, fix) for name, blocked, fix in _USERNS_SYSCTLS if _sysctl(sysctl_root / name) == blocked]
    found = "; ".join(f"{name.replace('/', '.')} is set" for name, _ in causes) or "the kernel refused"
    fixes = [fix for _, fix in causes] + [
        "or allow bwrap in AppArmor (a profile granting 'userns' to /usr/bin/bwrap, as Ubuntu 24.04 documents)",
        "or run refinelab as root (the sandbox then needs no user namespace)",
        "or pass --isolation landlock (no namespace needed; what auto falls back to)",
    ]
    fixes[0] = fixes[0].removeprefix("or ")  # the first fix named, when no setting was found to blame
    return f" (unprivileged user namespaces are unavailable: {found}; to fix: {', '.join(fixes)})"


def _sysctl(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None
