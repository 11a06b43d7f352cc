"""What a solve has done so far, for a progress display, and the strategy's environment that reports it.

The environment also keeps every program it ran with its result, so a cancelled solve can still return
the best attempt so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from refinelab.models import Completion, GenerateConfig, Message, Model, Usage
from refinelab.problems import Problem
from refinelab.sandbox import RunResult, Sandbox
from refinelab.strategies import DEFAULT_PROMPTS, Budget, Efforts, Env, Origin, Samples

Phase = Literal["generating", "testing", "writing tests", "done"]
"""What the solve is doing."""


@dataclass(frozen=True)
class SolveProgress:
    """A snapshot of a solve in progress."""

    phase: Phase
    """What it is doing now."""
    attempt: int
    """Programs run on the tests so far."""
    passing: int
    """Tests the latest program passes."""
    best: int
    """Most tests any program has passed."""
    total: int
    """Tests in all."""
    tokens: int
    """Tokens spent (cached replies included)."""
    seconds: float
    """Time since the solve started."""


@dataclass(frozen=True)
class Run:
    """A program the strategy ran on the tests, with the reply it came from."""

    code: str
    """The program."""
    result: RunResult
    """Its outcomes on the tests."""
    response: str
    """The model's reply the program was read from."""
    usage: Usage
    """Tokens spent since the program before it."""
    origin: Origin = "draft"
    """What the request was: a draft, one of several samples, or a refinement (told from its messages)."""


class WatchedEnv(Env):
    """An :class:`Env` that records every program run and reports progress after each call."""

    def __init__(
        self,
        actor: Model,
        sandbox: Sandbox,
        *,
        budget: Budget,
        on_progress: Callable[[SolveProgress], None] | None = None,
        complete: Callable[[str], str | None] = lambda reply: None,
        efforts: Efforts | None = None,
    ) -> None:
        super().__init__(actor, sandbox, budget=budget)
        self.efforts = efforts or Efforts()
        self.on_progress = on_progress
        self.complete = complete
        """Turns a reply that is only a function's body into the whole program (``None``: leave it)."""
        self.started = time.monotonic()
        self.runs: list[Run] = []
        self.total = 0
        self._replies: list[tuple[str, Origin]] = []
        self._usage_before = Usage()

    async def generate(
        self, role: Literal["actor", "critic"], messages: Sequence[Message], config: GenerateConfig, *, sample: int = 0
    ) -> Completion:
        """Generate, then report."""
        self.report("generating")
        completion = await super().generate(role, messages, config, sample=sample)
        completion = self._received(role, messages, completion, sample)
        self.report("testing")
        return completion

    async def generate_n(
        self,
        role: Literal["actor", "critic"],
        messages: Sequence[Message],
        config: GenerateConfig,
        *,
        n: int,
        first_sample: int = 0,
    ) -> Samples:
        """Generate several samples of one request, then report."""
        self.report("generating")
        drawn = await super().generate_n(role, messages, config, n=n, first_sample=first_sample)
        self.report("testing")
        completions = (self._received(role, messages, c, first_sample + i) for i, c in enumerate(drawn.completions))
        return replace(drawn, completions=tuple(completions))

    def _received(
        self, role: Literal["actor", "critic"], messages: Sequence[Message], completion: Completion, sample: int
    ) -> Completion:
        """An actor's reply made a whole program where it is only a body, and kept (with its origin)."""
        if role != "actor":
            return completion
        program = self.complete(completion.text)
        if program is not None:
            completion = replace(completion, text=f"```python\n{program}```\n")
        self._replies.append((completion.text, _origin(messages, sample)))
        return completion

    async def execute(self, code: str, problem: Problem) -> RunResult:
        """Run the program on the tests, keep it, and report."""
        result = await super().execute(code, problem)
        self.total = len(result.outcomes)
        spent, before = self.spent.usage, self._usage_before
        usage = Usage(spent.prompt_tokens - before.prompt_tokens, spent.completion_tokens - before.completion_tokens)
        self._usage_before = spent
        reply, origin = self._reply_of(code)
        self.runs.append(Run(code, result, reply, usage, origin))
        self.report("generating")
        return result

    def _reply_of(self, code: str) -> tuple[str, Origin]:
        """The latest actor reply holding the program's last line (samples may arrive out of order)."""
        lines = [line for line in code.splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        return next((found for found in reversed(self._replies) if last in found[0]), ("", "draft"))

    def best(self) -> Run | None:
        """The program that passed the most tests (the latest of equals), if any ran."""
        if not self.runs:
            return None
        most = max(run.result.pass_count for run in self.runs)
        return [run for run in self.runs if run.result.pass_count == most][-1]

    def report(self, phase: Phase) -> None:
        """Tell the display where things stand."""
        if self.on_progress is None:
            return
        latest = self.runs[-1].result.pass_count if self.runs else 0
        best = self.best()
        self.on_progress(
            SolveProgress(
                phase=phase,
                attempt=len(self.runs),
                passing=latest,
                best=0 if best is None else best.result.pass_count,
                total=self.total,
                tokens=self.spent.usage.total_tokens,
                seconds=time.monotonic() - self.started,
            )
        )


def _origin(messages: Sequence[Message], sample: int) -> Origin:
    """A refinement when the request carries an earlier answer or the refinement instructions; else a
    draft, or one of several samples."""
    refining = any(m.role == "assistant" for m in messages) or any(
        m.content == DEFAULT_PROMPTS.refine_system for m in messages
    )
    return "refine" if refining else "sample" if sample else "draft"
