"""Dual agreement inside the strategies runs generated tests on their own short limit (CodeT's 0.1 s by
default, ``Env.agreement``), while the problem's own (visible) tests keep the sandbox's limit."""

from __future__ import annotations

from collections.abc import Sequence

from refinelab.models import GenerateConfig, Message
from refinelab.problems import CallTest, Problem
from refinelab.sandbox import WorkerPool
from refinelab.strategies import Env, Trajectory, codet
from refinelab.testing import FunctionModel
from refinelab.verification import agreement_limits
from tests.conftest import with_pool

SLOW = """def sq(x):
    import time
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
    return x * x
"""
PROBLEM = Problem(
    id="sq",
    prompt='def sq(x: int) -> int:\n    """Square x."""\n',
    kind="function",
    visible_tests=(CallTest("sq(2)", 4),),
    hidden_tests=(CallTest("sq(4)", 16),),
    entry_point="sq",
)


def answer(messages: Sequence[Message], config: GenerateConfig) -> str:
    if "test" in messages[0].content.lower():
        return "```python\nassert sq(3) == 9\nassert sq(5) == 25\n```"
    return f"```python\n{SLOW}```"


def choose(**env: object) -> Trajectory:
    async def body(pool: WorkerPool) -> Trajectory:
        return await codet(PROBLEM, Env(FunctionModel(answer), pool, **env), n=1, m=1)  # type: ignore[arg-type]

    return with_pool(body, workers=1)


def test_generated_tests_get_the_short_limit_and_visible_tests_the_sandboxs() -> None:
    decisions = {d.kind: d for d in choose().decisions}
    assert decisions["choose"].known_passed == 1  # the visible test (4 s): passed; the generated (0.1 s): not
    longer = {d.kind: d for d in choose(agreement=agreement_limits(2.0)).decisions}
    assert longer["choose"].known_passed == 3
