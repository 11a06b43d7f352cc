"""Reasoning effort as an axis of an experiment: crossed with strategies, actors and critics; part of each
configuration's label, key and the run id; a critic's own effort; and a spec without efforts unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from refinelab.errors import UserError
from refinelab.experiment import ExperimentSpec, load_spec
from tests.experiment.test_spec import SPEC, write


def test_efforts_cross_every_strategy_actor_and_critic(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, 'reasoning_effort = ["low", "high"]\n' + SPEC))
    labels = [c.label for c in spec.configurations()]
    assert labels == [
        "single-pass · vllm:big · effort low",
        "single-pass · vllm:big · effort high",
        "self-refine(max_iters=3) · vllm:big / vllm:big · effort low",
        "self-refine(max_iters=3) · vllm:big / vllm:big · effort high",
        "self-refine(max_iters=3) · vllm:big / vllm:small · effort low",
        "self-refine(max_iters=3) · vllm:big / vllm:small · effort high",
        "exec-refine(feedback_format=diff) · vllm:big · effort low",
        "exec-refine(feedback_format=diff) · vllm:big · effort high",
    ]
    assert len({c.key for c in spec.configurations()}) == 8
    assert [(c.effort, c.critic_effort) for c in spec.configurations()][2:4] == [("low", "low"), ("high", "high")]


def test_a_spec_without_efforts_keeps_its_run_id_and_configuration_keys(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    assert "reasoning_effort" not in spec.to_json()
    for configuration in spec.configurations():  # the key as it was computed before efforts existed
        strategy = configuration.strategy
        old = [strategy.name, dict(strategy.params), configuration.actor, configuration.critic]
        assert configuration.key == hashlib.sha256(json.dumps(old).encode()).hexdigest()[:10]
    stored = ExperimentSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert stored.run_id == spec.run_id and stored.reasoning_effort == ()
    with_efforts = load_spec(write(tmp_path, 'reasoning_effort = ["low"]\n' + SPEC))
    assert with_efforts.run_id != spec.run_id
    assert ExperimentSpec.from_json(with_efforts.to_json()).run_id == with_efforts.run_id


def test_a_strategy_may_pin_its_effort_and_give_its_critic_another(tmp_path: Path) -> None:
    text = SPEC.replace(
        'strategies = ["single-pass", "self-refine(max_iters=3)", "exec-refine(feedback_format=diff)"]',
        'strategies = ["single-pass(effort=2048)", "self-refine(critic_effort=minimal)"]',
    ).replace('critics = ["same", "vllm:small"]', 'critics = ["same"]')
    spec = load_spec(write(tmp_path, 'reasoning_effort = ["low", "high"]\n' + text))
    assert [c.label for c in spec.configurations()] == [
        "single-pass · vllm:big · effort 2048",
        "self-refine · vllm:big / vllm:big · effort low / critic minimal",
        "self-refine · vllm:big / vllm:big · effort high / critic minimal",
    ]
    stored = [c.stored() for c in spec.configurations()]
    assert [(s.effort, s.critic_effort, s.label) for s in stored][1] == (
        "low",
        "minimal",
        spec.configurations()[1].label,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('reasoning_effort = ["loud"]', "field 'reasoning_effort': reasoning effort 'loud'"),
        ("reasoning_effort = []", "field 'reasoning_effort': must be a non-empty list"),
        ('reasoning_effort = "low"', "field 'reasoning_effort': must be a non-empty list"),
    ],
)
def test_a_bad_effort_is_located(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        load_spec(write(tmp_path, f"{line}\n{SPEC}"))


def test_a_bad_effort_in_a_strategy_or_on_a_strategy_without_a_critic_is_an_error(tmp_path: Path) -> None:
    for strategy, said in (("single-pass(effort=loud)", "effort: reasoning effort 'loud'"),
                           ("single-pass(critic_effort=low)", "asks no critic: critic_effort=low")):  # fmt: skip
        text = SPEC.replace('"single-pass", ', f'"{strategy}", ')
        with pytest.raises(UserError, match=said):
            load_spec(write(tmp_path, text))


def test_an_endpoint_whose_profile_is_overridden_is_another_run(tmp_path: Path) -> None:
    base = load_spec(write(tmp_path, 'reasoning_effort = ["low"]\n' + SPEC))
    budget = '[models.endpoints."vllm:big"]\nthinking_budgets = { low = 512 }\n'
    budgets = [
        load_spec(write(tmp_path, f'reasoning_effort = ["low"]\n{SPEC}{budget.replace("512", n)}'))
        for n in ("512", "256")
    ]
    control = load_spec(
        write(tmp_path, f'reasoning_effort = ["low"]\n{SPEC}[models.endpoints."vllm:big"]\nconcurrency = 3\n')
    )
    assert len({base.run_id, budgets[0].run_id, budgets[1].run_id}) == 3  # what is sent changed: new results
    assert control.run_id == base.run_id  # a setting that changes no request keeps the run
    assert ExperimentSpec.from_json(budgets[0].to_json()).run_id == budgets[0].run_id
