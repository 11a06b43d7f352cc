"""Sampling: n samples in one request where the server allows ``n``, else overlapping calls;
sample-ordered trajectories; budgets never overspent."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from refinelab.errors import NotSupported
from refinelab.models import GenerateConfig, Message, Model, Reply, Usage
from refinelab.problems import CallTest, Problem
from refinelab.sandbox import WorkerPool
from refinelab.strategies import Budget, Env, Trajectory, sampling

SQUARE = Problem(
    id="sq",
    prompt='def sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(CallTest("sq(2)", 4),),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)


class OverlapBackend:
    """Answers the k-th request to arrive with programs tagged k (and the choice's number); later arrivals
    finish first, and it records how many requests were in flight at once and the ``n`` of each. Refuses
    ``n`` > 1 unless ``accept_n``, as servers without ``n`` do."""

    endpoint = "overlap://test"
    model = "overlap:test"

    def __init__(self, total: int, *, accept_n: bool = False) -> None:
        self.total = total
        self.accept_n = accept_n
        self.arrived = 0
        self.in_flight = 0
        self.peak = 0
        self.finished: list[int] = []
        self.sizes: list[int] = []

    async def complete(self, messages: Sequence[Message], config: GenerateConfig, n: int) -> list[Reply]:
        if n > 1 and not self.accept_n:
            raise NotSupported("n")
        self.sizes.append(n)
        mine = self.arrived
        self.arrived += 1
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        for _ in range((self.total - mine) * 20):  # yield to the others; the last to arrive finishes first
            await asyncio.sleep(0)
        self.in_flight -= 1
        self.finished.append(mine)
        texts = [f"```python\ndef sq(x):\n    return x * x  # arrival {mine} choice {i}\n```" for i in range(n)]
        return [Reply(text, Usage(10, 10), "stop") for text in texts]


def run(backend: OverlapBackend, n: int, budget: Budget | None = None) -> Trajectory:
    async def main() -> Trajectory:
        async with WorkerPool() as pool:
            return await sampling(SQUARE, Env(Model(backend), pool, budget=budget), n=n)

    return asyncio.run(main())


def test_samples_are_requested_concurrently_and_kept_in_sample_order() -> None:
    backend = OverlapBackend(4)
    trajectory = run(backend, 4)
    assert backend.peak == 4  # all four requests were in flight at once
    assert backend.finished[0] != 0  # replies came back out of order ...
    arrivals = [a.response.split("arrival ")[1][0] for a in trajectory.attempts]
    assert arrivals == ["0", "1", "2", "3"]  # ... yet the trajectory is in sample order
    assert [a.index for a in trajectory.attempts] == [0, 1, 2, 3]
    assert trajectory.stop_reason == "sampled" and trajectory.final == 0
    assert all(a.visible is not None and a.visible.passed for a in trajectory.attempts)


def test_a_call_budget_reserves_calls_so_concurrency_cannot_overspend() -> None:
    backend = OverlapBackend(5)
    trajectory = run(backend, 5, Budget(max_calls=3))
    assert backend.arrived == 3 and backend.peak == 3
    assert [a.index for a in trajectory.attempts] == [0, 1, 2]
    assert trajectory.stop_reason == "budget" and trajectory.budget_note == "max_calls=3"


def test_a_token_budget_checks_each_call_against_everything_spent_before_it() -> None:
    backend = OverlapBackend(5)
    trajectory = run(backend, 5, Budget(max_tokens=35))  # 20 tokens a call: a third call would start at 40
    assert backend.arrived == 2 and backend.peak == 1  # checked one at a time, nothing spent past the limit
    assert len(trajectory.attempts) == 2 and trajectory.budget_note == "max_tokens=35"


def test_samples_of_one_prompt_are_one_request_for_n_where_the_server_allows_it() -> None:
    backend = OverlapBackend(4, accept_n=True)
    trajectory = run(backend, 4)
    assert backend.sizes == [4]  # one request, not four
    assert [a.response.split("# ")[1].split("\n")[0] for a in trajectory.attempts] == [
        f"arrival 0 choice {i}" for i in range(4)
    ]
    assert [a.index for a in trajectory.attempts] == [0, 1, 2, 3]
    assert trajectory.usage == Usage(40, 40)  # each choice's usage, as the backend reported it


def test_a_call_budget_shrinks_one_request_for_n_to_the_calls_left() -> None:
    backend = OverlapBackend(5, accept_n=True)
    trajectory = run(backend, 5, Budget(max_calls=3))
    assert backend.sizes == [3]  # n calls reserved at once, the request shrunk to what the budget allows
    assert [a.index for a in trajectory.attempts] == [0, 1, 2]
    assert trajectory.stop_reason == "budget" and trajectory.budget_note == "max_calls=3"


def test_a_token_budget_draws_samples_one_call_at_a_time_even_where_n_is_allowed() -> None:
    backend = OverlapBackend(5, accept_n=True)
    trajectory = run(backend, 5, Budget(max_tokens=35))
    assert backend.sizes == [1, 1] and backend.peak == 1  # one reply can cross a token limit; n could not
    assert len(trajectory.attempts) == 2 and trajectory.budget_note == "max_tokens=35"
