"""``codet``: n programs and m test-writing samples, drawn concurrently; every program runs on every test
and the answer comes from the best dual-agreement group (CodeT)."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Ge

from refinelab.models import GenerateConfig
from refinelab.problems import Problem
from refinelab.strategies._env import Env
from refinelab.strategies._execution import LIVECODEBENCH_CONFIG, AgreementChoice, _Request, sample_and_agree
from refinelab.strategies._prompts import DEFAULT_PROMPTS, Prompts
from refinelab.strategies._registry import strategy
from refinelab.strategies._tests import TestPlan, hidden_view
from refinelab.strategies._trajectory import Trajectory
from refinelab.verification import Score


@strategy("codet", selects=True, agrees=True)
async def codet(  # noqa: PLR0913 - flat knobs map one to one onto ``codet(key=value)`` specs
    problem: Problem,
    env: Env,
    *,
    n: Annotated[int, Ge(1)] = 8,
    m: Annotated[int, Ge(0)] = 2,
    tests_per_sample: Annotated[int, Ge(1)] = 10,
    test_limit: Annotated[int, Ge(1)] | None = None,
    use_visible: bool = True,
    hide_visible: bool = False,
    score: Score = "codet",
    config: GenerateConfig = LIVECODEBENCH_CONFIG,
    prompts: Prompts = DEFAULT_PROMPTS,
) -> Trajectory:
    """``n`` programs and ``m`` test-writing samples, concurrently; the tests are the distinct generated
    ones (at most ``test_limit`` per reply) plus the visible ones (``use_visible``, unless
    ``hide_visible``); every program runs on every test; the answer is the earliest program of the best
    dual-agreement group (``score``: ``codet`` or ``product``, see :func:`refinelab.verification.dual_agreement`).

    ``hide_visible`` is the execution-free setting: the visible tests are never shown nor run.
    """
    seen = hidden_view(problem, hide_visible)
    request = _Request(prompts.draft(seen), config, "sample", 0, prompts=prompts)
    plan = TestPlan(m, tests_per_sample, test_limit, config)
    visible = seen.visible_tests if use_visible else ()
    return await sample_and_agree(env, seen, request, n, plan, AgreementChoice("codet", visible, score))
