"""What running candidate code against tests produced: per-test outcomes and the run result."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, islice
from operator import attrgetter, is_not
from typing import Literal

Verdict = Literal["pass", "fail", "error", "timeout", "memory", "output_limit", "crashed", "skipped"]
"""Outcome of one test.

``fail``: ran to the end with a wrong value or output; ``error``: raised; ``timeout``: CPU limit (or the
wall-clock backstop); ``memory``: memory limit; ``output_limit``: printed too much; ``crashed``: the
process died without reporting (a signal, ``os._exit``); ``skipped``: not run because an earlier test
timed out, or (when only the verdict was asked for) failed.
"""

IsolationLevel = Literal["bwrap-uid", "bwrap", "landlock-uid", "landlock", "none", "fake"]
"""How strongly candidate code was isolated.

``bwrap-uid``: bubblewrap namespaces and a private unprivileged uid per worker (process limits hold);
``bwrap``: bubblewrap namespaces under the caller's uid (process limits shared with that uid);
``landlock-uid``: no namespaces; Landlock, a seccomp filter and a private uid per worker (where root
may change uid: process limits hold); ``landlock``: the same under the caller's uid (a container's root
keeps uid 0, without any capability; see docs/design/sandbox.md);
``none``: no sandbox, only rlimits and process-group cleanup (unsafe for untrusted code);
``fake``: :class:`~refinelab.sandbox.FakeSandbox`, trusted test code run in the caller's own process.
"""

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class TestOutcome:
    """The result of one test."""

    verdict: Verdict
    """What happened."""
    message: str = ""
    """Short human-readable detail: assertion text, expected vs actual, exception message."""
    error_type: str | None = None
    """Exception class name, for ``error`` (and ``memory``)."""
    traceback: str | None = None
    """Traceback trimmed to the candidate's own lines."""
    expected: str | None = None
    """The expected value or output (``repr`` for values), for ``fail``."""
    actual: str | None = None
    """What the candidate produced, for ``fail``."""
    cpu_seconds: float | None = None
    """CPU time of the test, when measured (stdio tests)."""
    limit_seconds: float | None = None
    """The CPU limit the test had, recorded for a ``timeout`` (limits may differ from test to test)."""

    @property
    def passed(self) -> bool:
        """True for a pass."""
        return self.verdict == "pass"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict without empty fields."""
        data = {k: v for k, v in self.__dict__.items() if v not in (None, "")}
        data["verdict"] = self.verdict
        return data


PASSED = TestOutcome("pass")
"""A passing test's outcome when nothing was measured: one object for all of them, so that
:func:`outcomes_json` encodes it once per list however many tests passed."""


_VERDICT = attrgetter("verdict")


def outcomes_json(outcomes: Sequence[TestOutcome]) -> str:
    """``json.dumps([o.to_json() for o in outcomes])``, each distinct outcome object encoded once and each
    run of one object written at once (a HumanEval+ program's line holds hundreds of outcomes, nearly all
    :data:`PASSED` or one skip, in a few runs, found at C speed: a Python step per run, not per test)."""
    count = len(outcomes)
    starts = [*compress(range(1, count), map(is_not, islice(outcomes, 1, None), outcomes))]
    texts: dict[int, str] = {}
    parts = []
    for start, end in zip([0, *starts], [*starts, count]) if count else ():
        first = outcomes[start]
        text = texts.get(id(first))
        if text is None:
            text = texts[id(first)] = json.dumps(first.to_json())
        parts.append(text + f", {text}" * (end - start - 1))
    return f"[{', '.join(parts)}]"


@dataclass(frozen=True)
class RunResult:
    """All outcomes of running one program against a list of tests."""

    outcomes: tuple[TestOutcome, ...]
    """One outcome per test, in test order."""
    isolation: IsolationLevel
    """The isolation the run had."""
    output: str = field(default="", repr=False)
    """Tail of what function-mode code printed (stdio output is in each outcome's ``actual``)."""
    node: str | None = None
    """The cluster node the program ran on (its address and Ray node id, see
    :class:`~refinelab.sandbox.ClusterSandbox`); ``None``: on this machine."""
    schema_version: int = SCHEMA_VERSION
    """Version of this record's layout."""

    @property
    def passed(self) -> bool:
        """True when there was at least one test and every test passed."""
        return bool(self.outcomes) and self.pass_count == len(self.outcomes)

    @cached_property
    def pass_count(self) -> int:
        """Number of passing tests (counted at C speed, once: a HumanEval+ program has hundreds of outcomes,
        and a check asks for each program's count and verdict several times)."""
        return list(map(_VERDICT, self.outcomes)).count("pass")
