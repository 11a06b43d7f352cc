"""Interpreter state a program may change, saved before and restored after each program in a batch.

A batch runs several programs for the same tests in one child process (one fork per batch instead of
per program). Between programs the child restores module namespaces, ``builtins``, ``sys`` hooks,
the environment and the working directory. What cannot be restored — threads or processes left
running, changed signal handlers or limits, trace hooks, replaced standard streams, leaked descriptors
or memory — *taints* the child: it reports the reason and exits, and the next program gets a fresh one.
"""

from __future__ import annotations

import gc
import os
import resource
import signal
import sys
import warnings
from types import ModuleType

_LIMITS = (
    resource.RLIMIT_AS,
    resource.RLIMIT_CPU,
    resource.RLIMIT_FSIZE,
    resource.RLIMIT_NOFILE,
    resource.RLIMIT_NPROC,
    resource.RLIMIT_CORE,
    resource.RLIMIT_STACK,
)
_MEMORY_GROWTH = 64 << 20
# Captured at import, before any program runs: a program may rebind ``vars`` or ``dict`` in builtins.
_NAMESPACE = vars
_CLEAR = dict.clear
_UPDATE = dict.update
_STREAMS = (0, 1, 2, 3)


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _vm_bytes() -> int:
    with open("/proc/self/statm", "rb") as handle:
        return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _handlers() -> dict[int, object]:
    catchable = signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP}
    return {int(number): signal.getsignal(number) for number in catchable}


class Snapshot:
    """What the child looked like before the first program ran."""

    def __init__(self, in_own_namespace: bool) -> None:
        self.in_own_namespace = in_own_namespace
        self.modules: list[tuple[ModuleType, dict[str, object]]] = [
            (module, dict(vars(module))) for module in list(sys.modules.values()) if isinstance(module, ModuleType)
        ]
        self.module_names = set(sys.modules)
        self.lists = {name: list(getattr(sys, name)) for name in ("path", "meta_path", "path_hooks")}
        self.warning_filters = list(warnings.filters)
        self.recursion_limit = sys.getrecursionlimit()
        self.environ = dict(os.environ)
        self.cwd = os.getcwd()
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.limits = {which: resource.getrlimit(which) for which in _LIMITS}
        self.handlers = _handlers()
        self.streams = {fd: _identity(fd) for fd in _STREAMS}
        self.fd_count = len(os.listdir("/proc/self/fd"))
        self.vm_bytes = _vm_bytes()

    def restore(self) -> str | None:
        """Put the interpreter back; return why the child cannot be reused, or None."""
        # First, using locals only: this loop also clears (then refills) this module's own globals.
        namespace_of, clear, update = _NAMESPACE, _CLEAR, _UPDATE
        for module, saved in self.modules:
            namespace = namespace_of(module)
            clear(namespace)
            update(namespace, saved)
        reason = self._taint()
        self._restore_lists()
        sys.setrecursionlimit(self.recursion_limit)
        os.environ.clear()
        os.environ.update(self.environ)
        os.umask(self.umask)
        try:
            os.chdir(self.cwd)
        except OSError:
            reason = reason or "the working directory is gone"
        gc.enable()
        return reason or self._leaks()

    def _restore_lists(self) -> None:
        for name in set(sys.modules) - self.module_names:
            sys.modules.pop(name, None)
        for name, saved in self.lists.items():
            getattr(sys, name)[:] = saved
        warnings.filters[:] = self.warning_filters
        warnings._filters_mutated()  # type: ignore[attr-defined]  # invalidates the warning caches
        if hasattr(sys, "set_int_max_str_digits"):
            sys.set_int_max_str_digits(0)

    def _taint(self) -> str | None:
        checks = (
            (len(os.listdir("/proc/self/task")) > 1, "a thread is still running"),
            (self._has_processes(), "a process is still running"),
            (sys.gettrace() is not None or sys.getprofile() is not None, "a trace or profile hook is set"),
            ({w: resource.getrlimit(w) for w in _LIMITS} != self.limits, "a resource limit was changed"),
            (_handlers() != self.handlers, "a signal handler was changed"),
            ({fd: _identity(fd) for fd in _STREAMS} != self.streams, "a standard stream was replaced"),
        )
        for failed, reason in checks:
            if failed:
                return reason
        return None

    def _has_processes(self) -> bool:
        try:
            if os.waitpid(-1, os.WNOHANG) != (0, 0):
                return True
        except ChildProcessError:
            pass
        else:
            return True
        if not self.in_own_namespace:
            return False
        me = str(os.getpid())
        return any(name.isdigit() and name not in ("1", me) for name in os.listdir("/proc"))

    def _leaks(self) -> str | None:
        if len(os.listdir("/proc/self/fd")) > self.fd_count or _vm_bytes() > self.vm_bytes + _MEMORY_GROWTH:
            gc.collect()
            if len(os.listdir("/proc/self/fd")) > self.fd_count:
                return "file descriptors were left open"
            if _vm_bytes() > self.vm_bytes + _MEMORY_GROWTH:
                return "memory was left allocated"
        return None
