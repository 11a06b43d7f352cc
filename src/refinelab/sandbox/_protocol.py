"""What strategies, experiments and benchmark preparation need from a sandbox: the :class:`Sandbox` role."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import IsolationLevel, RunResult, TestOutcome
from refinelab.sandbox._suite import Item, Suite


class Sandbox(Protocol):
    """Runs programs against suites and judges them; never raises for what the programs do.

    :class:`~refinelab.sandbox.WorkerPool` is the real one (isolated worker processes);
    :class:`~refinelab.sandbox.FakeSandbox` runs trusted test code in-process, for unit tests.
    """

    isolation: IsolationLevel
    """How strongly programs are isolated (recorded with every run)."""
    limits: Limits
    """The default limits per test."""
    size: int
    """How many jobs run at once (callers keep that many busy)."""
    batch_size: int
    """Programs per job (callers group items in multiples of ``size * batch_size``)."""
    machine: str | None
    """The machine the programs run on, as an identity (``_machine.this_machine``); None where they run on
    several (a cluster's nodes). Reference times cached on this machine are read here as measured."""

    async def run(self, code: str, suite: Suite, *, limits: Limits | None = None) -> RunResult:
        """Run one program against a suite and judge every test."""
        ...

    async def run_items(
        self, items: Sequence[Item], *, limits: Limits | None = None, isolate: bool = False
    ) -> list[RunResult]:
        """Run programs, each against its own suite; results in item order."""
        ...

    async def values(  # noqa: PLR0913 - the Sandbox role's values(): keywords, each what one caller sets
        self,
        code: str,
        expressions: Sequence[str],
        *,
        entry_point: str | None = None,
        setup: str = "",
        limits: Limits | None = None,
        arguments: Sequence[str] | None = None,
        encoded: bool = False,
    ) -> list[object | TestOutcome]:
        """Evaluate expressions against a trusted program; a failing expression yields its outcome.
        ``arguments``: each expression's arguments as a JSON array, when it is ``candidate(...)`` with them as
        literals (see :attr:`~refinelab.problems.CallTest.args`): the sandbox then reads them, not compiling.
        ``encoded``: each value as the worker encoded it (``codec.encode``), not decoded: what the host stores
        of a trusted program's value (decoding it and encoding it again gives the same, but for a set's order)."""
        ...
