"""Interpreter state a program may change, saved before and restored after each program in a batch.

A batch runs several programs for the same tests in one child process (one fork per batch instead of
per program). Between programs the child restores module namespaces, ``builtins``, ``sys`` hooks,
the environment and the working directory. What cannot be restored — threads or processes left
running, changed signal handlers or limits, trace hooks, replaced standard streams, leaked descriptors
or memory — *taints* the child: it reports the reason and exits, and the next program gets a fresh one.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: no enum wrapping
import builtins
import decimal
import gc
import os
import random
import resource
import signal
import sys
import warnings
from operator import is_
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


_CATCHABLE = sorted(int(n) for n in signal.valid_signals() - {signal.SIGKILL, signal.SIGSTOP})


def _handlers() -> list[object]:
    getsignal = _signal.getsignal  # the C function: signal.getsignal wraps every answer in an enum
    return [getsignal(number) for number in _CATCHABLE]


def _unchanged(namespace: dict[str, object], saved: dict[str, object]) -> bool:
    """Same keys bound to the same objects, in the same order (identity only: no __eq__ runs)."""
    return (
        len(namespace) == len(saved)
        and all(map(is_, namespace, saved))
        and all(map(is_, namespace.values(), saved.values()))
    )


class Snapshot:
    """What the interpreter looked like before any program ran.

    The module part is taken once, in the worker, and inherited by every child it forks (copying
    every module's namespace per child cost about a millisecond); :meth:`bind` adds the process part
    (limits, descriptors, working directory) in each child.
    """

    def __init__(self) -> None:
        self.in_own_namespace = False
        self.modules = dict(sys.modules)
        self.saved: dict[int, tuple[ModuleType, dict[str, object]]] = {
            id(module): (module, dict(vars(module)))
            for module in self.modules.values()
            if isinstance(module, ModuleType)
        }
        harness = [m for name, m in self.modules.items() if name.startswith("_worker")]
        self.always = [id(m) for m in (builtins, sys, *harness)]
        self.lists = {name: list(getattr(sys, name)) for name in ("path", "meta_path", "path_hooks")}
        self.warning_filters = list(warnings.filters)
        self.decimal_context = decimal.getcontext().copy()
        self.recursion_limit = sys.getrecursionlimit()
        self.environ = dict(os.environ)

    def bind(self, in_own_namespace: bool) -> None:
        """Record this child's own process state (call in the child, after its limits are set)."""
        self.in_own_namespace = in_own_namespace
        self.cwd = os.getcwd()
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.limits = {which: resource.getrlimit(which) for which in _LIMITS}
        self.handlers = _handlers()
        self.streams = {fd: _identity(fd) for fd in _STREAMS}
        self.fd_count = len(os.listdir("/proc/self/fd"))
        self.vm_bytes = _vm_bytes()

    def restore(self, program_namespace: dict[str, object]) -> str | None:
        """Put the interpreter back; return why the child cannot be reused, or None.

        Checked and restored: ``builtins``, ``sys``, the harness's own modules, every module the
        program's namespace refers to (directly, or through the functions and classes it imported),
        and any module whose ``sys.modules`` entry was replaced. Checking every loaded module after
        every program cost about 1 ms; this costs tens of microseconds.
        """
        # First, using locals only: the loop may clear (then refill) this module's own globals.
        namespace_of, clear, update, unchanged, saved = _NAMESPACE, _CLEAR, _UPDATE, _unchanged, self.saved
        for key in self.always:
            module, original = saved[key]
            if not unchanged(namespace_of(module), original):
                clear(namespace_of(module))
                update(namespace_of(module), original)
        for module, original in self._reachable(program_namespace):
            if not unchanged(vars(module), original):
                vars(module).clear()
                vars(module).update(original)
        return self._restore_process_state()

    def _reachable(self, program_namespace: dict[str, object]) -> list[tuple[ModuleType, dict[str, object]]]:
        ids = {id(self.modules[name]) for name, m in list(sys.modules.items()) if self.modules.get(name, m) is not m}
        for value in list(program_namespace.values()):
            if isinstance(value, ModuleType):
                ids.add(id(value))
            else:
                owner = self.modules.get(str(getattr(value, "__module__", "")))
                if owner is not None:
                    ids.add(id(owner))
        return [self.saved[key] for key in ids if key in self.saved]

    def _restore_process_state(self) -> str | None:
        reason = self._taint()
        self._restore_lists()
        decimal.setcontext(self.decimal_context.copy())
        random.seed()  # a fresh process would be seeded from the OS too
        sys.setrecursionlimit(self.recursion_limit)
        if os.environ != self.environ:
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
        for name in set(sys.modules) - set(self.modules):
            sys.modules.pop(name, None)
        sys.modules.update(self.modules)
        for name, saved in self.lists.items():
            getattr(sys, name)[:] = saved
        warnings.filters[:] = self.warning_filters  # type: ignore[index]  # a list at run time
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
