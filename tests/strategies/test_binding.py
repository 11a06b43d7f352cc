"""Strategy arguments are checked against the strategy function's own signature when a spec is bound,
before any model call: wrong types and out-of-range values are one-line user errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Literal

import pytest
from annotated_types import Interval

from refinelab.cli import main
from refinelab.errors import UserError
from refinelab.experiment import load_spec
from refinelab.models import GenerateConfig
from refinelab.problems import Problem
from refinelab.strategies import STRATEGIES, Budget, Env, StrategySpec, Trajectory, strategy


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sampling(n=0)", "strategy 'sampling': n=0: must be at least 1"),
        ("sampling(n=abc)", "strategy 'sampling': n=abc: must be an integer"),
        ("sampling(n=2.5)", "strategy 'sampling': n=2.5: must be an integer"),
        ("sampling(n=true)", "strategy 'sampling': n=True: must be an integer"),
        ("self-refine(max_iters=-1)", "strategy 'self-refine': max_iters=-1: must be at least 0"),
        ("self-redraft(max_iters=-2)", "strategy 'self-redraft': max_iters=-2: must be at least 0"),
        ("exec-refine(max_iters=x)", "strategy 'exec-refine': max_iters=x: must be an integer"),
        ("exec-refine(feedback_format=xml)", "feedback_format=xml: must be one of raw, diff, summary"),
        ("exec-refine(memory=all)", "memory=all: must be one of full, last, compressed"),
        ("self-refine(structured=maybe)", "structured=maybe: must be true or false"),
        ("single-pass(temperature=-0.5)", "temperature=-0.5: must be at least 0"),
        ("single-pass(top_p=1.5)", "top_p=1.5: must be at most 1"),
        ("single-pass(max_tokens=0)", "max_tokens=0: must be at least 1"),
        ("single-pass(seed=abc)", "seed=abc: must be an integer"),
    ],
)
def test_bad_arguments_are_user_errors_at_binding(text: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        StrategySpec.parse(text).bind()
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "text",
    ["sampling(n=1)", "self-refine(max_iters=0)", "exec-refine(max_iters=2, feedback_format=diff, memory=last)",
     "sampling(n=4, temperature=0.8, top_p=1, max_tokens=512, seed=7)", "self-refine(structured=false)"],
)  # fmt: skip
def test_good_arguments_bind(text: str) -> None:
    StrategySpec.parse(text).bind()


@pytest.fixture
def registered() -> Iterator[str]:
    @strategy("test-vote")
    async def vote(
        problem: Problem,
        env: Env,
        *,
        voters: Annotated[int, Interval(ge=3, le=9)] = 5,
        rule: Literal["majority", "unanimous"] = "majority",
    ) -> Trajectory:
        raise AssertionError("never run here")

    yield "test-vote"
    del STRATEGIES["test-vote"]


def test_a_new_strategy_is_checked_from_its_signature_alone(registered: str) -> None:
    StrategySpec.parse(f"{registered}(voters=7, rule=unanimous)").bind()
    with pytest.raises(UserError, match="voters=11: must be at most 9"):
        StrategySpec.parse(f"{registered}(voters=11)").bind()
    with pytest.raises(UserError, match="voters=1: must be at least 3"):
        StrategySpec.parse(f"{registered}(voters=1)").bind()
    with pytest.raises(UserError, match="rule=any: must be one of majority, unanimous"):
        StrategySpec.parse(f"{registered}(rule=any)").bind()


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ({"max_calls": 0}, "budget max_calls=0: must be at least 1"),
        ({"max_tokens": -5}, "budget max_tokens=-5: must be at least 1"),
        ({"max_cost_usd": 0.0}, "budget max_cost_usd=0.0: must be greater than 0"),
        ({"max_calls": "3"}, "budget max_calls='3': must be an integer"),
    ],
)
def test_bad_budgets_are_user_errors(budget: dict[str, object], message: str) -> None:
    with pytest.raises(UserError, match=message):
        Budget(**budget)  # type: ignore[arg-type]


SPEC = """\
actors = ["vllm:m"]
strategies = ["single-pass", "sampling(n=0)"]

[[benchmarks]]
name = "jsonl"
data = "p.jsonl"
"""


def test_a_spec_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(SPEC, encoding="utf-8")
    with pytest.raises(UserError, match=r"spec.toml:2: field 'strategies': strategy 'sampling': n=0: must be at"):
        load_spec(path)
    path.write_text(SPEC.replace("sampling(n=0)", "sampling") + "\n[budget]\nmax_cost_usd = -1\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"spec.toml:9: field 'budget.max_cost_usd': must be a positive number"):
        load_spec(path)


def test_the_run_command_refuses_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "--benchmark", "jsonl", "--data", str(tmp_path / "p.jsonl"), "--model", "m", "--base-url"]
    args += ["http://127.0.0.1:9/v1", "--strategy", "self-refine(max_iters=-1)", "--store", str(tmp_path / "s.sqlite")]
    assert main(args, {}) == 2
    err = capsys.readouterr().err
    assert err == "refinelab: error: strategy 'self-refine': max_iters=-1: must be at least 0\n"
    assert not (tmp_path / "s.sqlite").exists()


def test_configuration_keys_without_prompt_files_are_unchanged() -> None:
    from refinelab.experiment import Configuration

    # keys computed by the code before binding (commit 321781f): stores written then still resume
    assert Configuration(StrategySpec("self-refine", {"max_iters": 2}), "m", "small").key == "a5f63f4d78"
    assert Configuration(StrategySpec("sampling", {"n": 3, "temperature": 0.8}), "vllm:x", None).key == "f892af7f2b"


def test_a_prompt_file_is_read_once_and_its_content_is_in_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from refinelab.experiment import BenchmarkChoice, ExperimentSpec
    from refinelab.strategies import Prompts

    path = tmp_path / "prompts.toml"
    path.write_text('actor_system = "Short programs."\n', encoding="utf-8")
    reads: list[str] = []
    original = Prompts.load.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Prompts, "load", classmethod(lambda cls, p: _record(reads, str(p)) or original(cls, p)))
    text = f"single-pass(prompts={path})"
    spec = ExperimentSpec((BenchmarkChoice("jsonl"),), (StrategySpec.parse(text),), ("m",))
    first = spec.configurations()[0]
    assert [c.key for c in spec.configurations()] == [first.key] and spec.run_id
    assert first.strategy.bind().arguments["prompts"] == Prompts.load(path)
    assert len(reads) == 2  # once for the configuration, once for the comparison just above
    path.write_text('actor_system = "Long programs."\n', encoding="utf-8")
    edited = ExperimentSpec((BenchmarkChoice("jsonl"),), (StrategySpec.parse(text),), ("m",))
    assert edited.configurations()[0].key != first.key  # same file name, new content: a new configuration


def test_a_spec_file_reads_its_prompt_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from refinelab.strategies import Prompts

    prompts = tmp_path / "prompts.toml"
    prompts.write_text('actor_system = "Short programs."\n', encoding="utf-8")
    reads: list[str] = []
    original = Prompts.load.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(Prompts, "load", classmethod(lambda cls, p: _record(reads, str(p)) or original(cls, p)))
    path = tmp_path / "spec.toml"
    path.write_text(SPEC.replace("sampling(n=0)", f"self-refine(prompts='{prompts}', actor=big)"), encoding="utf-8")
    spec = load_spec(path)  # checks every strategy as it reads it
    assert spec.run_id and [c.key for c in spec.configurations()] == [c.key for c in spec.configurations()]
    assert reads == [str(prompts)]


@pytest.fixture
def own_settings() -> Iterator[str]:
    @strategy("test-settings")
    async def own(problem: Problem, env: Env, *, temperature: float = 0.8, n: int = 2) -> Trajectory:
        raise AssertionError("never run here")

    yield "test-settings"
    del STRATEGIES["test-settings"]


def test_a_setting_binds_to_a_strategys_own_parameter_or_is_refused(own_settings: str) -> None:
    # a strategy with its own ``temperature`` gets it; one without ``config`` cannot take ``top_p``
    assert StrategySpec.parse(f"{own_settings}(temperature=0.5)").bind().arguments == {"temperature": 0.5}
    with pytest.raises(UserError, match="strategy 'test-settings' has no parameter 'top_p'"):
        StrategySpec.parse(f"{own_settings}(top_p=0.9)").bind()


def test_critic_on_a_strategy_without_a_critic_is_a_user_error() -> None:
    with pytest.raises(UserError, match="strategy 'exec-refine' asks no critic: critic=small would not be used"):
        StrategySpec.parse("exec-refine(critic=small)").bind()
    StrategySpec.parse("self-refine(critic=small)").bind()
    with pytest.raises(UserError, match="actor=3: must be a model string"):
        StrategySpec.parse("single-pass(actor=3)").bind()


def test_actor_in_a_spec_chooses_the_actor() -> None:
    from refinelab.experiment import BenchmarkChoice, ExperimentSpec

    strategies = (StrategySpec.parse("single-pass"), StrategySpec.parse("self-refine(actor=big, critic=small)"))
    spec = ExperimentSpec((BenchmarkChoice("jsonl"),), strategies, ("a", "b"))
    found = [(c.strategy.name, c.actor, c.critic) for c in spec.configurations()]
    assert found == [("single-pass", "a", None), ("single-pass", "b", None), ("self-refine", "big", "small")]


def test_trajectories_record_every_argument_from_the_binding(registered: str) -> None:
    import asyncio

    from refinelab.models import ScriptedModel

    @strategy("test-record")
    async def record(problem: Problem, env: Env, *, rounds: int = 2, tone: str = "plain") -> Trajectory:
        return Trajectory(problem.id, "anything", {}, (), None, "single_pass")

    try:
        problem = Problem(id="p", prompt="", kind="function", visible_tests=(), hidden_tests=(), entry_point="f")
        env = Env(ScriptedModel([]), None)  # type: ignore[arg-type]
        bound = StrategySpec.parse("test-record(tone=terse)").bind()
        trajectory = asyncio.run(bound.run(problem, env))
        assert (trajectory.strategy, trajectory.params) == ("test-record", {"rounds": 2, "tone": "terse"})
        assert bound.recorded == trajectory.params
        direct = asyncio.run(record(problem, env, rounds=5))
        assert direct.params == {"rounds": 5, "tone": "plain"}
    finally:
        del STRATEGIES["test-record"]


def test_every_strategy_module_is_imported_so_it_registers() -> None:
    import sys

    import refinelab.strategies

    folder = Path(refinelab.strategies.__file__).parent
    defining = [p.stem for p in folder.glob("*.py") if "\n@strategy(" in p.read_text(encoding="utf-8")]
    assert defining, "no strategy module found"
    assert [m for m in defining if f"refinelab.strategies.{m}" not in sys.modules] == []
    assert {"single-pass", "exec-refine", "sampling", "self-refine", "self-redraft"} <= set(STRATEGIES)


def test_settings_change_only_what_they_name_in_the_strategys_own_config() -> None:
    # sampling's own config is temperature 0.2, top_p 0.95: a new temperature keeps its top_p
    config = StrategySpec.parse("sampling(temperature=1.0, max_tokens=64)").bind().arguments["config"]
    assert config == GenerateConfig(temperature=1.0, top_p=0.95, max_tokens=64)
    assert StrategySpec.parse("single-pass(seed=3)").bind().arguments["config"] == GenerateConfig(
        temperature=0.0, seed=3
    )


def test_one_registry_record_per_strategy_says_everything_the_registry_knows() -> None:
    from refinelab.strategies import STRATEGIES, RegisteredStrategy, self_refine

    assert all(isinstance(entry, RegisteredStrategy) and entry.name == name for name, entry in STRATEGIES.items())
    assert STRATEGIES["self-refine"].function is self_refine
    assert {name for name, entry in STRATEGIES.items() if entry.uses_critic} == {
        "self-refine",
        "self-redraft",
        "verified",
    }
    spec = StrategySpec.parse("self-refine(max_iters=2, critic=small)")
    assert spec.uses_critic and spec.bind() is spec.bind() is spec.without_models().bind()


def _record(reads: list[str], path: str) -> bool:
    """Note a read (False, so ``_record(...) or original(...)`` goes on to the real read)."""
    reads.append(path)
    return False
