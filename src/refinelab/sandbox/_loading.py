"""A benchmark's problems while they load: each one whole as soon as its expected outputs are in.

HumanEval+'s and MBPP+'s hidden tests come from outputs read from a cache or computed in the sandbox
(``_reference.py``); building them is seconds of the driver's CPU (HumanEval+'s 164 problems hold 124,000
tests), and computing them is most of a cold check. A :class:`Loading` gives every problem without its
hidden tests at once (:attr:`Loading.bare`: ids, prompts, visible tests: enough to read a samples file
and reject a bad one before anything is computed), and each problem whole (:meth:`Loading.whole`) as soon
as it is built, so a task's programs are scored while later tasks load, instead of every worker idling
until the last one has.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType

from refinelab.problems import Problem


class Loading:
    """Problems loading in the background (see the module docstring); use as an async context manager, or
    await :meth:`problems`.

    Leaving the block normally waits for the loading to end (a cache being computed is written even when
    the samples needed only some tasks); leaving it with an error stops the loading.
    """

    def __init__(self, bare: list[Problem], load: Callable[[Loading], Awaitable[None]] | None = None) -> None:
        """``bare``: every problem, in order, without its hidden tests; ``load`` publishes each whole one
        (:meth:`publish`); ``None``: ``bare`` are whole already."""
        loop = asyncio.get_running_loop()
        self.bare = bare
        self._whole: dict[str, asyncio.Future[Problem]] = {}
        for problem in bare:
            self._whole[problem.id] = loop.create_future()
            if load is None:
                self._whole[problem.id].set_result(problem)
        self._task = asyncio.ensure_future(self._run(load)) if load is not None else None

    async def _run(self, load: Callable[[Loading], Awaitable[None]]) -> None:
        try:
            await load(self)
            missing = [key for key, found in self._whole.items() if not found.done()]
            if missing:
                raise RuntimeError(f"{len(missing)} problems were never loaded, the first {missing[0]}")  # a bug
        except asyncio.CancelledError:
            for found in self._whole.values():
                found.cancel()
            raise
        except BaseException as error:  # every waiter gets it, instead of waiting for ever
            for found in self._whole.values():
                if not found.done():
                    found.set_exception(error)
                    found.exception()  # read here: a problem nobody waits for does not log it
            raise

    def publish(self, problem: Problem) -> None:
        """``problem`` is whole: whoever waits for it goes on (the first publication of an id stands)."""
        found = self._whole.get(problem.id)
        if found is None:
            raise RuntimeError(f"{problem.id} is not one of this benchmark's problems")  # a loader's bug
        if not found.done():
            found.set_result(problem)

    def whole(self, problem_id: str) -> asyncio.Future[Problem]:
        """The problem with its hidden tests, once loaded (the loading's error, if it failed)."""
        return self._whole[problem_id]

    def finished(self) -> bool:
        """Whether every problem is whole (or the loading stopped)."""
        return self._task is None or self._task.done()

    async def problems(self) -> list[Problem]:
        """Every problem, whole, in order, once all are loaded."""
        if self._task is not None:
            await asyncio.shield(self._task)
        return [self._whole[problem.id].result() for problem in self.bare]

    async def __aenter__(self) -> Loading:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._task is None:
            return
        if error is None:
            await self._task
            return
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
