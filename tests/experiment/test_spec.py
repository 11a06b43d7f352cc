"""Experiment specs: TOML validated with located errors; configurations; stable run ids."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from refinelab.errors import UserError
from refinelab.experiment import load_spec

SPEC = """\
name = "asym"
actors = ["vllm:big"]
critics = ["same", "vllm:small"]
strategies = ["single-pass", "self-refine(max_iters=3)", "exec-refine(feedback_format=diff)"]
repeats = 2

[[benchmarks]]
name = "jsonl"
data = "problems.jsonl"
limit = 5

[sandbox]
timeout = 6

[budget]
max_calls = 20
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_spec_expands_to_configurations(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    labels = [c.label for c in spec.configurations()]
    assert labels == [
        "single-pass · vllm:big",
        "self-refine(max_iters=3) · vllm:big / vllm:big",
        "self-refine(max_iters=3) · vllm:big / vllm:small",
        "exec-refine(feedback_format=diff) · vllm:big",
    ]
    assert spec.benchmarks[0].data == str(tmp_path / "problems.jsonl")  # relative to the spec file
    assert spec.sandbox.timeout == 6.0 and spec.budget.max_calls == 20 and spec.repeats == 2


def test_run_id_is_stable_and_ignores_what_does_not_change_results(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, SPEC))
    assert spec.run_id.startswith("asym-") and load_spec(tmp_path / "spec.toml").run_id == spec.run_id
    assert replace(spec, concurrency=1).run_id == spec.run_id
    assert replace(spec, repeats=3).run_id != spec.run_id


def test_a_stored_spec_reads_back_as_the_spec_it_was(tmp_path: Path) -> None:
    import json

    from refinelab.experiment import ExperimentSpec

    text = SPEC.replace('"exec-refine(feedback_format=diff)"', '"exec-refine(feedback_format=diff, temperature=0.5)"')
    text += '[models.endpoints."vllm:small"]\nprice = { input = 1.0, output = 2.0 }\ndeployment = "fp8"\n'
    spec = replace(load_spec(write(tmp_path, text)), concurrency=3, base_url="http://h:1/v1")
    again = ExperimentSpec.from_json(json.loads(json.dumps(spec.to_json())))  # as the store keeps it
    assert again == spec and again.run_id == spec.run_id
    assert [c.key for c in again.configurations()] == [c.key for c in spec.configurations()]


def test_a_critic_named_in_the_strategy_wins(tmp_path: Path) -> None:
    text = SPEC.replace('"self-refine(max_iters=3)"', '"self-refine(critic=ollama:tiny)"')
    critics = {c.critic for c in load_spec(write(tmp_path, text)).configurations() if c.strategy.name == "self-refine"}
    assert critics == {"ollama:tiny"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("repeats = 2", "repeats = 2\ncolour = 1"), r"spec.toml:6: field 'colour': unknown key"),
        (("limit = 5", "limit = 5\nlimt = 3"), r"spec.toml:11: field 'benchmarks\[0\].limt': unknown key"),
        (("limit = 5", "limit = 0"), r"spec.toml:10: field 'benchmarks\[0\].limit': must be an integer >= 1"),
        (("max_iters=3", "max_iter=3"), r"spec.toml:4: field 'strategies': strategy 'self-refine' has no parameter"),
        (('name = "jsonl"', 'name = "nope"'), r"spec.toml:8: field 'benchmarks\[0\].name': unknown benchmark 'nope'"),
        (("timeout = 6", "timeout = -1"), r"spec.toml:13: field 'sandbox.timeout': must be a positive number"),
        (('actors = ["vllm:big"]', "actors = []"), r"spec.toml:2: field 'actors': must be a non-empty list"),
    ],
)
def test_bad_specs_name_the_file_line_and_field(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    path = write(tmp_path, SPEC.replace(*change))
    with pytest.raises(UserError, match=message):
        load_spec(path)


def test_a_spec_without_benchmarks_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, SPEC.split("[[benchmarks]]")[0])
    with pytest.raises(UserError, match="add at least one \\[\\[benchmarks\\]\\]"):
        load_spec(path)


def test_selection_filters_by_date_and_samples_keeping_the_difficulty_mix() -> None:
    from refinelab.experiment import BenchmarkChoice, select
    from refinelab.problems import Problem, StdioTest

    def problem(i: int) -> Problem:
        metadata: dict[str, object] = {
            "difficulty": "easy" if i < 6 else "hard",
            "contest_date": f"2024-0{1 + i % 9}-15T00:00:00",
        }
        return Problem(id=f"p{i}", prompt="", kind="stdio", visible_tests=(), hidden_tests=(StdioTest("", ""),),
                       metadata=metadata)  # fmt: skip

    problems = [problem(i) for i in range(10)]
    picked = select(problems, BenchmarkChoice("jsonl", sample=5, seed=3))
    assert [p.metadata["difficulty"] for p in picked].count("easy") == 3 and len(picked) == 5  # 6:4 kept as 3:2
    assert picked == select(problems, BenchmarkChoice("jsonl", sample=5, seed=3))  # seeded
    assert picked != select(problems, BenchmarkChoice("jsonl", sample=5, seed=4))
    recent = select(problems, BenchmarkChoice("jsonl", after="2024-06-01"))
    assert [p.id for p in recent] == ["p5", "p6", "p7", "p8"]  # months 6 to 9 (p9 wraps to January)
    assert [p.id for p in select(problems, BenchmarkChoice("jsonl", problems=("p9", "p1"), limit=1))] == ["p1"]


def test_a_spec_s_workers_are_the_pool_s_size_as_the_settings_are(tmp_path: Path) -> None:
    """``[sandbox] workers`` sizes the pool as ``$REFINELAB_WORKERS`` and ``workers`` in ``refinelab.toml`` do,
    more than the cores included (it was cut to the cores, silently, while the settings were not)."""
    from refinelab.experiment import sandbox_settings
    from refinelab.sandbox import default_workers

    many = default_workers() + 2
    spec = load_spec(write(tmp_path, SPEC.replace("timeout = 6", f"timeout = 6\nworkers = {many}")))
    assert sandbox_settings(spec).workers == many
    assert sandbox_settings(load_spec(write(tmp_path, SPEC))).workers is None  # the settings', else one per core


@pytest.mark.parametrize(
    "override",
    ['refuses = ["temperature"]', 'token_limit = "max_completion_tokens"', "thinking_budgets = { high = 1024 }",
     'effort_control = "not_taken"', 'profile = "openai-o-series"'],
)  # fmt: skip
def test_an_override_that_changes_what_is_sent_makes_another_run(tmp_path: Path, override: str) -> None:
    """A profile override changes the requests (a refused setting not sent, another thinking budget): the
    response cache keeps the two apart, and so must the run id, or a resume mixes units made under both."""
    entry = '\n[models.endpoints."vllm:small"]\nconcurrency = 4\n'
    plain = load_spec(write(tmp_path, SPEC + entry)).run_id
    assert plain == load_spec(write(tmp_path, SPEC)).run_id  # a setting that changes nothing sent: the same run
    assert load_spec(write(tmp_path, SPEC + entry + override + "\n")).run_id != plain


def test_a_spec_s_pool_wider_than_the_machine_holds_is_refused_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, SPEC.replace("timeout = 6", "timeout = 6\nworkers = 1000000"))
    with pytest.raises(UserError, match=r"spec.toml:\d+: field 'sandbox.workers': 1,000,000 sandbox workers would"):
        load_spec(path)
    assert load_spec(write(tmp_path, SPEC.replace("timeout = 6", "timeout = 6\nworkers = 64"))).sandbox.workers == 64
