"""The timeout rerun, one rule for every sandbox: which CPU timeouts run again, and what replaces them.

A program that exceeded a CPU limit is run again, alone in a fresh process, before its timeout stands
(``Limits.timeout_reruns``; docs/design/sandbox.md, "A CPU timeout stands only when it recurs"), but only
where the rerun can change what was asked for: when only the verdict is wanted and a test before the
first timeout already failed, the program fails either way. That needs the judged outcomes, so the rule
runs where programs are judged: :class:`~refinelab.sandbox.WorkerPool` in this process, and
:class:`~refinelab.sandbox.ClusterSandbox` on the driver (a node never sees an expected value; it runs
the reruns the driver sends it). Both call :func:`confirmed` with their own way of running one program
alone (a :data:`Rerun`), so a verdict does not depend on which sandbox gave it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from refinelab.sandbox._judge import ProgramReports, Ran, is_cpu_timeout, judged
from refinelab.sandbox._limits import Limits
from refinelab.sandbox._outcome import RunResult, TestOutcome
from refinelab.sandbox._suite import InputItem, Item, Suite, SuiteInputs

Rerun = Callable[[str, SuiteInputs], Awaitable[Ran]]
"""Runs one program on some inputs alone (``isolate``: a fresh process), unjudged."""


def worth_confirming(outcomes: Sequence[TestOutcome], reports: ProgramReports, limits: Limits) -> bool:
    """Whether running a program with a CPU timeout again can change what was asked for: always, unless
    only the verdict is wanted and a test before its first timeout already failed."""
    timeouts = reports.cpu_timeouts
    if not timeouts:
        return False
    return not limits.stop_at_failure or all(o.passed for o in outcomes[: timeouts[0]])


async def confirmed(
    items: Sequence[Item], inputs: Sequence[InputItem], found: Sequence[Ran], limits: Limits, rerun: Rerun
) -> list[RunResult]:
    """Each program's judged result once its CPU timeouts worth confirming were run again (``inputs``: the
    items' inputs under ``limits``, as they ran; ``found``: what they did)."""
    runs = list(found)
    results = [_judged(suite, ran, limits) for (_, suite), ran in zip(items, runs)]
    for _ in range(limits.timeout_reruns):
        suspects = [i for i, r in enumerate(results) if worth_confirming(r.outcomes, runs[i].reports, limits)]
        if not suspects:
            break
        again = await asyncio.gather(*(_again(*inputs[i], runs[i], limits, rerun) for i in suspects))
        for i, ran in zip(suspects, again):
            if ran is not None:  # the first run within the limit stands: load only ever adds CPU time
                runs[i] = ran
                results[i] = _judged(items[i][1], ran, limits)
    return results


def _judged(suite: Suite, ran: Ran, limits: Limits) -> RunResult:
    return judged(suite, ran.reports, ran.isolation, ran.node, limits=limits)


async def _again(code: str, inputs: SuiteInputs, first: Ran, limits: Limits, rerun: Rerun) -> Ran | None:
    """What replaces program ``code``'s run if a second run stays within the CPU limit, else ``None``.

    A function program whose tests share one process runs all its tests again (an earlier test may have
    warmed a cache a later one relies on); a stdio program, or a function program whose every test gets
    its own verdict (``after_timeout="continue"``), only the tests that timed out (and, when only the
    verdict is wanted, those skipped after them).
    """
    row = first.reports.row
    if inputs.kind == "function" and limits.after_timeout == "skip":
        again = await rerun(code, inputs)
        return None if again.reports.cpu_timeouts else again
    timed_out = first.reports.cpu_timeouts
    chosen = list(range(timed_out[0], len(row))) if limits.stop_at_failure else timed_out
    again = await rerun(code, inputs.subset(chosen))
    if limits.stop_at_failure and is_cpu_timeout(again.reports.row[0]):
        return None
    merged = list(row)
    for index, report in zip(chosen, again.reports.row):
        if limits.stop_at_failure or not is_cpu_timeout(report):
            merged[index] = report
    if merged == list(row):
        return None
    return Ran(ProgramReports(tuple(merged), ""), again.node, again.isolation)
